import Crypto
import SignetCore

/// An App Attest assertion that verified: the counter to store for the key.
public struct AppAttestAssertion: Sendable {
    /// The assertion's counter, greater than the previous one; store it for the next.
    public let counter: UInt32
    /// The authenticator data the signature covers.
    public let authenticatorData: AuthenticatorData
}

extension AppAttestVerifier {
    /// The largest assertion read (genuine ones are about 100 bytes).
    public static let maximumAssertionSize = 4 * 1024

    /// Verifies an assertion `{signature, authenticatorData}` made by the attested `publicKey`
    /// over `clientDataHash` (SHA-256 of the client data the app signed): the signature over
    /// SHA-256(authenticatorData ‖ clientDataHash), the App ID's hash, and a counter greater
    /// than `previousCounter`.
    /// - Throws: ``AttestationError``, naming the check that failed.
    public func verifyAssertion(
        _ assertion: [UInt8], clientDataHash: [UInt8], publicKey: PublicKey, previousCounter: UInt32, source: String = "the assertion"
    ) throws -> AppAttestAssertion {
        guard assertion.count <= Self.maximumAssertionSize else {
            throw AttestationError.malformed(source: source, detail: "\(assertion.count) bytes; an assertion is at most \(Self.maximumAssertionSize)")
        }
        let root: CBORValue
        do {
            root = try CBOR.decode(assertion, source: source)
        } catch let error as SignetCoreError {
            throw AttestationError(reading: error, source: source)
        }
        guard root.mapValue != nil else { throw AttestationError.malformed(source: source, detail: "the assertion is \(root.kind), not a map") }
        guard let original = root["authenticatorData"]?.bytesValue else {
            throw AttestationError.malformed(source: source, detail: "the assertion has no \"authenticatorData\" byte string")
        }
        let authData: AuthenticatorData
        do {
            // Apple sets the AT flag in assertions without credential data: read only the
            // fixed part, and whatever follows as bounded trailing bytes.
            authData = try AuthenticatorData(Self.withoutCredentialFlag(original), source: source + " (authenticatorData)",
                maximumTrailingBytes: policy.maximumTrailingAuthDataBytes)
        } catch let error as SignetCoreError {
            throw AttestationError(reading: error, source: source)
        }
        guard let signature = root["signature"]?.bytesValue else {
            throw AttestationError.malformed(source: source, detail: "the assertion has no \"signature\" byte string")
        }
        guard publicKey.kind == .p256 else {
            throw AttestationError.invalidArgument(detail: "an App Attest key is a P-256 key, not \(publicKey.kind)")
        }
        let nonce = Array(SHA256.hash(data: original + clientDataHash))
        do {
            try PublicKeyVerifier(key: publicKey, algorithm: .ecdsaP256SHA256).verify(signature: signature, message: nonce)
        } catch let error as SignetCoreError {
            throw AttestationError.signatureInvalid(source: source, detail: error.description)
        }
        guard ConstantTime.equals(authData.rpIDHash, policy.appIDHash) else {
            throw AttestationError.appIDMismatch(source: source, expected: policy.appID)
        }
        guard authData.signCount > previousCounter else {
            throw AttestationError.counterNotIncreasing(source: source, previous: previousCounter, found: authData.signCount)
        }
        return AppAttestAssertion(counter: authData.signCount, authenticatorData: authData)
    }

    /// `bytes` with the AT flag cleared, for reading an assertion's authenticator data.
    static func withoutCredentialFlag(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.count > 32 else { return bytes }
        var copy = bytes
        copy[32] &= ~AuthenticatorData.Flags.attestedCredentialData.rawValue
        return copy
    }
}
