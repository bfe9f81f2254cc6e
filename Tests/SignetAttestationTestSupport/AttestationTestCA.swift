import Crypto
import Foundation
import SignetAttestation
import SignetCore
import SwiftASN1
import SignetTestSupport
import X509

/// A test root and intermediate (P-256) for synthetic attestation chains: the failures a
/// genuine sample cannot reach.
public struct AttestationTestCA: Sendable {
    public let root: Certificate
    public let rootKey: P256.Signing.PrivateKey
    public let intermediate: Certificate
    public let intermediateKey: P256.Signing.PrivateKey
    public let notBefore: Date

    /// A root and an intermediate valid from a day before `now` for ten years; with
    /// `intermediateIsCA` false the intermediate is an end-entity certificate.
    public static func make(intermediateIsCA: Bool = true, now: Date = Date()) throws -> AttestationTestCA {
        let notBefore = now.addingTimeInterval(-86_400)
        let rootKey = P256.Signing.PrivateKey()
        let rootName = try DistinguishedName { CommonName("Signet Test Attestation Root") }
        let root = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(rootKey.publicKey),
            notValidBefore: notBefore, notValidAfter: notBefore.addingTimeInterval(3650 * 86_400), issuer: rootName, subject: rootName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            },
            issuerPrivateKey: .init(rootKey))
        let intermediateKey = P256.Signing.PrivateKey()
        let intermediate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(intermediateKey.publicKey),
            notValidBefore: notBefore, notValidAfter: notBefore.addingTimeInterval(3650 * 86_400), issuer: rootName,
            subject: try DistinguishedName { CommonName("Signet Test Attestation CA 1") },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                if intermediateIsCA {
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                    Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                } else {
                    Critical(BasicConstraints.notCertificateAuthority)
                    Critical(KeyUsage(digitalSignature: true))
                }
            },
            issuerPrivateKey: .init(rootKey))
        return AttestationTestCA(root: root, rootKey: rootKey, intermediate: intermediate, intermediateKey: intermediateKey, notBefore: notBefore)
    }

    /// A leaf for `key`, issued by the intermediate, with `extensions`, valid for `days` from
    /// the CA's start.
    public func leaf(key: Certificate.PublicKey, extensions: [Certificate.Extension], days: Double = 30, subject: String = "leaf") throws -> Certificate {
        var all = Certificate.Extensions()
        try all.append(Critical(BasicConstraints.notCertificateAuthority).makeCertificateExtension())
        for item in extensions { try all.append(item) }
        return try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: key,
            notValidBefore: notBefore, notValidAfter: notBefore.addingTimeInterval(days * 86_400), issuer: intermediate.subject,
            subject: try DistinguishedName { CommonName(subject) }, signatureAlgorithm: .ecdsaWithSHA256, extensions: all,
            issuerPrivateKey: .init(intermediateKey))
    }
}

/// Synthetic App Attest attestation objects over the test CA, each with one property chosen.
public struct SyntheticAppAttest: Sendable {
    public var appID = "ABCDE12345.com.example.app"
    public var clientDataHash = Array(SHA256.hash(data: Array("challenge".utf8)))
    public var counter: UInt32 = 0
    public var environment = AppAttestEnvironment.production
    public var credentialID: [UInt8]?
    public var withNonceExtension = true
    public var trailing: [UInt8] = []
    public var intermediateIsCA = true

    /// A made attestation: the object, its CA (whose root a policy trusts) and the device key.
    public struct Made: Sendable {
        public let object: [UInt8]
        public let ca: AttestationTestCA
        public let key: P256.Signing.PrivateKey
        public var keyID: [UInt8] { Array(SHA256.hash(data: Array(key.publicKey.x963Representation))) }

        public func policy(_ appID: String = "ABCDE12345.com.example.app") throws -> AppAttestPolicy {
            try AppAttestPolicy(appID: appID, environments: [.production, .development], roots: [ca.root])
        }
    }

