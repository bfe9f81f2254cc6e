#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// A buffer for secret bytes (passphrases, HMAC keys, decrypted key material) that is zeroed
/// when the last reference goes away.
///
/// It is a class so that copies share one buffer and zeroing happens exactly once; its bytes
/// never change after creation, and the one thing it adds later (an HMAC key schedule made on
/// first use) is behind a lock, which makes it safe to share across tasks.
public final class SecretBytes: @unchecked Sendable {
    private let storage: UnsafeMutableRawBufferPointer

    /// Copies `bytes` into a new secret buffer.
    public init<Bytes: Collection>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 1)
        // Byte by byte, straight into the buffer: no temporary copy is left behind unzeroed.
        var index = 0
        for byte in bytes {
            storage[index] = byte
            index += 1
        }
        count = index
    }

    /// Takes the bytes of `array` and zeroes the array afterwards.
    public convenience init(consuming array: inout [UInt8]) {
        self.init(array)
        SecretBytes.zero(&array)
    }

    /// The HMAC key schedules made from these bytes (``MessageAuthenticator``), kept while the
    /// secret lives so that a key that checks every request is not scheduled again for each; they
    /// are released with the secret.
    let preparedMACs = Mutex(MessageAuthenticator.Prepared())

    /// The number of secret bytes.
    public let count: Int

    /// Whether there are no bytes.
    public var isEmpty: Bool { count == 0 }

    /// Gives `body` read access to the secret bytes. Do not let the pointer escape.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(rebasing: storage[0..<count]))
    }

    /// A copy as an array; the caller owns zeroing it.
    public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

    deinit {
        SecretBytes.zero(storage)
        storage.deallocate()
    }

    /// Overwrites memory with zeros in a way the optimiser cannot drop.
    public static func zero(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        #if canImport(Darwin)
        memset_s(base, buffer.count, 0, buffer.count)
        #else
        explicit_bzero(base, buffer.count)
        #endif
    }

    /// Zeroes an array in place.
    public static func zero(_ array: inout [UInt8]) {
        array.withUnsafeMutableBytes { zero($0) }
    }
}
