#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the server keeps on disk is its user's alone: files 0600, folders 0700, whatever the
/// umask. New files get those modes when they are made; files made by older servers, or by
/// SQLite under a wide umask, are narrowed at start-up.
package enum FileAccess {
    /// The mode of every file the server makes.
    static let privateFile: mode_t = 0o600
    /// The mode of every folder the server makes.
    static let privateFolder: mode_t = 0o700

    /// Narrows the file or folder at `path` to its owner (0600 or 0700) when it is this user's
    /// and allows more; a symbolic link, anything but a file or folder, and another user's entry
    /// are left as they are. False when nothing is there.
    @discardableResult
    static func restrict(_ path: String) throws -> Bool {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return false }
            throw ServerError.configuration(detail: "\(path): \(String(cString: strerror(errno)))")
        }
        let type = info.st_mode & S_IFMT
        guard type == S_IFREG || type == S_IFDIR, info.st_uid == geteuid() else { return true }
        let wanted = type == S_IFDIR ? privateFolder : privateFile
        if (info.st_mode & 0o7777) != wanted, chmod(path, wanted) != 0 {
            throw ServerError.configuration(detail: "\(path): cannot make it private to its owner (mode \(octal(info.st_mode))): \(String(cString: strerror(errno)))")
        }
        return true
    }

    /// Creates an empty file at `path` with mode 0600 unless something is there, then narrows
    /// what is there (``restrict(_:)``).
    static func createPrivateFile(_ path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, privateFile)
        if fd >= 0 {
            close(fd)
        } else if errno != EEXIST {
            throw ServerError.configuration(detail: "\(path): cannot create it: \(String(cString: strerror(errno)))")
        }
        try restrict(path)
    }

    /// `mode`'s permission bits as `chmod` takes them (`0644`).
    static func octal(_ mode: mode_t) -> String {
        let text = String(mode & 0o7777, radix: 8)
        return String(repeating: "0", count: max(0, 4 - text.count)) + text
    }

    /// Refuses a file holding a secret (a key file, a database URL with its password) that its
    /// group or others may read or write, or that belongs to another user than this process's
    /// (or root): whoever owns it could read or swap the secret. `what` says what it holds.
    package static func checkPrivate(_ path: String, holding what: String) throws {
        var info = stat()
        guard stat(path, &info) == 0 else { return }
        guard info.st_uid == geteuid() || info.st_uid == 0 else {
            throw ServerError.configuration(detail: "\(path): it belongs to another user (uid \(info.st_uid)) and holds \(what); give the server a file of its own")
        }
        guard (info.st_mode & 0o077) == 0 else {
            throw ServerError.configuration(detail: """
                \(path): its group or others may read it (mode \(octal(info.st_mode))), and it holds \(what); \
                make it private with `chmod 600 \(path)`
                """)
        }
    }
}
