import Foundation
import SignetAttestation
import SignetTestSupport
import X509

/// A genuine (or deliberately broken) Android key attestation chain from `Vectors/android`
/// (README.md there says where each comes from), with the facts its key description carries.
struct AndroidSample: Decodable, Sendable, CustomStringConvertible {
    let name: String
    let category: String
    let file: String
    let time: String?
    let attestationVersion: Int?
    let securityLevel: String?
    let challengeHex: String?
    let packages: [String]
    let signerDigests: [String]
    let bootState: String?
    let deviceLocked: Bool?
    let osVersion: Int64?
    let osPatchLevel: Int64?

    var description: String { name }

    static let all: [AndroidSample] = (try? TestVectors.decode([AndroidSample].self, "android/samples.json", in: .module)) ?? []

    static func named(_ name: String) -> AndroidSample? { all.first { $0.name == name } }

    func chain() throws -> [Certificate] {
        try AndroidAttestationVerifier.readChain(Array(try TestVectors.data("android/" + file, in: .module)), source: file)
    }

    func at() throws -> Date {
        guard let time, let date = ISO8601DateFormatter().date(from: time) else { throw VectorError(description: "\(name) has no time") }
        return date
    }

    func challenge() throws -> [UInt8] { try TestVectors.bytes(hex: challengeHex ?? "") }

    /// A policy that accepts what this sample is (its challenge; any boot state), so that the
    /// facts can be compared; tests tighten one property at a time.
    func lenientPolicy() throws -> AndroidAttestationPolicy {
        AndroidAttestationPolicy(challenge: try challenge(), requiresVerifiedBoot: false, requiresLockedBootloader: false)
    }
}
