import Foundation
import SignetAPI
import SignetCore
import SignetHTTP

/// What a device's attestation returned, for ``SignetClient/enrolDevice()``.
public enum DeviceAttestation: Sendable, Equatable {
    /// App Attest: the key id `DCAppAttestService.generateKey` returned and the object
    /// `attestKey(_:clientDataHash:)` returned for `clientDataHash` = SHA-256 of the challenge.
    case apple(keyID: [UInt8], attestation: [UInt8])
    /// Android: the DER certificates of `KeyStore.getCertificateChain`, leaf first, for a P-256
    /// key generated with `setAttestationChallenge(challenge)`.
    case android(chain: [[UInt8]])
}

/// The hardware key of one install of the app, proven genuine by attestation: the platform
/// half an app implements (App Attest on iOS, the Android keystore), which ``SignetClient``
/// enrols with ``SignetClient/enrolDevice()`` and then signs every request with.
///
/// docs/attestation.md gives the wire format and the ~20 lines an iOS app writes.
public protocol DeviceIdentity: Sendable {
    /// The platform whose attestation this makes.
    var platform: DeviceAPI.Platform { get }
    /// Makes the device key (or reuses one not yet enrolled) and attests it over `challenge`.
    func attest(challenge: [UInt8]) async throws -> DeviceAttestation
    /// Signs a request's RFC 9421 signature base with the device key. App Attest: the assertion
    /// `generateAssertion(keyID, clientDataHash: SHA-256(base))` returned. Android: the
    /// ECDSA P-256 SHA-256 signature over `base` (DER as the keystore gives it, or raw `r‖s`).
    func sign(signatureBase: [UInt8]) async throws -> [UInt8]
    /// The key id the server gave the enrolled key (kept by the platform half, beside the key),
    /// nil before enrolment or after a revocation.
    func enrolledKeyID() async throws -> String?
    /// Keeps `keyID` (nil forgets it).
    func setEnrolledKeyID(_ keyID: String?) async throws
}

/// A device identity as an HTTP signing key of its own scheme: App Attest's `apple-app-attest`,
/// Android's `ecdsa-p256-sha256` (the keystore's DER turned into RFC 9421's `r‖s`).
struct DeviceSigningKey: HTTPSignatureProducing {
    let device: any DeviceIdentity

    var algorithmName: String {
        device.platform == .apple ? DeviceAPI.appAttestAlgorithm : SignatureAlgorithm.ecdsaP256SHA256.rawValue
    }
    var algorithm: SignatureAlgorithm { .ecdsaP256SHA256 }

    func sign(base: [UInt8]) async throws -> [UInt8] {
        let signature = try await device.sign(signatureBase: base)
        guard device.platform == .android, signature.count != 64 else { return signature }
        return try SignatureAlgorithm.ecdsaP256SHA256.rawSignature(fromDER: signature)
    }
}

extension SignetClient {
    /// Enrols this install's device key: asks the server for a challenge, has the
    /// ``ClientConfiguration/device`` attest its key over it, sends the attestation, and keeps
    /// the key id the server gave; from then on every request is signed by the device key.
    /// Both requests are signed with the app key.
    ///
    /// - Throws: ``ClientError/invalidConfiguration(detail:)`` without a device identity,
    ///   ``ClientError/attestationRefused(detail:)`` when the server refused the attestation
    ///   (its detail names the check), ``ClientError/rateLimited(retryAfter:)``, and what any
    ///   request throws.
    @discardableResult
    public func enrolDevice() async throws -> DeviceAPI.Device {
        guard let device = configuration.device else {
            throw ClientError.invalidConfiguration(detail: "the client has no device identity to enrol")
        }
        let (head, body) = try await send(.post, APIOperation.createDeviceChallenge.path, json: Optional<String>.none, signer: .app)
        try check(head, body, expecting: 201)
        let challenge = try decode(DeviceAPI.Challenge.self, body)
        guard let bytes = Base64.decode(challenge.challenge), bytes.count == DeviceAPI.challengeBytes else {
            throw ClientError.malformedResponse(detail: "the challenge is not \(DeviceAPI.challengeBytes) bytes of base64")
        }
        let enrolment: DeviceAPI.Enrolment
        switch try await device.attest(challenge: bytes) {
        case .apple(let keyID, let attestation):
            enrolment = DeviceAPI.Enrolment(
                platform: .apple, challenge: challenge.challenge, appleKeyId: Base64.encode(keyID), attestation: Base64.encode(attestation))
        case .android(let chain):
            enrolment = DeviceAPI.Enrolment(platform: .android, challenge: challenge.challenge, chain: chain.map { Base64.encode($0) })
        }
        let (enrolHead, enrolBody) = try await send(.post, APIOperation.enrolDevice.path, json: enrolment, signer: .app)
        try check(enrolHead, enrolBody, expecting: 201)
        let enrolled = try decode(DeviceAPI.Device.self, enrolBody)
        do {
            try await device.setEnrolledKeyID(enrolled.keyId)
        } catch {
            throw ClientError.storage(detail: "the device's key id could not be kept: \(error)")
        }
        return enrolled
    }
}
