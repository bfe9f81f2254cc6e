import Crypto
import CryptoExtras

/// A password-hashing function and its cost parameters.
///
/// Only slow, salted key-derivation functions are offered: scrypt (the default, memory-hard)
/// and PBKDF2-HMAC-SHA256. Fast hashes such as salted SHA-256 or MD5 are never a password
/// hash: a GPU tries billions of them a second.
public enum PasswordHashAlgorithm: Sendable, Equatable, CustomStringConvertible {
    /// scrypt (RFC 7914) with N = 2^`logN`, block size `r` and parallelism `p`.
    case scrypt(logN: Int, r: Int, p: Int)
    /// PBKDF2 (RFC 8018) with HMAC-SHA256 and `iterations` rounds.
    case pbkdf2SHA256(iterations: Int)

    /// OWASP's recommended scrypt cost: N = 2^17, r = 8, p = 1 (128 MiB, a fraction of a second).
    public static let defaultScrypt = PasswordHashAlgorithm.scrypt(logN: 17, r: 8, p: 1)
    /// OWASP's recommended PBKDF2-HMAC-SHA256 cost: 600,000 iterations.
    public static let defaultPBKDF2 = PasswordHashAlgorithm.pbkdf2SHA256(iterations: 600_000)

    /// Bounds on what is computed, also for parameters read from a stored hash, so that a
    /// planted hash cannot make verification take minutes or gigabytes.
    public static let scryptLogNRange = 1...20
    /// The accepted scrypt block sizes `r`: 1 to 32.
    public static let scryptRRange = 1...32
    /// The accepted scrypt parallelism `p`: 1 to 16.
    public static let scryptPRange = 1...16
    /// 128 · r · N · p bytes (scrypt's memory, times p for its work) is kept within this
    /// bound: 256 MiB, twice the default, so that a planted hash cannot make each
    /// verification take a gigabyte.
    public static let scryptMaximumMemory = 256 << 20
    /// The accepted PBKDF2 iteration counts: 1 to 10,000,000.
    public static let pbkdf2IterationRange = 1...10_000_000

    /// The PHC identifier: `scrypt` or `pbkdf2-sha256`.
    public var phcIdentifier: String {
        switch self {
        case .scrypt: return "scrypt"
        case .pbkdf2SHA256: return "pbkdf2-sha256"
        }
    }

    /// The PHC parameters, in the order they are written.
    public var phcParameters: [PHCString.Parameter] {
        switch self {
        case .scrypt(let logN, let r, let p): return [.init("ln", "\(logN)"), .init("r", "\(r)"), .init("p", "\(p)")]
        case .pbkdf2SHA256(let iterations): return [.init("i", "\(iterations)")]
        }
    }

    /// The function and its cost for messages, such as `scrypt ln=17,r=8,p=1`.
    public var description: String {
        phcIdentifier + " " + phcParameters.map { "\($0.name)=\($0.value)" }.joined(separator: ",")
    }

    /// The algorithm and cost a PHC string names, with every parameter checked.
    public init(phc: PHCString) throws {
        if phc.version != nil, phc.id == "scrypt" || phc.id == "pbkdf2-sha256" {
            throw SignetCoreError.malformed(source: "password hash", detail: "\(phc.id) hashes have no version segment")
        }
        switch phc.id {
        case "scrypt":
            try phc.requireOnly(["ln", "r", "p"])
            self = .scrypt(
                logN: try phc.integer("ln", in: Self.scryptLogNRange),
                r: try phc.integer("r", in: Self.scryptRRange),
                p: try phc.integer("p", in: Self.scryptPRange))
        case "pbkdf2-sha256":
            try phc.requireOnly(["i"])
            self = .pbkdf2SHA256(iterations: try phc.integer("i", in: Self.pbkdf2IterationRange))
        default:
            throw SignetCoreError.unsupported(
                source: "password hash", detail: "the function '\(phc.id)' (supported: scrypt, pbkdf2-sha256)")
        }
        do {
            try validate()
        } catch {
            // A stored hash that asks for too much is bad input, not a bad command line.
            throw SignetCoreError.malformed(source: "password hash", detail: String(describing: error))
        }
    }

    /// Refuses parameters outside the bounds above.
    public func validate() throws {
        switch self {
        case .scrypt(let logN, let r, let p):
            guard Self.scryptLogNRange.contains(logN), Self.scryptRRange.contains(r), Self.scryptPRange.contains(p) else {
                throw SignetCoreError.invalidArgument(
                    detail: "scrypt parameters ln=\(logN),r=\(r),p=\(p) are outside ln 1–20, r 1–32, p 1–16")
            }
            guard 128 * r * p << logN <= Self.scryptMaximumMemory else {
                throw SignetCoreError.invalidArgument(detail: "scrypt parameters ln=\(logN),r=\(r),p=\(p) need more than 256 MiB of memory (128 · r · N · p)")
            }
        case .pbkdf2SHA256(let iterations):
            guard Self.pbkdf2IterationRange.contains(iterations) else {
                throw SignetCoreError.invalidArgument(detail: "PBKDF2 iterations must be from 1 to 10,000,000, not \(iterations)")
            }
        }
    }

    /// Whether this cost is at least `other`'s, for the same function.
    public func isAtLeast(_ other: PasswordHashAlgorithm) -> Bool {
        switch (self, other) {
        case (.scrypt(let n1, let r1, let p1), .scrypt(let n2, let r2, let p2)): return n1 >= n2 && r1 >= r2 && p1 >= p2
        case (.pbkdf2SHA256(let i1), .pbkdf2SHA256(let i2)): return i1 >= i2
        default: return false
        }
    }

    /// Derives `length` bytes from `password` and `salt`: the raw function, as RFC 7914 and
    /// RFC 8018 define it (the test vectors check exactly this).
    public func derive(password: SecretBytes, salt: [UInt8], length: Int) throws -> SecretBytes {
        try validate()
        guard (1...1024).contains(length) else {
            throw SignetCoreError.invalidArgument(detail: "derived key length must be from 1 to 1024 bytes, not \(length)")
        }
        do {
            let key: SymmetricKey = try password.withUnsafeBytes { passwordBytes in
                switch self {
                case .scrypt(let logN, let r, let p):
                    // BoringSSL wants a memory budget; give it what these parameters need plus slack.
                    let memory = 128 * r * (p + (1 << logN) + 2) + (1 << 20)
                    return try KDF.Scrypt.deriveKey(
                        from: passwordBytes, salt: salt, outputByteCount: length,
                        rounds: 1 << logN, blockSize: r, parallelism: p, maxMemory: memory)
                case .pbkdf2SHA256(let iterations):
                    return try KDF.Insecure.PBKDF2.deriveKey(
                        from: passwordBytes, salt: salt, using: .sha256, outputByteCount: length,
                        unsafeUncheckedRounds: iterations)
                }
            }
            return key.withUnsafeBytes { SecretBytes($0) }
        } catch {
            throw SignetCoreError.cryptoFailure(detail: "\(phcIdentifier) key derivation: \(error)")
        }
    }
}
