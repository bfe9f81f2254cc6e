import SignetCore
import SwiftASN1

/// The object identifiers of RFC 7292 and of the PKCS#5, #7 and #9 pieces it uses.
enum PKCS12OID {
    static let data: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 7, 1]
    static let signedData: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 7, 2]
    static let encryptedData: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 7, 6]

    static let keyBag: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 12, 10, 1, 1]
    static let pkcs8ShroudedKeyBag: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 12, 10, 1, 2]
    static let certBag: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 12, 10, 1, 3]
    static let x509Certificate: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 9, 22, 1]
    static let friendlyName: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 9, 20]
    static let localKeyID: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 9, 21]

    static let pbeWithSHAAnd3KeyTripleDESCBC: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 12, 1, 3]
    static let pbeWithSHAAnd128BitRC2CBC: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 12, 1, 5]
    static let pbeWithSHAAnd40BitRC2CBC: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 12, 1, 6]
    static let pbes2: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 5, 13]
    static let pbmac1: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 5, 14]

    static let sha1: ASN1ObjectIdentifier = [1, 3, 14, 3, 2, 26]
    static let sha256: ASN1ObjectIdentifier = [2, 16, 840, 1, 101, 3, 4, 2, 1]
    static let sha384: ASN1ObjectIdentifier = [2, 16, 840, 1, 101, 3, 4, 2, 2]
    static let sha512: ASN1ObjectIdentifier = [2, 16, 840, 1, 101, 3, 4, 2, 3]

    /// Names for messages.
    static func describe(_ oid: ASN1ObjectIdentifier) -> String {
        switch oid {
        case pbmac1: return "PBMAC1 (RFC 9579)"
        case signedData: return "public-key integrity mode (signedData)"
        case [1, 2, 840, 113_549, 1, 12, 1, 1]: return "pbeWithSHAAnd128BitRC4"
        case [1, 2, 840, 113_549, 1, 12, 1, 2]: return "pbeWithSHAAnd40BitRC4"
        case [1, 2, 840, 113_549, 1, 12, 1, 4]: return "pbeWithSHAAnd2-KeyTripleDES-CBC"
        case [1, 2, 840, 113_549, 2, 5]: return "MD5"
        default: return "the algorithm with OID \(oid)"
        }
    }
}

/// A PKCS#12 `PFX` (RFC 7292 §4) in password integrity mode.
struct PKCS12PFX {
    /// The content octets of the `data` ContentInfo: the DER `AuthenticatedSafe`, and what
    /// the MAC covers.
    var authenticatedSafe: [UInt8]
    /// `macData`, absent in files written without integrity protection.
    var mac: PKCS12MACData?
}

/// `MacData`: the MAC, its hash, salt and iteration count.
struct PKCS12MACData {
    var algorithm: ASN1ObjectIdentifier
    var digest: [UInt8]
    var salt: [UInt8]
    var iterations: Int
}

/// How a ContentInfo or a shrouded key bag is encrypted.
enum PKCS12Encryption {
    /// PBES2 (RFC 8018); the DER `AlgorithmIdentifier` goes to SignetCore as it is.
    case pbes2(algorithmIdentifier: [UInt8])
    /// One of the legacy PBEs of RFC 7292 Appendix C, with its `pkcs-12PbeParams`.
    case legacy(LegacyPKCS12Cipher, salt: [UInt8], iterations: Int)
    /// Anything else, named for the message.
    case unknown(ASN1ObjectIdentifier)
}

/// One element of the `AuthenticatedSafe`.
enum PKCS12Content {
    /// A `data` ContentInfo: the DER `SafeContents`.
    case plain([UInt8])
    /// An `encryptedData` ContentInfo: `SafeContents` encrypted under the passphrase.
    case encrypted(PKCS12Encryption, ciphertext: [UInt8])
}

/// A `SafeBag` of a kind we read, with the two attributes we use.
struct PKCS12SafeBag {
    enum Value {
        /// `keyBag`: a plain PKCS#8 `PrivateKeyInfo`.
        case key(pkcs8: [UInt8])
        /// `pkcs8ShroudedKeyBag`: an `EncryptedPrivateKeyInfo`.
        case shroudedKey(PKCS12Encryption, ciphertext: [UInt8])
        /// `certBag` holding an X.509 certificate (DER).
        case certificate(der: [UInt8])
        /// CRLs, secrets, nested safe contents and certificates that are not X.509: skipped.
        case other
    }

