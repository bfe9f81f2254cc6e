import Crypto
import SignetAPI
import SignetAttestation
import SignetCore
import SignetHTTP

/// Verifies the request signatures of an App Attest device (`alg="apple-app-attest"`): the
/// `Signature` member is an App Attest assertion made with `clientDataHash` = SHA-256 of the
/// RFC 9421 signature base, by the device's attested key, for its app, with a counter above
/// the one stored (as remembered; the route makes it authoritative with a compare-and-set).
struct AppAttestSignatureCheck: HTTPSignatureVerifying {
    let verifier: AppAttestVerifier
    let publicKey: PublicKey
    let keyID: String
    let storedCounter: UInt32

    var algorithmName: String { DeviceAPI.appAttestAlgorithm }
    var algorithm: SignatureAlgorithm { .ecdsaP256SHA256 }

    /// The check for `device` of an app with App ID `appID`, its chain anchored in `roots`;
    /// nil when the recorded App ID or key cannot be used (then no signature verifies).
    init?(device: DeviceRecord, trust: DeviceAttestationTrust) {
        guard let appID = device.facts.appId,
              let policy = try? AppAttestPolicy(appID: appID, environments: Set(AppAttestEnvironment.allCases), roots: trust.appleRoots),
              case .publicKey(let key)? = try? KeyDecoder.decode(device.publicKeyDER, source: "the device key"),
              let counter = UInt32(exactly: device.counter)
        else { return nil }
        verifier = AppAttestVerifier(policy: policy)
        publicKey = key
        keyID = device.keyID
        storedCounter = counter
    }

    func verify(signature: [UInt8], base: [UInt8]) throws -> UInt64? {
        do {
            let assertion = try verifier.verifyAssertion(
                signature, clientDataHash: Array(SHA256.hash(data: base)), publicKey: publicKey, previousCounter: storedCounter)
            return UInt64(assertion.counter)
        } catch let error as AttestationError {
            if case .counterNotIncreasing(_, let previous, let found) = error {
                throw HTTPSignatureError.counterNotIncreasing(keyID: keyID, stored: UInt64(previous), found: UInt64(found))
            }
            throw error
        }
    }
}