    public static func signetKey(_ key: P256.Signing.PublicKey) throws -> PublicKey {
        guard case .publicKey(let decoded) = try KeyDecoder.decode(Array(key.derRepresentation), source: "test key") else {
            throw VectorError(description: "not a public key")
        }
        return decoded
    }

    /// A sample with every property at its default (a valid production attestation).
    public init() {}

    /// An attestation of `key` (a new one by default) under `ca` (a new CA by default; one CA
    /// serves many test devices).
    public func make(ca: AttestationTestCA? = nil, key: P256.Signing.PrivateKey = P256.Signing.PrivateKey()) throws -> Made {
        let ca = try ca ?? AttestationTestCA.make(intermediateIsCA: intermediateIsCA)
        let keyID = Array(SHA256.hash(data: Array(key.publicKey.x963Representation)))
        let id = credentialID ?? keyID
        var authData = Array(SHA256.hash(data: Array(appID.utf8))) + [0x40]
        authData += withUnsafeBytes(of: counter.bigEndian, Array.init)
        authData += environment.aaguid + [UInt8(id.count >> 8), UInt8(id.count & 0xFF)] + id
        authData += try COSEKey.encode(try Self.signetKey(key.publicKey), algorithm: .es256).encoded + trailing
        let nonce = Array(SHA256.hash(data: authData + clientDataHash))
        var extensions: [Certificate.Extension] = []
        if withNonceExtension {
            var serializer = DER.Serializer()
            try serializer.appendConstructedNode(identifier: .sequence) { sequence in
                try sequence.serialize(explicitlyTaggedWithTagNumber: 1, tagClass: .contextSpecific) { tagged in
                    try tagged.serialize(ASN1OctetString(contentBytes: nonce[...]))
                }
            }
            extensions.append(Certificate.Extension(oid: AppAttestVerifier.nonceExtensionOID, critical: false, value: serializer.serializedBytes[...]))
        }
        let leaf = try ca.leaf(key: .init(key.publicKey), extensions: extensions, subject: Hex.encode(keyID))
        func der(_ certificate: Certificate) throws -> CBORValue {
            var serializer = DER.Serializer()
            try serializer.serialize(certificate)
            return .bytes(serializer.serializedBytes)
        }
        let object = CBORValue.map([
            CBORMapEntry(.text("fmt"), .text("apple-appattest")),
            CBORMapEntry(.text("attStmt"), .map([
                CBORMapEntry(.text("x5c"), .array([try der(leaf), try der(ca.intermediate)])),
                CBORMapEntry(.text("receipt"), .bytes(Array("receipt".utf8))),
            ])),
            CBORMapEntry(.text("authData"), .bytes(authData)),
        ])
        return Made(object: object.encoded, ca: ca, key: key)
    }
}

/// Synthetic App Attest assertions: what a device's `generateAssertion` returns, made with a
/// test key (for the failures and the counters no genuine sample shows, and for test devices).
public enum SyntheticAppAttestAssertion {
    /// An assertion `{signature, authenticatorData}` by `key` over `clientDataHash` for `appID`
    /// with `counter`; `flags` as Apple sets them (AT).
    public static func make(
        key: P256.Signing.PrivateKey, appID: String = "ABCDE12345.com.example.app", clientDataHash: [UInt8], counter: UInt32, flags: UInt8 = 0x40
    ) throws -> [UInt8] {
        let authenticatorData = Array(SHA256.hash(data: Array(appID.utf8))) + [flags] + withUnsafeBytes(of: counter.bigEndian, Array.init)
        let nonce = Array(SHA256.hash(data: authenticatorData + clientDataHash))
        let signature = try key.signature(for: nonce)
        return CBORValue.map([
            CBORMapEntry(.text("signature"), .bytes(Array(signature.derRepresentation))),
            CBORMapEntry(.text("authenticatorData"), .bytes(authenticatorData)),
        ]).encoded
    }
}
