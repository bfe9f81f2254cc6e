import Crypto
import Foundation
import SignetCore
import SignetX509
import SwiftASN1
import X509

/// Pins, pin files and certificates for the pin set tests.
enum PinFixtures {
    /// Fixed pins for tests whose arguments are written before any key exists; `{A}`, `{B}`
    /// and `{C}` in a template stand for them, `{A64}` for `{A}`'s bare base64.
    static let pinA = KeyFingerprint(spkiDER: [1])
    static let pinB = KeyFingerprint(spkiDER: [2])
    static let pinC = KeyFingerprint(spkiDER: [3])

    /// The pin of a freshly generated P-256 key.
    static func newPin() throws -> KeyFingerprint {
        try PrivateKey.generate(.p256).publicKey.fingerprint
    }

    /// `text` with the placeholders replaced by the fixed pins.
    static func substitute(_ text: String) -> String {
        text.replacingOccurrences(of: "{A64}", with: Base64.encode(pinA.bytes))
            .replacingOccurrences(of: "{A}", with: pinA.description)
            .replacingOccurrences(of: "{B}", with: pinB.description)
            .replacingOccurrences(of: "{C}", with: pinC.description)
    }

    /// A version 1 pin file holding `hosts` (JSON objects, placeholders allowed).
    static func file(_ hosts: String...) -> String {
        #"{"version": 1, "hosts": ["# + hosts.joined(separator: ", ") + "]}"
    }

    /// A host entry that is valid on its own: `api.example.com` pinned to `{A}` and `{B}`.
    static let validHost = #"{"host": "api.example.com", "pins": ["{A}", "{B}"]}"#

    /// `validHost` with `members` (JSON text, placeholders allowed) added.
    static func host(adding members: String) -> String {
        #"{"host": "api.example.com", "pins": ["{A}", "{B}"], "# + members + "}"
    }

    /// A DER certificate for `subject` and `key`, signed by `issuerKey` under `issuer`.
    static func certificateDER(
        subject: String, key: P256.Signing.PrivateKey, issuer: String, issuerKey: P256.Signing.PrivateKey
    ) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(try certificate(subject: subject, key: key, issuer: issuer, issuerKey: issuerKey))
        return serializer.serializedBytes
    }

    /// A certificate for `subject` and `key`, signed by `issuerKey` under `issuer`.
    static func certificate(
        subject: String, key: P256.Signing.PrivateKey, issuer: String, issuerKey: P256.Signing.PrivateKey
    ) throws -> Certificate {
        try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: Date(timeIntervalSince1970: 1_700_000_000), notValidAfter: Date(timeIntervalSince1970: 1_900_000_000),
            issuer: try DistinguishedName { CommonName(issuer) }, subject: try DistinguishedName { CommonName(subject) },
            extensions: Certificate.Extensions(), issuerPrivateKey: Certificate.PrivateKey(issuerKey))
    }

    /// 2027-06-01T00:00:00Z.
    static let june2027 = Date(timeIntervalSince1970: 1_811_808_000)
    /// 2026-03-01T12:00:00Z.
    static let march2026 = Date(timeIntervalSince1970: 1_772_366_400)
}
