#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes files so that an interrupted write leaves either the old file or the new one
/// (``AtomicFileWriter`` does it; this is the one-call form for content in memory).
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
    ) throws where Bytes.Element == UInt8 {
        let writer = try AtomicFileWriter(path: path, permissions: permissions)
        try writer.write(bytes)
        try writer.commit(overwrite: overwrite)
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