    var value: Value
    /// The `friendlyName` attribute (a BMPString), when present and valid UTF-16.
    var friendlyName: String?
    /// The `localKeyId` attribute, when present.
    var localKeyID: [UInt8]?
}

/// Parses the DER structures of a PKCS#12 file. Only DER is read: swift-asn1 refuses BER's
/// indefinite and non-minimal lengths, which some old files (and `openssl pkcs12` before
/// 1.1.0) used; OpenSSL 3 writes DER. Every function throws `ASN1Error` for a damaged
/// structure and ``X509Error`` for a well-formed one we do not read.
enum PKCS12Parser {
    /// The most ContentInfos an `AuthenticatedSafe` may hold (OpenSSL writes two).
    static let maximumContents = 16
    /// The most safe bags a file may hold, all `SafeContents` together.
    static let maximumBags = 64

    static let tag0 = ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)

    static func parsePFX(_ der: [UInt8], source: String) throws -> PKCS12PFX {
        let root = try DER.parse(der)
        return try DER.sequence(root, identifier: .sequence) { nodes in
            let version = try Int(derEncoded: &nodes)
            guard version == 3 else {
                throw X509Error.unsupported(source: source, detail: "PKCS#12 version \(version) (version 3 is read)")
            }
            guard let authSafeNode = nodes.next() else { throw ASN1Error.invalidASN1Object(reason: "no authSafe") }
            let (type, contentNode) = try contentInfo(authSafeNode)
            guard type == PKCS12OID.data else {
                throw X509Error.unsupported(source: source, detail: "an authenticated safe of type \(PKCS12OID.describe(type)) (password integrity, a data ContentInfo, is read)")
            }
            guard let content = contentNode else { throw ASN1Error.invalidASN1Object(reason: "no authSafe content") }
            let octets = try ASN1OctetString(derEncoded: content)
            let mac = try nodes.next().map { try macData($0) }
            return PKCS12PFX(authenticatedSafe: Array(octets.bytes), mac: mac)
        }
    }

    /// `MacData ::= SEQUENCE { mac DigestInfo, macSalt OCTET STRING, iterations INTEGER DEFAULT 1 }`.
    private static func macData(_ node: ASN1Node) throws -> PKCS12MACData {
        try DER.sequence(node, identifier: .sequence) { nodes in
            guard let digestInfo = nodes.next() else { throw ASN1Error.invalidASN1Object(reason: "no DigestInfo") }
            let (algorithm, digest) = try DER.sequence(digestInfo, identifier: .sequence) { info -> (ASN1ObjectIdentifier, [UInt8]) in
                guard let algorithmNode = info.next() else { throw ASN1Error.invalidASN1Object(reason: "no digest algorithm") }
                let oid = try DER.sequence(algorithmNode, identifier: .sequence) { fields -> ASN1ObjectIdentifier in
                    let oid = try ASN1ObjectIdentifier(derEncoded: &fields)
                    if let parameters = fields.next() {  // NULL or absent
                        _ = try ASN1Null(derEncoded: parameters)
                    }
                    return oid
                }
                let digest = try ASN1OctetString(derEncoded: &info)
                return (oid, Array(digest.bytes))
            }
            let salt = try ASN1OctetString(derEncoded: &nodes)
            let iterations = try nodes.next().map { try Int(derEncoded: $0) } ?? 1
            return PKCS12MACData(algorithm: algorithm, digest: digest, salt: Array(salt.bytes), iterations: iterations)
        }
    }

    /// `ContentInfo ::= SEQUENCE { contentType OID, content [0] EXPLICIT ANY OPTIONAL }`.
    private static func contentInfo(_ node: ASN1Node) throws -> (ASN1ObjectIdentifier, ASN1Node?) {
        try DER.sequence(node, identifier: .sequence) { nodes in
            let type = try ASN1ObjectIdentifier(derEncoded: &nodes)
            let content = try DER.optionalExplicitlyTagged(&nodes, tagNumber: 0, tagClass: .contextSpecific) { $0 }
            return (type, content)
        }
    }

    /// `AuthenticatedSafe ::= SEQUENCE OF ContentInfo`, each `data` or `encryptedData`.
    static func parseAuthenticatedSafe(_ der: [UInt8], source: String) throws -> [PKCS12Content] {
        let root = try DER.parse(der)
        return try DER.sequence(root, identifier: .sequence) { nodes in
            var contents: [PKCS12Content] = []
            while let node = nodes.next() {
                guard contents.count < maximumContents else {
                    throw X509Error.malformed(source: source, detail: "the authenticated safe holds more than \(maximumContents) parts")
                }
                let (type, contentNode) = try contentInfo(node)
                guard let content = contentNode else { throw ASN1Error.invalidASN1Object(reason: "a ContentInfo without content") }
                switch type {
                case PKCS12OID.data:
                    contents.append(.plain(Array(try ASN1OctetString(derEncoded: content).bytes)))
                case PKCS12OID.encryptedData:
                    contents.append(try encryptedData(content))
                default:
                    throw X509Error.unsupported(source: source, detail: "safe contents of type \(PKCS12OID.describe(type)) (data and encryptedData are read)")
                }
            }
            return contents
        }
    }

    /// `EncryptedData ::= SEQUENCE { version INTEGER, encryptedContentInfo SEQUENCE {
    /// contentType OID, contentEncryptionAlgorithm AlgorithmIdentifier,
    /// encryptedContent [0] IMPLICIT OCTET STRING } }` (RFC 5652 §8; DER makes [0] primitive).
    private static func encryptedData(_ node: ASN1Node) throws -> PKCS12Content {
        try DER.sequence(node, identifier: .sequence) { nodes in
            let version = try Int(derEncoded: &nodes)
            guard version == 0 else { throw ASN1Error.invalidASN1Object(reason: "EncryptedData version \(version)") }
            guard let info = nodes.next() else { throw ASN1Error.invalidASN1Object(reason: "no EncryptedContentInfo") }
            while nodes.next() != nil {}  // unprotected attributes: not used
            return try DER.sequence(info, identifier: .sequence) { fields -> PKCS12Content in
                let type = try ASN1ObjectIdentifier(derEncoded: &fields)
                guard type == PKCS12OID.data else { throw ASN1Error.invalidASN1Object(reason: "encrypted content is not data") }
                guard let algorithm = fields.next(), let ciphertext = fields.next() else {
                    throw ASN1Error.invalidASN1Object(reason: "no encrypted content")
                }
                let octets = try ASN1OctetString(derEncoded: ciphertext, withIdentifier: tag0)
                return .encrypted(try encryption(algorithm), ciphertext: Array(octets.bytes))
            }
        }
    }

    /// An encryption `AlgorithmIdentifier`.
    private static func encryption(_ node: ASN1Node) throws -> PKCS12Encryption {
        try DER.sequence(node, identifier: .sequence) { nodes in
            let oid = try ASN1ObjectIdentifier(derEncoded: &nodes)
            let parameterNode = nodes.next()
            if oid == PKCS12OID.pbes2 { return .pbes2(algorithmIdentifier: Array(node.encodedBytes)) }
            guard let cipher = LegacyPKCS12Cipher(oid: oid) else { return .unknown(oid) }
            guard let parameters = parameterNode else { throw ASN1Error.invalidASN1Object(reason: "no PBE parameters") }
            // pkcs-12PbeParams ::= SEQUENCE { salt OCTET STRING, iterations INTEGER }
            return try DER.sequence(parameters, identifier: .sequence) { fields -> PKCS12Encryption in
                let salt = try ASN1OctetString(derEncoded: &fields)
                let iterations = try Int(derEncoded: &fields)
                return .legacy(cipher, salt: Array(salt.bytes), iterations: iterations)
            }
        }
    }

    /// `SafeContents ::= SEQUENCE OF SafeBag`; `room` is how many more bags the file may hold.
    static func parseSafeContents(_ der: [UInt8], room: Int, source: String) throws -> [PKCS12SafeBag] {
        let root = try DER.parse(der)
        return try DER.sequence(root, identifier: .sequence) { nodes in
            var bags: [PKCS12SafeBag] = []
            while let node = nodes.next() {
                guard bags.count < room else {
                    throw X509Error.malformed(source: source, detail: "holds more than \(maximumBags) safe bags")
                }
                bags.append(try safeBag(node))
            }
            return bags
        }
    }

    /// `SafeBag ::= SEQUENCE { bagId OID, bagValue [0] EXPLICIT ANY, bagAttributes SET OF
    /// Attribute OPTIONAL }`.
    private static func safeBag(_ node: ASN1Node) throws -> PKCS12SafeBag {
        try DER.sequence(node, identifier: .sequence) { nodes in
            let type = try ASN1ObjectIdentifier(derEncoded: &nodes)
            let value = try DER.explicitlyTagged(&nodes, tagNumber: 0, tagClass: .contextSpecific) { $0 }
            var bag = PKCS12SafeBag(value: .other)
            if let attributes = nodes.next() {
                try DER.set(attributes, identifier: .set) { list -> Void in
                    while let attribute = list.next() { try readAttribute(attribute, into: &bag) }
                }
            }
            switch type {
            case PKCS12OID.keyBag:
                bag.value = .key(pkcs8: Array(value.encodedBytes))
            case PKCS12OID.pkcs8ShroudedKeyBag:
                // EncryptedPrivateKeyInfo ::= SEQUENCE { encryptionAlgorithm, encryptedData OCTET STRING }
                bag.value = try DER.sequence(value, identifier: .sequence) { fields -> PKCS12SafeBag.Value in
                    guard let algorithm = fields.next() else { throw ASN1Error.invalidASN1Object(reason: "no algorithm") }
                    let ciphertext = try ASN1OctetString(derEncoded: &fields)
                    return .shroudedKey(try encryption(algorithm), ciphertext: Array(ciphertext.bytes))
                }
            case PKCS12OID.certBag:
                // CertBag ::= SEQUENCE { certId OID, certValue [0] EXPLICIT OCTET STRING }
                bag.value = try DER.sequence(value, identifier: .sequence) { fields -> PKCS12SafeBag.Value in
                    let certificateType = try ASN1ObjectIdentifier(derEncoded: &fields)
                    let octets = try DER.explicitlyTagged(&fields, tagNumber: 0, tagClass: .contextSpecific) {
                        try ASN1OctetString(derEncoded: $0)
                    }
                    return certificateType == PKCS12OID.x509Certificate ? .certificate(der: Array(octets.bytes)) : .other
                }
            default:
                bag.value = .other
            }
            return bag
        }
    }

    /// `Attribute ::= SEQUENCE { attrId OID, attrValues SET OF ANY }`: friendlyName and
    /// localKeyId are kept (their first value), others skipped.
    private static func readAttribute(_ node: ASN1Node, into bag: inout PKCS12SafeBag) throws {
        let (oid, firstValue) = try DER.sequence(node, identifier: .sequence) { fields -> (ASN1ObjectIdentifier, ASN1Node?) in
            let oid = try ASN1ObjectIdentifier(derEncoded: &fields)
            guard let values = fields.next() else { throw ASN1Error.invalidASN1Object(reason: "attribute without values") }
            let first = try DER.set(values, identifier: .set) { list -> ASN1Node? in
                let first = list.next()
                while list.next() != nil {}
                return first
            }
            return (oid, first)
        }
        guard let first = firstValue else { return }
        switch oid {
        case PKCS12OID.friendlyName:
            let text = try ASN1BMPString(derEncoded: first)
            bag.friendlyName = decodeBMP(Array(text.bytes))
        case PKCS12OID.localKeyID:
            bag.localKeyID = Array(try ASN1OctetString(derEncoded: first).bytes)
        default:
            break
        }
    }

    /// UTF-16BE to a String; nil for an odd length or unpaired surrogates.
    static func decodeBMP(_ bytes: [UInt8]) -> String? {
        guard bytes.count % 2 == 0 else { return nil }
        let units = stride(from: 0, to: bytes.count, by: 2).map { UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]) }
        return String(validating: units, as: UTF16.self)
    }
}

