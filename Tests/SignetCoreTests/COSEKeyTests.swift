import Foundation
import SignetCore
import SignetTestSupport
import Testing

/// One COSE key of `Vectors/cbor/cose-keys.json` (its README says where each comes from).
struct COSEKeyVector: Decodable, Sendable, CustomTestStringConvertible {
    /// What the key is.
    let name: String
    /// Where the key is published.
    let source: String
    /// The COSE_Key map in CBOR, hex.
    let cose: String
    /// The key type the map names (kty, label 1).
    let kty: Int
    /// The curve the map names (crv, label −1), when it names one.
    let crv: Int?
    /// The algorithm the map names (alg, label 3), when it names one.
    let alg: Int?
    /// The x coordinate (label −2), hex.
    let x: String?
    /// The y coordinate (label −3), hex; EC2 keys only.
    let y: String?
    /// `p256`, `p384` or `ed25519`: the key it must read as; otherwise the code it must be
    /// refused with (`unsupported`, `malformed`).
    let expect: String
    /// Why a published key is refused, when it is.
    let note: String?

    var testDescription: String { name }

    private struct File: Decodable {
        let keys: [COSEKeyVector]
    }

    /// Every key of the file.
    static func loadAll() throws -> [COSEKeyVector] {
        try TestVectors.decode(File.self, "cbor/cose-keys.json", in: .module).keys
    }

    /// The key the coordinates make, for the keys that must read.
    func expectedKey() throws -> PublicKey? {
        let x = try TestVectors.bytes(hex: self.x ?? "")
        switch expect {
        case "p256": return try PublicKey(ecPoint: [0x04] + x + TestVectors.bytes(hex: y ?? ""), kind: .p256, source: name)
        case "p384": return try PublicKey(ecPoint: [0x04] + x + TestVectors.bytes(hex: y ?? ""), kind: .p384, source: name)
        case "ed25519": return try PublicKey(ed25519: x, source: name)
        default: return nil
        }
    }
}

/// COSE keys (RFC 9052 §7, RFC 9053): published keys, round trips of every supported kind, and
/// the maps that are refused.
@Suite("COSE keys")
struct COSEKeyTests {
    /// The x coordinate of a P-256 key published in cose-wg/Examples (ecdsa-01).
    static let p256X = "bac5b11cad8f99f9c72b05cf4b9e26d244dc189f745228255a219a86d6a09eff"
    /// Its y coordinate.
    static let p256Y = "20138bf82dc1b6d562be0fa54ab7804a3a64b6d72ccfed6b6fb6ed28bbfc117e"
    /// RFC 8032's first Ed25519 test key.
    static let ed25519X = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"

    /// The P-256 map `{1: 2, -1: 1, -2: x, -3: y}` with `extra` entries added at the end.
    static func p256Map(x: [UInt8]? = nil, y: [UInt8]? = nil, _ extra: [(Int64, CBORValue)] = []) throws -> CBORValue {
        let xBytes = try x ?? CBORTestSupport.bytes(p256X)
        let yBytes = try y ?? CBORTestSupport.bytes(p256Y)
        let entries: [(Int64, CBORValue)] = [(1, CBORValue(2)), (-1, CBORValue(1)), (-2, .bytes(xBytes)), (-3, .bytes(yBytes))]
        return CBORTestSupport.coseMap(entries + extra)
    }

    /// The Ed25519 map `{1: 1, -1: 6, -2: x}` with `extra` entries added at the end.
    static func ed25519Map(_ extra: [(Int64, CBORValue)] = []) throws -> CBORValue {
        let x = try CBORTestSupport.bytes(ed25519X)
        let entries: [(Int64, CBORValue)] = [(1, CBORValue(1)), (-1, CBORValue(6)), (-2, .bytes(x))]
        return CBORTestSupport.coseMap(entries + extra)
    }

    @Test("the vector file holds keys of every supported kind and refusals")
    func vectorFile() throws {
        let vectors = try COSEKeyVector.loadAll()
        for kind in ["p256", "p384", "ed25519", "unsupported", "malformed"] {
            #expect(vectors.contains { $0.expect == kind }, "no \(kind) vector")
        }
        #expect(vectors.filter { ["p256", "p384", "ed25519"].contains($0.expect) }.count >= 6)
    }

