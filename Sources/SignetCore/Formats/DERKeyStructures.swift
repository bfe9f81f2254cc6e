import SwiftASN1

/// The DER containers keys travel in, parsed just far enough to find the key material.
/// Each parser throws ``SignetCoreError/malformed(source:detail:)`` naming the structure.
enum DERKey {
    /// An `AlgorithmIdentifier`: an OID and its optional parameters.
    struct AlgorithmIdentifier {
        var oid: ASN1ObjectIdentifier
        var parameters: ASN1Node?
    }

    /// RFC 5280 `SubjectPublicKeyInfo`.
    struct SubjectPublicKeyInfo {
        var algorithm: AlgorithmIdentifier
        var key: [UInt8]
    }

    /// RFC 5208/5958 `PrivateKeyInfo` / `OneAsymmetricKey`.
    struct PrivateKeyInfo {
        var algorithm: AlgorithmIdentifier
        var privateKey: [UInt8]
    }

    /// RFC 5915 `ECPrivateKey` (SEC1).
    struct ECPrivateKey {
        var scalar: [UInt8]
        var curve: ASN1ObjectIdentifier?
        var publicKey: [UInt8]?
    }

    /// RFC 8017 `RSAPrivateKey` (PKCS#1), every component unsigned big-endian.
    struct RSAPrivateKey {
        var n, e, d, p, q, dp, dq, qi: [UInt8]
    }

    static func parseAlgorithm(_ node: ASN1Node) throws -> AlgorithmIdentifier {
        try DER.sequence(node, identifier: .sequence) { nodes in
            let oid = try ASN1ObjectIdentifier(derEncoded: &nodes)
            let parameters = nodes.next()
            guard nodes.next() == nil else { throw ASN1Error.invalidASN1Object(reason: "extra fields") }
            return AlgorithmIdentifier(oid: oid, parameters: parameters)
        }
    }

    static func parseSPKI(_ der: [UInt8]) throws -> SubjectPublicKeyInfo {
        let root = try DER.parse(der)
        return try DER.sequence(root, identifier: .sequence) { nodes in
            guard let first = nodes.next() else { throw ASN1Error.invalidASN1Object(reason: "empty") }
            let algorithm = try parseAlgorithm(first)
            let bits = try ASN1BitString(derEncoded: &nodes)
            guard bits.paddingBits == 0 else { throw ASN1Error.invalidASN1Object(reason: "key bits not whole bytes") }
            return SubjectPublicKeyInfo(algorithm: algorithm, key: Array(bits.bytes))
        }
    }

    static func parsePrivateKeyInfo(_ der: [UInt8]) throws -> PrivateKeyInfo {
        let root = try DER.parse(der)
        return try DER.sequence(root, identifier: .sequence) { nodes in
            let version = try Int(derEncoded: &nodes)
            guard version == 0 || version == 1 else {
                throw ASN1Error.invalidASN1Object(reason: "unknown PKCS#8 version \(version)")
            }
            guard let algorithmNode = nodes.next() else { throw ASN1Error.invalidASN1Object(reason: "no algorithm") }
            let algorithm = try parseAlgorithm(algorithmNode)
            let key = try ASN1OctetString(derEncoded: &nodes)
            while nodes.next() != nil {}  // attributes and the optional public key: not needed
            return PrivateKeyInfo(algorithm: algorithm, privateKey: Array(key.bytes))
        }
    }

    static func parseECPrivateKey(_ der: [UInt8]) throws -> ECPrivateKey {
        let root = try DER.parse(der)
        return try DER.sequence(root, identifier: .sequence) { nodes in
            let version = try Int(derEncoded: &nodes)
            guard version == 1 else { throw ASN1Error.invalidASN1Object(reason: "ECPrivateKey version \(version)") }
            let scalar = try ASN1OctetString(derEncoded: &nodes)
            let curve = try DER.optionalExplicitlyTagged(&nodes, tagNumber: 0, tagClass: .contextSpecific) { node in
                try ASN1ObjectIdentifier(derEncoded: node)
            }
            let publicKey = try DER.optionalExplicitlyTagged(&nodes, tagNumber: 1, tagClass: .contextSpecific) {
                try ASN1BitString(derEncoded: $0)
            }
            return ECPrivateKey(scalar: Array(scalar.bytes), curve: curve, publicKey: publicKey.map { Array($0.bytes) })
        }
    }

