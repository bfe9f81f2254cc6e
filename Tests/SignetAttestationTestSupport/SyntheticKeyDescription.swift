import SignetAttestation
import SwiftASN1
import X509

/// Synthetic Android key descriptions (extension 1.3.6.1.4.1.11129.2.1.17), for chains over
/// the test CA (``AttestationTestCA/leaf(key:extensions:days:subject:)``).
public enum SyntheticKeyDescription {
    /// A key description with `level`, the challenge, the app `com.example.app` signed by
    /// 32 × 0x11, and a root of trust (`Verified`, locked unless `locked` is false).
    public static func make(level: Int = 1, challenge: [UInt8], locked: Bool = true) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.appendConstructedNode(identifier: .sequence) { description in
            try description.serialize(400)
            description.appendPrimitiveNode(identifier: .enumerated) { $0.append(UInt8(level)) }
            try description.serialize(400)
            description.appendPrimitiveNode(identifier: .enumerated) { $0.append(UInt8(level)) }
            try description.serialize(ASN1OctetString(contentBytes: challenge[...]))
            try description.serialize(ASN1OctetString(contentBytes: []))
            try description.appendConstructedNode(identifier: .sequence) { software in
                var application = DER.Serializer()
                try application.appendConstructedNode(identifier: .sequence) { id in
                    try id.appendConstructedNode(identifier: .set) { packages in
                        try packages.appendConstructedNode(identifier: .sequence) { package in
                            try package.serialize(ASN1OctetString(contentBytes: Array("com.example.app".utf8)[...]))
                            try package.serialize(7)
                        }
                    }
                    try id.appendConstructedNode(identifier: .set) { digests in
                        try digests.serialize(ASN1OctetString(contentBytes: [UInt8](repeating: 0x11, count: 32)[...]))
                    }
                }
                try software.serialize(explicitlyTaggedWithTagNumber: 709, tagClass: .contextSpecific) { field in
                    try field.serialize(ASN1OctetString(contentBytes: application.serializedBytes[...]))
                }
            }
            try description.appendConstructedNode(identifier: .sequence) { hardware in
                try hardware.serialize(explicitlyTaggedWithTagNumber: 704, tagClass: .contextSpecific) { field in
                    try field.appendConstructedNode(identifier: .sequence) { root in
                        try root.serialize(ASN1OctetString(contentBytes: [UInt8](repeating: 0x22, count: 32)[...]))
                        try root.serialize(locked)
                        root.appendPrimitiveNode(identifier: .enumerated) { $0.append(0) }
                        try root.serialize(ASN1OctetString(contentBytes: [UInt8](repeating: 0x33, count: 32)[...]))
                    }
                }
            }
        }
        return serializer.serializedBytes
    }
}

/// Synthetic Android key attestation chains: leaf (carrying a key description) →
/// intermediate → root of a test CA, for a given key; what a test device's
/// `KeyStore.getCertificateChain` returns.
public enum SyntheticAndroidChain {
    /// The chain of `key`'s certificate under `ca`, its key description made by
    /// ``SyntheticKeyDescription/make(level:challenge:locked:)`` (package `com.example.app`,
    /// signer 32 × 0x11).
    public static func make(
        ca: AttestationTestCA, key: Certificate.PublicKey, challenge: [UInt8], level: Int = 1, locked: Bool = true
    ) throws -> [Certificate] {
        let description = try SyntheticKeyDescription.make(level: level, challenge: challenge, locked: locked)
        let leaf = try ca.leaf(
            key: key, extensions: [Certificate.Extension(oid: AndroidAttestationVerifier.keyDescriptionOID, critical: false, value: description[...])])
        return [leaf, ca.intermediate, ca.root]
    }

    /// The signer digest of the synthetic key descriptions, hex.
    public static let signerDigest = String(repeating: "11", count: 32)
    /// Their package name.
    public static let packageName = "com.example.app"
}
