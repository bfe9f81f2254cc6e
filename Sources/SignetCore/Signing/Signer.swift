/// Anything that can sign: a software key, a PKCS#11 token key, a Secure Enclave key.
///
/// Everything in Signet that signs (files, bundles, HTTP requests, CSRs) takes a `Signer`, so
/// where the private key lives is the caller's choice. Algorithms that hash first
/// (``SignatureAlgorithm/digest`` is non-nil) are signed through ``sign(digest:)`` so files
/// of any size stream; Ed25519 signs the whole message through ``sign(message:)``.
public protocol Signer: Sendable {
    /// The algorithm this signer produces.
    var algorithm: SignatureAlgorithm { get }
    /// The public key that verifies the signatures.
    var publicKey: PublicKey { get }
    /// Signs a digest computed with ``SignatureAlgorithm/digest``.
    func sign(digest: MessageDigest) async throws -> [UInt8]
    /// Signs a whole message.
    func sign(message: [UInt8]) async throws -> [UInt8]
}

extension Signer {
    /// Hash-then-sign for algorithms that hash first; implementations that can sign messages
    /// themselves (Ed25519) override it.
    public func sign(message: [UInt8]) async throws -> [UInt8] {
        guard let digestAlgorithm = algorithm.digest else {
            throw SignetCoreError.invalidArgument(detail: "\(algorithm.rawValue) signs whole messages; this signer cannot")
        }
        return try await sign(digest: digestAlgorithm.hash(message))
    }
}

/// Anything that can check signatures of one algorithm under one key.
public protocol Verifier: Sendable {
    /// The algorithm checked.
    var algorithm: SignatureAlgorithm { get }
    /// Checks a signature over a digest; throws ``SignetCoreError/signatureInvalid(detail:)``
    /// when it does not verify.
    func verify(signature: [UInt8], digest: MessageDigest) throws
    /// Checks a signature over a whole message.
    func verify(signature: [UInt8], message: [UInt8]) throws
}
