import Crypto

/// Hashes and verifies passwords as OWASP recommends: a slow, salted, memory-hard function
/// (scrypt N=2^17, r=8, p=1 by default; PBKDF2-HMAC-SHA256 with 600,000 iterations as the
/// alternative), a random 16-byte salt per hash, PHC string output, and constant-time
/// comparison.
///
/// ```swift
/// let hasher = PasswordHasher()
/// let stored = try hasher.hash(SecretBytes(Array("correct horse".utf8)))
/// // "$scrypt$ln=17,r=8,p=1$…$…"
/// if try hasher.verify(password, against: stored) {
///     if try hasher.needsRehash(stored) { /* hash again with the current policy and store it */ }
/// }
/// ```
///
/// With a `pepper` (a server-side secret kept outside the database), the password is first
/// HMAC-SHA256-ed under the pepper, so a stolen table of hashes cannot be attacked without
/// also stealing the pepper. Hashes made with a pepper verify only with the same pepper; the
/// PHC string does not record it.
public struct PasswordHasher: Sendable {
    /// The function and cost used for new hashes, and the minimum for ``needsRehash(_:)``.
    public var algorithm: PasswordHashAlgorithm
    /// An optional server secret mixed into every hash.
    public var pepper: SecretBytes?

    /// The longest password accepted, in bytes (UTF-8). Bounding it keeps PBKDF2's and
    /// scrypt's cost independent of what a client sends.
    public static let maximumPasswordLength = 1024
    /// Salt and hash lengths of new hashes.
    public static let saltLength = 16
    /// The length of the hash derived for new hashes, in bytes.
    public static let hashLength = 32

    /// A hasher that makes new hashes with `algorithm` (scrypt N=2^17, r=8, p=1 by default) and,
    /// when `pepper` is given, mixes it into every hash it makes and checks.
    public init(algorithm: PasswordHashAlgorithm = .defaultScrypt, pepper: SecretBytes? = nil) {
        self.algorithm = algorithm
        self.pepper = pepper
    }

    /// A new PHC string for `password`, with a fresh random salt.
    public func hash(_ password: SecretBytes) throws -> String {
        try Self.check(password)
        let salt = RandomBytes.make(Self.saltLength)
        let derived = try algorithm.derive(password: peppered(password), salt: salt, length: Self.hashLength)
        return PHCString(id: algorithm.phcIdentifier, parameters: algorithm.phcParameters, salt: salt, hash: derived.bytes)
            .description
    }

    /// Whether `password` matches the PHC string `stored`, compared in constant time.
    ///
    /// Returns false for a wrong password; throws for a stored hash that is malformed, uses an
    /// unknown function, or asks for a cost outside ``PasswordHashAlgorithm``'s bounds.
    public func verify(_ password: SecretBytes, against stored: String) throws -> Bool {
        try Self.check(password)
        let phc = try PHCString(parsing: stored)
        let storedAlgorithm = try PasswordHashAlgorithm(phc: phc)
        guard (8...64).contains(phc.salt.count) else {
            throw SignetCoreError.malformed(source: "password hash", detail: "salt of \(phc.salt.count) bytes (8 to 64 are accepted)")
        }
        guard (16...64).contains(phc.hash.count) else {
            throw SignetCoreError.malformed(source: "password hash", detail: "hash of \(phc.hash.count) bytes (16 to 64 are accepted)")
        }
        let derived = try storedAlgorithm.derive(password: peppered(password), salt: phc.salt, length: phc.hash.count)
        return derived.withUnsafeBytes { ConstantTime.equals($0, phc.hash) }
    }

    /// Whether `stored` was made with a weaker policy than ``algorithm`` (another function,
    /// a lower cost, or a shorter salt or hash), so the application should hash the password
    /// again, after a successful ``verify(_:against:)``, and store the new string.
    public func needsRehash(_ stored: String) throws -> Bool {
        let phc = try PHCString(parsing: stored)
        let storedAlgorithm = try PasswordHashAlgorithm(phc: phc)
        return !storedAlgorithm.isAtLeast(algorithm) || phc.salt.count < Self.saltLength || phc.hash.count < Self.hashLength
    }

    private static func check(_ password: SecretBytes) throws {
        guard !password.isEmpty else { throw SignetCoreError.invalidArgument(detail: "the password is empty") }
        guard password.count <= maximumPasswordLength else {
            throw SignetCoreError.invalidArgument(
                detail: "the password is longer than \(maximumPasswordLength) bytes")
        }
    }

    private func peppered(_ password: SecretBytes) -> SecretBytes {
        guard let pepper else { return password }
        let key = pepper.withUnsafeBytes { SymmetricKey(data: $0) }
        let mac = password.withUnsafeBytes { HMAC<SHA256>.authenticationCode(for: $0, using: key) }
        return mac.withUnsafeBytes { SecretBytes($0) }
    }
}