/// Builds the DER structures OpenSSL 3 writes by default.
enum PKCS12Writer {
    /// One attribute of a bag: `friendlyName` (BMPString) or `localKeyId` (OCTET STRING).
    struct Attribute: DERSerializable {
        var oid: ASN1ObjectIdentifier
        var value: ASN1Any

        func serialize(into coder: inout DER.Serializer) throws {
            try coder.appendConstructedNode(identifier: .sequence) { attribute in
                try attribute.serialize(oid)
                try attribute.serializeSetOf([value])
            }
        }

        static func friendlyName(_ name: String) throws -> Attribute {
            let bytes = name.utf16.flatMap { [UInt8(truncatingIfNeeded: $0 >> 8), UInt8(truncatingIfNeeded: $0)] }
            return Attribute(oid: PKCS12OID.friendlyName, value: try ASN1Any(erasing: ASN1BMPString(contentBytes: bytes[...])))
        }

        static func localKeyID(_ id: [UInt8]) throws -> Attribute {
            Attribute(oid: PKCS12OID.localKeyID, value: try ASN1Any(erasing: ASN1OctetString(contentBytes: id[...])))
        }
    }

    /// A `SafeBag` of `type` whose value `writeValue` writes; attributes in DER's SET OF
    /// order, none at all (as OpenSSL writes it) when `attributes` is empty.
    static func safeBag(
        type: ASN1ObjectIdentifier, attributes: [Attribute], into coder: inout DER.Serializer,
        _ writeValue: (inout DER.Serializer) throws -> Void
    ) throws {
        try coder.appendConstructedNode(identifier: .sequence) { bag in
            try bag.serialize(type)
            try bag.serialize(explicitlyTaggedWithTagNumber: 0, tagClass: .contextSpecific, writeValue)
            if !attributes.isEmpty { try bag.serializeSetOf(attributes) }
        }
    }

