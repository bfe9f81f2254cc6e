import CBundleSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Extended attributes (`user.signet.*`) that extraction leaves on each file: its SHA-256 and
/// the SHA-256 of the manifest that listed it. Where the file system has none, the files under
/// `DEST/.signet/` alone carry the same facts.
enum ExtendedAttributes {
    static let fileDigest = "user.signet.sha256"
    static let manifestDigest = "user.signet.manifest-sha256"

    /// Sets a text attribute; false when the file system does not support them.
    @discardableResult
    static func set(_ name: String, _ value: String, on path: String) throws -> Bool {
        let bytes = Array(value.utf8)
        #if canImport(Darwin)
        let result = bytes.withUnsafeBytes { setxattr(path, name, $0.baseAddress, $0.count, 0, XATTR_NOFOLLOW) }
        #else
        let result = bytes.withUnsafeBytes { lsetxattr(path, name, $0.baseAddress, $0.count, 0) }
        #endif
        if result == 0 { return true }
        if errno == ENOTSUP || errno == EOPNOTSUPP { return false }
        throw BundleFiles.error(path)
    }

    /// Reads a text attribute (at most 256 bytes); nil when absent or unsupported.
    static func get(_ name: String, of path: String) -> String? {
        var buffer = [UInt8](repeating: 0, count: 256)
        #if canImport(Darwin)
        let count = buffer.withUnsafeMutableBytes { getxattr(path, name, $0.baseAddress, $0.count, 0, XATTR_NOFOLLOW) }
        #else
        let count = buffer.withUnsafeMutableBytes { lgetxattr(path, name, $0.baseAddress, $0.count) }
        #endif
        guard count >= 0 else { return nil }
        return String(decoding: buffer.prefix(count), as: UTF8.self)
    }
}
