import Foundation
import SignetAttestation
import SignetCore
import SignetTestSupport

/// A genuine App Attest sample from `Vectors/apple` (README.md there says where each comes
/// from): an attestation or an assertion, with the inputs it was made over.
struct AppAttestSample: Decodable, Sendable, CustomStringConvertible {
    let name: String
    let kind: String
    let file: String
    let appId: String
    let clientDataHash_hex: String
    let keyId_b64_as_given: String?
    let environment: String?
    let verificationTime: String?
    let counter: UInt32?
    let publicKey_spki_pem: String?
    let belongs_to_attestation: String?

    var description: String { name }

    /// Every sample of `kind` ("attestation" or "assertion"), by name.
    static func all(_ kind: String) -> [AppAttestSample] {
        guard let folder = try? TestVectors.url("apple", in: .module),
            let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path)
        else { return [] }
        return names.filter { $0.hasSuffix(".json") }.sorted().compactMap {
            try? TestVectors.decode(AppAttestSample.self, "apple/" + $0, in: .module)
        }.filter { $0.kind == kind }
    }

    func object() throws -> [UInt8] { Array(try TestVectors.data("apple/" + file, in: .module)) }
    func clientDataHash() throws -> [UInt8] { try TestVectors.bytes(hex: clientDataHash_hex) }
    func keyID() throws -> [UInt8]? {
        guard let text = keyId_b64_as_given else { return nil }
        guard let data = Data(base64Encoded: text) else { throw VectorError(description: "\(name): key id is not base64") }
        return Array(data)
    }

    func time() throws -> Date {
        guard let text = verificationTime else { throw VectorError(description: "\(name) has no verification time") }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = text.contains(".") ? [.withInternetDateTime, .withFractionalSeconds] : [.withInternetDateTime]
        guard let date = formatter.date(from: text) else { throw VectorError(description: "\(name): bad time \(text)") }
        return date
    }

    func policy(environments: Set<AppAttestEnvironment> = [.development, .production]) throws -> AppAttestPolicy {
        try AppAttestPolicy(appID: appId, environments: environments)
    }

    func publicKey() throws -> PublicKey {
        guard let pem = publicKey_spki_pem else { throw VectorError(description: "\(name) has no public key") }
        guard case .publicKey(let key) = try KeyDecoder.decode(Array(pem.utf8), source: name) else {
            throw VectorError(description: "\(name): the PEM is no public key")
        }
        return key
    }
}