    @Test("published COSE keys read as the key their coordinates make, or are refused with their code", arguments: try COSEKeyVector.loadAll())
    func publishedKey(vector: COSEKeyVector) throws {
        let bytes = try TestVectors.bytes(hex: vector.cose)
        // Written with every head in its shortest form, as CTAP2 requires.
        let value = try CBOR.decode(bytes, source: vector.name, limits: CBOR.Limits(requiresShortestForm: true))
        #expect(value[1]?.int64Value == Int64(vector.kty))
        if let expected = try vector.expectedKey() {
            let key = try COSEKey(value, source: vector.name)
            #expect(key.key == expected)
            #expect(key.key.kind.family == vector.expect)
            #expect(key.algorithm?.rawValue == vector.alg.map { Int64($0) })
            // Written again, the map reads as the same key.
            let written = try COSEKey.encode(key.key, algorithm: key.algorithm).encoded
            let again = try COSEKey(CBOR.decode(written, source: "again"), source: "again")
            #expect(again.key == expected && again.algorithm == key.algorithm)
        } else {
            let error = try thrown(SignetCoreError.self) { try COSEKey(value, source: vector.name) }
            #expect(error.code.name == vector.expect, "\(error)")
            #expect(error.description.hasPrefix(vector.name + ": "))
        }
    }

    @Test(
        "a key written as a COSE key reads back as the same key, with or without its algorithm",
        arguments: [(KeyGenerationType.p256, COSEAlgorithm.es256), (.p384, .es384), (.ed25519, .edDSA), (.rsa2048, .rs256)])
    func roundTrip(type: KeyGenerationType, algorithm: COSEAlgorithm) throws {
        let key = try PrivateKey.generate(type).publicKey
        for named in [algorithm, nil] as [COSEAlgorithm?] {
            let value = try COSEKey.encode(key, algorithm: named)
            #expect(value[1] != nil && (value[3] == nil) == (named == nil))
            let bytes = value.encoded
            let decoded = try COSEKey(CBOR.decode(bytes, source: "cose", limits: CBOR.Limits(requiresShortestForm: true)), source: "cose")
            #expect(decoded.key == key)
            #expect(decoded.key.kind == key.kind)
            #expect(decoded.algorithm == named)
        }
        // An algorithm of another key kind is not written.
        let other: COSEAlgorithm = algorithm == .edDSA ? .es256 : .edDSA
        let error = try thrown(SignetCoreError.self) { try COSEKey.encode(key, algorithm: other) }
        #expect(error.code == "invalidArgument")
    }

    @Test("an RSA modulus with leading zero bytes reads as the same key")
    func rsaLeadingZeros() throws {
        let key = try PrivateKey.generate(.rsa2048).publicKey
        let value = try COSEKey.encode(key)
        let n = try #require(value[-1]?.bytesValue)
        let e = try #require(value[-2]?.bytesValue)
        let padded = CBORTestSupport.coseMap([(1, CBORValue(3)), (-1, .bytes([0, 0] + n)), (-2, .bytes([0] + e)), (3, CBORValue(-257))])
        let decoded = try COSEKey(padded, source: "padded")
        #expect(decoded.key == key)
        #expect(decoded.algorithm == .rs256)
    }

    @Test("a map without what its key type needs is refused as malformed")
    func missingParts() throws {
        try CBORTestSupport.coseRefusal(.array([]), "malformed", "a COSE key is a map, not an array")
        try CBORTestSupport.coseRefusal(.bytes([0x04]), "malformed", "a COSE key is a map, not a byte string")
        try CBORTestSupport.coseRefusal(CBORTestSupport.coseMap([(-1, CBORValue(1))]), "malformed", "the COSE key has no integer kty (1)")
        try CBORTestSupport.coseRefusal(CBORTestSupport.coseMap([(1, .text("EC2")), (-1, CBORValue(1))]), "malformed", "no integer kty (1)")
        let x = try CBORTestSupport.bytes(Self.p256X)
        let noY = CBORTestSupport.coseMap([(1, CBORValue(2)), (-1, CBORValue(1)), (-2, .bytes(x))])
        try CBORTestSupport.coseRefusal(noY, "malformed", "the COSE key has no y (-3)")
        let textX = CBORTestSupport.coseMap([(1, CBORValue(1)), (-1, CBORValue(6)), (-2, .text(Self.ed25519X))])
        try CBORTestSupport.coseRefusal(textX, "malformed", "the COSE key's x (-2) is a text string, not a byte string")
        try CBORTestSupport.coseRefusal(CBORTestSupport.coseMap([(1, CBORValue(3)), (-2, .bytes([1, 0, 1]))]), "malformed", "the COSE key has no n (-1)")
    }

    @Test("a key type or curve outside EC2 P-256/P-384, OKP Ed25519 and RSA is unsupported")
    func unsupportedCurves() throws {
        let x = try CBORTestSupport.bytes(Self.p256X)
        let cases: [(Int64, Int64?, String)] = [
            (2, 3, "COSE key type 2 on curve 3"),  // P-521
            (2, 6, "COSE key type 2 on curve 6"),  // Ed25519 is no EC2 curve
            (1, 1, "COSE key type 1 on curve 1"),  // P-256 is no OKP curve
            (1, 7, "COSE key type 1 on curve 7"),  // Ed448
            (2, nil, "COSE key type 2 (supported"),  // no curve
            (4, nil, "COSE key type 4"),  // symmetric
        ]
        for (kty, crv, fragment) in cases {
            var entries: [(Int64, CBORValue)] = [(1, CBORValue(kty))]
            if let crv { entries.append((-1, CBORValue(crv))) }
            entries += [(-2, .bytes(x)), (-3, .bytes(x))]
            try CBORTestSupport.coseRefusal(CBORTestSupport.coseMap(entries), "unsupported", fragment)
        }
    }

