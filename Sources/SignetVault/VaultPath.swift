import SignetCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a vault file really is, checked before SQLite touches it.
enum VaultPath {
    /// The path to hand to SQLite: the folder with its symbolic links resolved (a linked home
    /// or `/tmp` is fine), the file name as given. The folder must exist and must not be
    /// writable by other users, who could otherwise plant the `-wal` and `-shm` files.
    static func resolve(_ path: String) throws -> String {
        let folder = AtomicFile.parentFolder(of: path)
        guard let base = path.split(separator: "/").last.map(String.init), base != ".", base != ".." else {
            throw VaultError.invalidArgument(detail: "'\(path)' does not name a file")
        }
        guard let real = realpath(folder, nil) else {
            throw VaultError.io(path: path, detail: "the folder \(folder) cannot be used: \(String(cString: strerror(errno)))")
        }
        let resolvedFolder = String(cString: real)
        free(real)
        var info = stat()
        guard stat(resolvedFolder, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            throw VaultError.io(path: path, detail: "\(folder) is not a folder")
        }
        if info.st_mode & S_IWOTH != 0 {
            throw VaultError.io(
                path: path, detail: "the folder \(folder) is writable by other users (keep the vault in a folder only you can write)")
        }
        return (resolvedFolder == "/" ? "" : resolvedFolder) + "/" + base
    }

    /// Checks what is at the resolved path: nothing (false), or a regular file (true).
    static func existingFile(_ resolved: String, shownAs path: String) throws -> Bool {
        var info = stat()
        guard lstat(resolved, &info) == 0 else {
            if errno == ENOENT { return false }
            throw VaultError.io(path: path, detail: String(cString: strerror(errno)))
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return true
        case S_IFLNK: throw VaultError.io(path: path, detail: "is a symbolic link; give the path of the vault itself")
        default: throw VaultError.io(path: path, detail: "is not a regular file")
        }
    }
}
