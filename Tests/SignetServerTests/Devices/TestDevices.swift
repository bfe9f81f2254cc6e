import Crypto
import Foundation
import SignetAPI
import SignetAttestation
import SignetAttestationTestSupport
import SignetClient
import SignetCore
import SignetServer
import SignetTestSupport
import SwiftASN1
import Synchronization
import X509

/// An App Attest device on the test CA: attests a P-256 key for `appID` and signs requests
/// with assertions whose counter grows by one each time (or repeats, when told to).
final class TestAppAttestDevice: DeviceIdentity {
    let ca: AttestationTestCA
    let key = P256.Signing.PrivateKey()
    let appID: String
    let environment: AppAttestEnvironment
    private let state = Mutex<(counter: UInt32, keyID: String?, repeatNext: Bool)>((0, nil, false))

    init(ca: AttestationTestCA, appID: String = DeviceFixture.appID, environment: AppAttestEnvironment = .production) {
        self.ca = ca
        self.appID = appID
        self.environment = environment
    }

    var platform: DeviceAPI.Platform { .apple }
    /// The last counter used.
    var counter: UInt32 { state.withLock { $0.counter } }
    /// Makes the next assertion carry the last counter again (a replayed or cloned counter).
    func repeatCounterOnce() { state.withLock { $0.repeatNext = true } }

    func attest(challenge: [UInt8]) async throws -> DeviceAttestation {
        var sample = SyntheticAppAttest()
        sample.appID = appID
        sample.environment = environment
        sample.clientDataHash = Array(SHA256.hash(data: challenge))
        let made = try sample.make(ca: ca, key: key)
        return .apple(keyID: made.keyID, attestation: made.object)
    }

    func sign(signatureBase: [UInt8]) async throws -> [UInt8] {
        let counter = state.withLock { state -> UInt32 in
            if state.repeatNext { state.repeatNext = false } else { state.counter += 1 }
            return state.counter
        }
        return try SyntheticAppAttestAssertion.make(key: key, appID: appID, clientDataHash: Array(SHA256.hash(data: signatureBase)), counter: counter)
    }

    func enrolledKeyID() async throws -> String? { state.withLock { $0.keyID } }
    func setEnrolledKeyID(_ keyID: String?) async throws { state.withLock { $0.keyID = keyID } }
}

/// An Android device on the test CA: a P-256 key whose chain carries a synthetic key
/// description (package `com.example.app`, signer 32 × 0x11), signing with DER ECDSA as the
/// keystore does.
final class TestAndroidDevice: DeviceIdentity {
    let ca: AttestationTestCA
    let key = P256.Signing.PrivateKey()
    let level: Int
    let locked: Bool
    private let keyID = Mutex<String?>(nil)

    init(ca: AttestationTestCA, level: Int = 1, locked: Bool = true) {
        self.ca = ca
        self.level = level
        self.locked = locked
    }

    var platform: DeviceAPI.Platform { .android }

    func attest(challenge: [UInt8]) async throws -> DeviceAttestation {
        let chain = try SyntheticAndroidChain.make(ca: ca, key: .init(key.publicKey), challenge: challenge, level: level, locked: locked)
        return .android(chain: try chain.map(DeviceFixture.der))
    }

    func sign(signatureBase: [UInt8]) async throws -> [UInt8] {
        Array(try key.signature(for: signatureBase).derRepresentation)
    }

    func enrolledKeyID() async throws -> String? { keyID.withLock { $0 } }
    func setEnrolledKeyID(_ keyID: String?) async throws { self.keyID.withLock { $0 = keyID } }
}

/// The server side of the device tests: a test CA trusted for both platforms and the test
/// app's platform identities.
struct DeviceFixture: Sendable {
    static let appID = "ABCDE12345.com.example.app"
    let ca: AttestationTestCA

    init() throws {
        ca = try AttestationTestCA.make()
    }

    /// The test CA's root trusted for both platforms, and no revocations.
    func configure(_ configuration: inout ServerConfiguration) {
        configuration.attestation.appleRoots = [ca.root]
        configuration.attestation.androidRoots = [ca.root]
        configuration.attestation.androidRevocations = AndroidRevocationList()
    }

    /// The test app's settings: the test App ID and Android package, `required` as given.
    static func settings(required: Bool, environments: [String]? = nil) -> AdminAPI.AttestationSettings {
        AdminAPI.AttestationSettings(
            appleAppId: appID, appleEnvironments: environments, androidPackage: SyntheticAndroidChain.packageName,
            androidSigners: [SyntheticAndroidChain.signerDigest], required: required)
    }

    static func der(_ certificate: Certificate) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return serializer.serializedBytes
    }
}
