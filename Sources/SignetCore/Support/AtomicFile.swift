#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes files so that an interrupted write leaves either the old file or the new one.
///
/// The content goes to a temporary file in the destination's folder, is flushed with
/// `fsync`, and is then moved into place with `rename` (or `link`, when an existing file must
/// not be replaced, which makes the "does it exist?" check and the write one atomic step).
/// The folder is synced last so the new name itself survives a power loss.
public enum AtomicFile {
    /// File permissions for what we write.
    public enum Permissions: Sendable {
        /// 0600: private keys and other secrets.
        case privateToOwner
        /// 0644: public keys, signatures, anything else.
        case standard

        var mode: mode_t { self == .privateToOwner ? 0o600 : 0o644 }
    }

    /// Writes `bytes` to `path` atomically.
    /// - Parameters:
    ///   - overwrite: replace an existing file; when false an existing file is an error.
    public static func write<Bytes: Collection>(
        _ bytes: Bytes, to path: String, permissions: Permissions, overwrite: Bool
    ) throws(SignetCoreError) where Bytes.Element == UInt8 {
        let folder = parentFolder(of: path)
        let base = path.split(separator: "/").last.map(String.init) ?? path
        var template = Array("\(folder)/.\(base).signet-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw FileInput.ioError(path: path, errno: errno) }
        let temporary = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var committed = false
        defer {
            if !committed { unlink(temporary) }
        }
        do {
            defer { close(fd) }
            guard fchmod(fd, permissions.mode) == 0 else { throw FileInput.ioError(path: path, errno: errno) }
            let contiguous = Array(bytes)
            var written = 0
            while written < contiguous.count {
                let result = contiguous.withUnsafeBytes { posixWrite(fd, $0.baseAddress! + written, $0.count - written) }
                if result < 0 {
                    if errno == EINTR { continue }
                    throw FileInput.ioError(path: path, errno: errno)
                }
                written += result
            }
            guard fsync(fd) == 0 else { throw FileInput.ioError(path: path, errno: errno) }
        }
        if overwrite {
            var info = stat()
            if stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
                throw SignetCoreError.io(path: path, detail: "is a directory, not a file")
            }
            guard rename(temporary, path) == 0 else { throw FileInput.ioError(path: path, errno: errno) }
        } else {
            // link(2) fails with EEXIST if the destination exists, atomically.
            guard link(temporary, path) == 0 else {
                if errno == EEXIST { throw SignetCoreError.outputExists(path: path) }
                throw FileInput.ioError(path: path, errno: errno)
            }
            unlink(temporary)
        }
        committed = true
        syncFolder(folder)
    }

    /// Whether something exists at `path` (used to refuse early, before expensive work).
    public static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// The folder holding `path` (`.` for a bare name).
    public static func parentFolder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let folder = String(path[..<slash])
        return folder.isEmpty ? "/" : folder
    }

    /// Flushes a folder's entries, so that a new name in it survives a power loss.
    public static func syncFolder(_ folder: String) {
        let fd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }
}