    @Test("coordinates of the wrong length, or a point off the curve, are refused as malformed")
    func wrongCoordinates() throws {
        let x = try CBORTestSupport.bytes(Self.p256X)
        let y = try CBORTestSupport.bytes(Self.p256Y)
        try CBORTestSupport.coseRefusal(Self.p256Map(x: Array(x.dropFirst())), "malformed", "coordinates are 31 and 32 bytes, not 32")
        try CBORTestSupport.coseRefusal(Self.p256Map(y: [0] + y), "malformed", "coordinates are 32 and 33 bytes, not 32")
        var offCurve = y
        offCurve[31] ^= 0x01
        try CBORTestSupport.coseRefusal(Self.p256Map(y: offCurve), "malformed", "the COSE key's point is not on the curve")
        // The P-256 point under the P-384 curve id.
        let p384 = CBORTestSupport.coseMap([(1, CBORValue(2)), (-1, CBORValue(2)), (-2, .bytes(x)), (-3, .bytes(y))])
        try CBORTestSupport.coseRefusal(p384, "malformed", "coordinates are 32 and 32 bytes, not 48")
        let shortEd = CBORTestSupport.coseMap([(1, CBORValue(1)), (-1, CBORValue(6)), (-2, .bytes(Array(x.dropLast())))])
        try CBORTestSupport.coseRefusal(shortEd, "malformed", "the COSE key's Ed25519 x is 31 bytes, not 32")
        // The reference key reads.
        let good = try COSEKey(Self.p256Map(), source: "good")
        let expected = try PublicKey(ecPoint: [0x04] + x + y, kind: .p256, source: "good")
        #expect(good.key == expected)
    }

    @Test("an algorithm that does not fit the key is malformed; one not supported, or not an integer, is unsupported")
    func algorithms() throws {
        try CBORTestSupport.coseRefusal(Self.ed25519Map([(3, CBORValue(-7))]), "malformed", "names algorithm -7, which does not fit its an Ed25519 key")
        try CBORTestSupport.coseRefusal(Self.p256Map([(3, CBORValue(-8))]), "malformed", "names algorithm -8")
        try CBORTestSupport.coseRefusal(Self.p256Map([(3, CBORValue(-35))]), "malformed", "names algorithm -35")
        try CBORTestSupport.coseRefusal(Self.p256Map([(3, CBORValue(-36))]), "unsupported", "COSE algorithm -36 (supported: -7, -35, -8, -257)")
        try CBORTestSupport.coseRefusal(Self.p256Map([(3, CBORValue(1))]), "unsupported", "COSE algorithm 1")
        try CBORTestSupport.coseRefusal(Self.p256Map([(3, .text("ES256"))]), "unsupported", "COSE algorithm a text string")
        let es256 = try COSEKey(Self.p256Map([(3, CBORValue(-7))]), source: "fits")
        let edDSA = try COSEKey(Self.ed25519Map([(3, CBORValue(-8))]), source: "fits")
        let none = try COSEKey(Self.p256Map(), source: "none")
        #expect(es256.algorithm == .es256)
        #expect(edDSA.algorithm == .edDSA)
        #expect(none.algorithm == nil)
    }

    @Test("an RSA modulus under 2048 bits is a weak key, counted in bits, not bytes")
    func weakRSA() throws {
        let e: CBORValue = .bytes([0x01, 0x00, 0x01])
        let cases: [([UInt8], Int)] = [
            ([0xC5] + [UInt8](repeating: 0x5A, count: 127), 1024),
            ([0x00, 0xC5] + [UInt8](repeating: 0x5A, count: 127), 1024),  // a leading zero byte counts for nothing
            ([0x01] + [UInt8](repeating: 0xFF, count: 255), 2041),  // 256 bytes, 2041 bits
            ([0x7F] + [UInt8](repeating: 0xFF, count: 255), 2047),
        ]
        for (n, bits) in cases {
            let map = CBORTestSupport.coseMap([(1, CBORValue(3)), (-1, .bytes(n)), (-2, e)])
            let error = try thrown(SignetCoreError.self) { try COSEKey(map, source: "the key") }
            #expect(error == .weakKey(source: "the key", bits: bits), "\(error)")
        }
    }
}
