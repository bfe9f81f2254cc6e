import Crypto
import CryptoExtras

/// How a minisign secret key is encrypted: libsodium's `crypto_pwhash_scryptsalsa208sha256`
/// cost limits, as the key file stores them (`opslimit`, `memlimit`, both little-endian
/// 64-bit), and the scrypt parameters libsodium picks from them.
public struct MinisignKDFParameters: Sendable, Equatable {
    /// libsodium's operations limit.
    public let opsLimit: UInt64
    /// libsodium's memory limit, in bytes.
    public let memLimit: UInt64

    /// What minisign writes: libsodium's `OPSLIMIT_SENSITIVE` and `MEMLIMIT_SENSITIVE`,
    /// which give scrypt N = 2^20, r = 8, p = 1 (1 GiB of memory, a few seconds).
    public static let sensitive = MinisignKDFParameters(opsLimit: 33_554_432, memLimit: 1_073_741_824)

    /// The most memory (128 · r · N · p bytes) a key file may make us spend: what minisign's
    /// own keys need, so that a planted key cannot ask for more.
    public static let maximumMemory: UInt64 = 1 << 30

    /// Limits as libsodium takes them (and the key file stores them).
    public init(opsLimit: UInt64, memLimit: UInt64) {
        self.opsLimit = opsLimit
        self.memLimit = memLimit
    }

    /// The scrypt parameters libsodium derives from the limits (`pickparams` in
    /// `pwhash_scryptsalsa208sha256.c`, ported exactly).
    public var scrypt: (logN: Int, r: Int, p: Int) {
        let ops = max(opsLimit, 32768)
        let r: UInt64 = 8
        var logN: UInt64 = 1
        var p: UInt64
        if ops < memLimit / 32 {
            p = 1
            let maxN = ops / (r * 4)
            while logN < 63, (UInt64(1) << logN) <= maxN / 2 { logN += 1 }
        } else {
            let maxN = memLimit / (r * 128)
            while logN < 63, (UInt64(1) << logN) <= maxN / 2 { logN += 1 }
            let maxRP = min((ops / 4) / (UInt64(1) << logN), 0x3fff_ffff)
            p = UInt64(UInt32(maxRP)) / r
        }
        return (Int(logN), Int(r), Int(p))
    }

    /// Refuses limits that libsodium would refuse or that need more than
    /// ``maximumMemory``.
    func validate(source: String) throws {
        let (logN, r, p) = scrypt
        guard p >= 1 else {
            throw SignetCoreError.malformed(
                source: source, detail: "scrypt limits opslimit=\(opsLimit), memlimit=\(memLimit) give p = 0, which libsodium refuses")
        }
        // 128 · r · N · p ≤ 1 GiB, computed without overflow.
        guard logN <= 30, UInt64(128 * r) * UInt64(p) <= Self.maximumMemory >> UInt64(logN) else {
            throw SignetCoreError.unsupported(
                source: source,
                detail: "scrypt N=2^\(logN), r=\(r), p=\(p) (opslimit=\(opsLimit), memlimit=\(memLimit)) needs more than 1 GiB; minisign's own keys need 1 GiB")
        }
    }

    /// The `length`-byte key stream scrypt derives from `passphrase` and `salt`.
    func keyStream(passphrase: SecretBytes, salt: [UInt8], length: Int, source: String) throws -> SecretBytes {
        try validate(source: source)
        let (logN, r, p) = scrypt
        do {
            let key: SymmetricKey = try passphrase.withUnsafeBytes { bytes in
                try KDF.Scrypt.deriveKey(
                    from: bytes, salt: salt, outputByteCount: length, rounds: 1 << logN, blockSize: r, parallelism: p,
                    maxMemory: 128 * r * ((1 << logN) + p + 2) + (1 << 20))
            }
            return key.withUnsafeBytes { SecretBytes($0) }
        } catch {
            throw SignetCoreError.cryptoFailure(detail: "scrypt (N=2^\(logN), r=\(r), p=\(p)) for \(source): \(error)")
        }
    }
}
