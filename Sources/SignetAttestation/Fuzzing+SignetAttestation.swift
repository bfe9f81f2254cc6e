import SignetCore

/// Entry points for the libFuzzer targets (`SignetFuzzTargets`) into what the App Attest
/// verifier reads before any certificate chain is checked: the attestation object's structure
/// (``AppAttestVerifier/verifyAttestation(_:clientDataHash:keyID:at:source:)`` is async, and
/// its first step is this synchronous parser). Assertions need no entry point:
/// ``AppAttestVerifier/verifyAssertion(_:clientDataHash:publicKey:previousCounter:source:)``
/// is public and synchronous. Not API: `package`, for the fuzz targets and their replay tests
/// only.
package enum AttestationFuzzing {
    /// An attestation object as the verifier reads it, before its chain is verified.
    package struct ParsedAttestationObject: Sendable {
        /// How many certificates `x5c` holds (1 to ``maximumCertificates``).
        package let certificateCount: Int
        /// Apple's receipt.
        package let receipt: [UInt8]
        /// The authenticator data.
        package let authenticatorData: AuthenticatorData
        /// The nonce the leaf certificate carries, or why it cannot be read.
        package let certifiedNonce: Result<[UInt8], any Error>
        /// The environment the credential's AAGUID names; nil without a credential or for an
        /// unknown AAGUID.
        package let environment: AppAttestEnvironment?
    }

    /// The most certificates an attestation object's `x5c` may hold.
    package static var maximumCertificates: Int { AppAttestObject.maximumCertificates }

    /// Reads `bytes` as an App Attest attestation object, as the verifier does (bytes after the
    /// credential key accepted up to `maximumTrailingBytes`, the policy's default), then reads
    /// the nonce of its leaf certificate.
    /// - Throws: ``AttestationError``, as the verifier refuses the object.
    package static func attestationObject(_ bytes: [UInt8], maximumTrailingBytes: Int = 1024) throws -> ParsedAttestationObject {
        let source = "fuzz input"
        let object = try AppAttestObject(bytes, source: source, maximumTrailingBytes: maximumTrailingBytes)
        let nonce = Result { () throws -> [UInt8] in try AppAttestVerifier.certifiedNonce(object.certificates[0], source: source) }
        return ParsedAttestationObject(
            certificateCount: object.certificates.count, receipt: object.receipt, authenticatorData: object.authData, certifiedNonce: nonce,
            environment: object.authData.attestedCredential.flatMap { AppAttestEnvironment(aaguid: $0.aaguid) })
    }

    /// The facts of an Android key description extension's value, as the verifier reads them.
    package struct ParsedKeyDescription: Sendable {
        package let securityLevel: AndroidSecurityLevel
        package let challenge: [UInt8]
        package let application: AndroidAttestedApplication?
        package let rootOfTrust: AndroidRootOfTrust?
    }

    /// Reads `bytes` as an Android key description (the value of extension
    /// 1.3.6.1.4.1.11129.2.1.17) and the fields the verifier decides on.
    /// - Throws: whatever the DER reader refuses the bytes with.
    package static func keyDescription(_ bytes: [UInt8]) throws -> ParsedKeyDescription {
        let description = try KeyDescription(derEncoded: bytes[...])
        return ParsedKeyDescription(
            securityLevel: description.attestationSecurityLevel, challenge: description.challenge,
            application: try description.softwareEnforced.application() ?? description.hardwareEnforced.application(),
            rootOfTrust: try description.hardwareEnforced.rootOfTrust())
    }
}
