import Crypto
import Foundation
import SignetAPI
import SignetAttestation
import SignetCore
import X509

/// Enrols a device: checks the enrolment's fields, consumes its challenge, verifies its
/// attestation against the app's platform identities and the configured roots, and records
/// the attested key.
package struct DeviceEnroller: Sendable {
    let store: ServerStore
    let trust: DeviceAttestationTrust

    /// What an enrolment carries, its fields decoded and bounded.
    package enum Evidence {
        case apple(keyID: [UInt8], object: [UInt8])
        case android(chain: [Certificate])
    }

    /// Enrols a device for `app` (the app principal that signed the request).
    /// - Throws: ``ServerError/unprocessable(field:detail:)`` for a field that breaks a rule,
    ///   ``ServerError/challengeExpired(detail:)``, ``ServerError/attestationRefused(check:detail:)``,
    ///   ``ServerError/conflict(detail:)`` for a key enrolled already.
    func enrol(_ enrolment: DeviceAPI.Enrolment, app: Principal) async throws -> DeviceRecord {
        let settings = app.attestation
        let challenge = try Self.decode(enrolment.challenge, field: "challenge", limit: DeviceAPI.challengeBytes)
        guard challenge.count == DeviceAPI.challengeBytes else {
            throw ServerError.unprocessable(field: "challenge", detail: "must be the \(DeviceAPI.challengeBytes) bytes the server issued, in base64")
        }
        let evidence = try Self.evidence(enrolment, settings: settings, app: app.name)
        // One challenge, one verification: consumed before the costly part, so a failed
        // attestation cannot be retried on it.
        guard try await store.deviceChallenges.consume(hash: Self.challengeHash(challenge), app: app.name) else {
            throw ServerError.challengeExpired(
                detail: "the challenge is unknown, used, expired or another app's; ask POST /v1/devices/challenges for a new one")
        }
        let now = store.clock.now
        let device: DeviceRecord
        do {
            switch evidence {
            case .apple(let keyID, let object):
                device = try await verifyApple(object, keyID: keyID, challenge: challenge, settings: settings!, app: app.name, at: now)
            case .android(let chain):
                device = try verifyAndroid(chain, challenge: challenge, settings: settings!, app: app.name, at: now)
            }
        } catch let error as AttestationError {
            throw ServerError.attestationRefused(check: error.code.description, detail: Self.bounded(error.description))
        }
        try await store.devices.add(device)
        return device
    }

    private func verifyApple(
        _ object: [UInt8], keyID: [UInt8], challenge: [UInt8], settings: AdminAPI.AttestationSettings, app: String, at time: Date
    ) async throws -> DeviceRecord {
        let environments = Set((settings.appleEnvironments ?? ["production"]).compactMap(AppAttestEnvironment.init(rawValue:)))
        let policy = try AppAttestPolicy(appID: settings.appleAppId ?? "", environments: environments, roots: trust.appleRoots)
        let clientDataHash = Array(SHA256.hash(data: challenge))
        let attested = try await AppAttestVerifier(policy: policy)
            .verifyAttestation(object, clientDataHash: clientDataHash, keyID: keyID, at: time, source: "the attestation")
        return DeviceRecord(
            id: UUID().uuidString.lowercased(), keyID: attested.publicKey.fingerprint.description, app: app, platform: .apple,
            publicKeyDER: attested.publicKey.spkiDER, counter: Int64(attested.counter),
            facts: DeviceAPI.Facts(environment: attested.environment.rawValue, appId: attested.appID), receipt: attested.receipt,
            createdAt: Int64(time.timeIntervalSince1970.rounded(.down)))
    }

    private func verifyAndroid(
        _ chain: [Certificate], challenge: [UInt8], settings: AdminAPI.AttestationSettings, app: String, at time: Date
    ) throws -> DeviceRecord {
        let policy = AndroidAttestationPolicy(
            challenge: challenge, packageName: settings.androidPackage, signerDigests: (settings.androidSigners ?? []).compactMap(Hex.decode),
            minimumSecurityLevel: settings.androidMinimumSecurity == "strongbox" ? .strongBox : .trustedEnvironment,
            roots: trust.androidRoots, revocations: trust.androidRevocations)
        let attested = try AndroidAttestationVerifier(policy: policy).verify(chain: chain, at: time, source: "the chain")
        guard let p256 = P256.Signing.PublicKey(attested.publicKey),
              case .publicKey(let key)? = try? KeyDecoder.decode(Array(p256.derRepresentation), source: "the attested key")
        else {
            throw ServerError.unprocessable(field: "chain", detail: "the attested key must be an EC P-256 key (requests are signed with ecdsa-p256-sha256)")
        }
        let facts = DeviceAPI.Facts(
            // The package the policy matched (a shared user id attests several).
            packageName: settings.androidPackage, signerDigests: attested.application?.signatureDigests.map { Hex.encode($0) },
            securityLevel: attested.securityLevel == .strongBox ? "strongbox" : "tee",
            verifiedBootState: attested.rootOfTrust.map { Self.bootState($0.verifiedBootState) },
            deviceLocked: attested.rootOfTrust?.deviceLocked, osVersion: attested.osVersion.map(Int.init),
            osPatchLevel: attested.osPatchLevel.map(Int.init))
        return DeviceRecord(
            id: UUID().uuidString.lowercased(), keyID: key.fingerprint.description, app: app, platform: .android, publicKeyDER: key.spkiDER,
            facts: facts, createdAt: Int64(time.timeIntervalSince1970.rounded(.down)))
    }

    /// The enrolment's evidence for its platform, every field decoded and bounded; 422 naming
    /// the field otherwise (a platform the app has no identity for included).
    package static func evidence(_ enrolment: DeviceAPI.Enrolment, settings: AdminAPI.AttestationSettings?, app: String) throws -> Evidence {
        switch enrolment.platform {
        case .apple:
            guard settings?.appleAppId != nil else {
                throw ServerError.unprocessable(field: "platform", detail: "the app \(app) has no Apple App ID, so it takes no App Attest devices")
            }
            guard enrolment.chain == nil else { throw ServerError.unprocessable(field: "chain", detail: "is for platform android, not apple") }
            guard let keyIDText = enrolment.appleKeyId, let objectText = enrolment.attestation else {
                throw ServerError.unprocessable(field: enrolment.appleKeyId == nil ? "appleKeyId" : "attestation", detail: "is required for platform apple")
            }
            let keyID = try decode(keyIDText, field: "appleKeyId", limit: 32)
            guard keyID.count == 32 else { throw ServerError.unprocessable(field: "appleKeyId", detail: "must be the 32-byte key id App Attest gave, in base64") }
            let object = try decode(objectText, field: "attestation", limit: DeviceAPI.maximumAttestationBytes)
            return .apple(keyID: keyID, object: object)
        case .android:
            guard settings?.androidPackage != nil else {
                throw ServerError.unprocessable(field: "platform", detail: "the app \(app) has no Android package, so it takes no Android devices")
            }
            guard enrolment.appleKeyId == nil, enrolment.attestation == nil else {
                throw ServerError.unprocessable(field: enrolment.appleKeyId != nil ? "appleKeyId" : "attestation", detail: "is for platform apple, not android")
            }
            guard let texts = enrolment.chain, (1...DeviceAPI.maximumChainCertificates).contains(texts.count) else {
                throw ServerError.unprocessable(
                    field: "chain", detail: "must hold 1 to \(DeviceAPI.maximumChainCertificates) certificates, leaf first (it holds \(enrolment.chain?.count ?? 0))")
            }
            let chain = try texts.enumerated().map { index, text in
                let der = try decode(text, field: "chain[\(index)]", limit: DeviceAPI.maximumCertificateBytes)
                do {
                    return try Certificate(derEncoded: der)
                } catch {
                    throw ServerError.unprocessable(field: "chain[\(index)]", detail: "is not a DER X.509 certificate")
                }
            }
            return .android(chain: chain)
        }
    }

    /// Standard base64 of at most `limit` decoded bytes, not empty; 422 naming `field` otherwise.
    static func decode(_ text: String, field: String, limit: Int) throws -> [UInt8] {
        guard text.utf8.count <= (limit + 2) / 3 * 4 else {
            throw ServerError.unprocessable(field: field, detail: "is over the limit of \(limit) bytes")
        }
        guard let bytes = Base64.decode(text), !bytes.isEmpty else { throw ServerError.unprocessable(field: field, detail: "is not base64 (RFC 4648, with padding)") }
        return bytes
    }

    /// How a challenge is stored: the hex SHA-256 of its bytes.
    static func challengeHash(_ challenge: [UInt8]) -> String {
        Hex.encode(SHA256.hash(data: challenge))
    }

    static func bootState(_ state: AndroidVerifiedBootState) -> String {
        switch state {
        case .verified: return "verified"
        case .selfSigned: return "self-signed"
        case .unverified: return "unverified"
        case .failed: return "failed"
        }
    }

    /// A refusal's detail, kept short: a chain failure may print whole certificates.
    static func bounded(_ text: String) -> String {
        text.count <= 400 ? text : String(text.prefix(400)) + "…"
    }
}