    /// A `certBag` holding `der`.
    static func certificateBag(_ der: [UInt8], attributes: [Attribute], into coder: inout DER.Serializer) throws {
        try safeBag(type: PKCS12OID.certBag, attributes: attributes, into: &coder) { value in
            try value.appendConstructedNode(identifier: .sequence) { certBag in
                try certBag.serialize(PKCS12OID.x509Certificate)
                try certBag.serialize(ASN1OctetString(contentBytes: der[...]), explicitlyTaggedWithTagNumber: 0, tagClass: .contextSpecific)
            }
        }
    }

    /// A `data` ContentInfo holding `octets`.
    static func dataContentInfo(_ octets: [UInt8], into coder: inout DER.Serializer) throws {
        try coder.appendConstructedNode(identifier: .sequence) { info in
            try info.serialize(PKCS12OID.data)
            try info.serialize(ASN1OctetString(contentBytes: octets[...]), explicitlyTaggedWithTagNumber: 0, tagClass: .contextSpecific)
        }
    }

    /// An `encryptedData` ContentInfo (version 0) with PBES2 `algorithmIdentifier` (DER).
    static func encryptedContentInfo(algorithmIdentifier: [UInt8], ciphertext: [UInt8], into coder: inout DER.Serializer) throws {
        try coder.appendConstructedNode(identifier: .sequence) { info in
            try info.serialize(PKCS12OID.encryptedData)
            try info.serialize(explicitlyTaggedWithTagNumber: 0, tagClass: .contextSpecific) { explicit in
                try explicit.appendConstructedNode(identifier: .sequence) { encryptedData in
                    try encryptedData.serialize(0)
                    try encryptedData.appendConstructedNode(identifier: .sequence) { contentInfo in
                        try contentInfo.serialize(PKCS12OID.data)
                        contentInfo.serializeRawBytes(algorithmIdentifier)
                        try ASN1OctetString(contentBytes: ciphertext[...]).serialize(into: &contentInfo, withIdentifier: PKCS12Parser.tag0)
                    }
                }
            }
        }
    }

    /// The whole `PFX`: version 3, the `data` authSafe, and `MacData`.
    static func pfx(authenticatedSafe: [UInt8], mac: PKCS12MACData) throws -> [UInt8] {
        var coder = DER.Serializer()
        try coder.appendConstructedNode(identifier: .sequence) { pfx in
            try pfx.serialize(3)
            try dataContentInfo(authenticatedSafe, into: &pfx)
            try pfx.appendConstructedNode(identifier: .sequence) { macData in
                try macData.appendConstructedNode(identifier: .sequence) { digestInfo in
                    try digestInfo.appendConstructedNode(identifier: .sequence) { digestAlgorithm in
                        try digestAlgorithm.serialize(mac.algorithm)
                        try digestAlgorithm.serialize(ASN1Null())
                    }
                    try digestInfo.serialize(ASN1OctetString(contentBytes: mac.digest[...]))
                }
                try macData.serialize(ASN1OctetString(contentBytes: mac.salt[...]))
                try macData.serialize(mac.iterations)
            }
        }
        return coder.serializedBytes
    }
}