    static func parseRSAPrivateKey(_ der: [UInt8]) throws -> RSAPrivateKey {
        let root = try DER.parse(der)
        return try DER.sequence(root, identifier: .sequence) { nodes in
            let version = try Int(derEncoded: &nodes)
            guard version == 0 else {
                throw ASN1Error.invalidASN1Object(reason: "multi-prime RSA keys (version \(version)) are not supported")
            }
            var parts: [[UInt8]] = []
            for _ in 0..<8 { parts.append(Array(try ArraySlice<UInt8>(derEncoded: &nodes))) }
            guard nodes.next() == nil else { throw ASN1Error.invalidASN1Object(reason: "extra fields") }
            return RSAPrivateKey(
                n: parts[0], e: parts[1], d: parts[2], p: parts[3], q: parts[4], dp: parts[5], dq: parts[6],
                qi: parts[7])
        }
    }

    static func parseRSAPublicKey(_ der: [UInt8]) throws -> (n: [UInt8], e: [UInt8]) {
        let root = try DER.parse(der)
        return try DER.sequence(root, identifier: .sequence) { nodes in
            let n = try ArraySlice<UInt8>(derEncoded: &nodes)
            let e = try ArraySlice<UInt8>(derEncoded: &nodes)
            return (Array(n), Array(e))
        }
    }

    // MARK: Serialising

    /// An unsigned integer, minimally encoded whatever leading zeros `bytes` has.
    static func appendUnsigned(_ bytes: [UInt8], to serializer: inout DER.Serializer) throws {
        var slice = bytes[...]
        while slice.count > 1, slice.first == 0 { slice = slice.dropFirst() }
        try serializer.serialize(slice)
    }

    static func appendAlgorithm(
        _ oid: ASN1ObjectIdentifier, parameters: ASN1ObjectIdentifier?, null: Bool = false,
        to serializer: inout DER.Serializer
    ) throws {
        try serializer.appendConstructedNode(identifier: .sequence) { inner in
            try inner.serialize(oid)
            if let parameters { try inner.serialize(parameters) }
            if null { try inner.serialize(ASN1Null()) }
        }
    }

    static func serializeSPKI(oid: ASN1ObjectIdentifier, curve: ASN1ObjectIdentifier?, null: Bool, key: [UInt8]) -> [UInt8] {
        var serializer = DER.Serializer()
        try! serializer.appendConstructedNode(identifier: .sequence) { outer in
            try appendAlgorithm(oid, parameters: curve, null: null, to: &outer)
            try outer.serialize(ASN1BitString(bytes: key[...]))
        }
        return serializer.serializedBytes
    }

    static func serializePrivateKeyInfo(oid: ASN1ObjectIdentifier, curve: ASN1ObjectIdentifier?, null: Bool, key: [UInt8]) -> [UInt8] {
        var serializer = DER.Serializer()
        try! serializer.appendConstructedNode(identifier: .sequence) { outer in
            try outer.serialize(0)
            try appendAlgorithm(oid, parameters: curve, null: null, to: &outer)
            try outer.serialize(ASN1OctetString(contentBytes: key[...]))
        }
        return serializer.serializedBytes
    }

    static func serializeECPrivateKey(scalar: [UInt8], curve: ASN1ObjectIdentifier?, publicKey: [UInt8]) -> [UInt8] {
        var serializer = DER.Serializer()
        try! serializer.appendConstructedNode(identifier: .sequence) { outer in
            try outer.serialize(1)
            try outer.serialize(ASN1OctetString(contentBytes: scalar[...]))
            if let curve {
                try outer.serialize(explicitlyTaggedWithTagNumber: 0, tagClass: .contextSpecific) { try $0.serialize(curve) }
            }
            try outer.serialize(explicitlyTaggedWithTagNumber: 1, tagClass: .contextSpecific) {
                try $0.serialize(ASN1BitString(bytes: publicKey[...]))
            }
        }
        return serializer.serializedBytes
    }

    static func serializeRSAPrivateKey(_ key: RSAPrivateKey) -> [UInt8] {
        var serializer = DER.Serializer()
        try! serializer.appendConstructedNode(identifier: .sequence) { outer in
            try outer.serialize(0)
            for part in [key.n, key.e, key.d, key.p, key.q, key.dp, key.dq, key.qi] {
                try appendUnsigned(part, to: &outer)
            }
        }
        return serializer.serializedBytes
    }

    static func serializeRSAPublicKey(n: [UInt8], e: [UInt8]) -> [UInt8] {
        var serializer = DER.Serializer()
        try! serializer.appendConstructedNode(identifier: .sequence) { outer in
            try appendUnsigned(n, to: &outer)
            try appendUnsigned(e, to: &outer)
        }
        return serializer.serializedBytes
    }
}
