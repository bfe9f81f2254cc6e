import SignetTestSupport
import Testing

@testable import SignetCore

/// Public keys made from their components, as PKCS#11 tokens give them: an RSA modulus and
/// exponent, an EC point, Ed25519's 32 bytes.
@Suite("PublicKey from components")
struct PublicKeyComponentsTests {
    @Test("an RSA key from its modulus and exponent equals the key they came from, leading zeros or not")
    func rsa() throws {
        let key = try PrivateKey.generate(.rsa2048).publicKey
        let (n, e) = try DERKey.parseRSAPublicKey(try key.encoded(as: .pkcs1DER))
        #expect(try PublicKey(rsaModulus: n, publicExponent: e, source: "token") == key)
        #expect(try PublicKey(rsaModulus: [0, 0] + n, publicExponent: [0] + e, source: "token") == key)
        let empty = try thrown(SignetCoreError.self) { try PublicKey(rsaModulus: [], publicExponent: e, source: "token") }
        #expect(empty.code == "malformed")
    }

    @Test("an RSA key under 2048 bits is weak unless the policy allows it")
    func weakRSA() throws {
        let weak = try PrivateKey.generate(.rsa1024, policy: KeyPolicy(allowWeakRSA: true)).publicKey
        let (n, e) = try DERKey.parseRSAPublicKey(try weak.encoded(as: .pkcs1DER))
        let refused = try thrown(SignetCoreError.self) { try PublicKey(rsaModulus: n, publicExponent: e, source: "pkcs11:object=old") }
        #expect(refused == .weakKey(source: "pkcs11:object=old", bits: 1024))
        #expect(try PublicKey(rsaModulus: n, publicExponent: e, source: "token", policy: KeyPolicy(allowWeakRSA: true)) == weak)
    }

    @Test("P-256 and P-384 keys from their points, uncompressed or compressed", arguments: [KeyGenerationType.p256, .p384])
    func ec(type: KeyGenerationType) throws {
        let key = try PrivateKey.generate(type).publicKey
        let point = try #require(KeyMaterial.ecPoint(key))
        let compressed = try #require(KeyMaterial.compressedECPoint(key))
        #expect(try PublicKey(ecPoint: point, kind: key.kind, source: "token") == key)
        #expect(try PublicKey(ecPoint: compressed, kind: key.kind, source: "token") == key)
        var offCurve = point
        offCurve[offCurve.count - 1] ^= 0x01
        #expect(throws: SignetCoreError.self) { try PublicKey(ecPoint: offCurve, kind: key.kind, source: "token") }
        let other: KeyKind = key.kind == .p256 ? .p384 : .p256
        #expect(throws: SignetCoreError.self) { try PublicKey(ecPoint: point, kind: other, source: "token") }
        let wrongKind = try thrown(SignetCoreError.self) { try PublicKey(ecPoint: point, kind: .ed25519, source: "token") }
        #expect(wrongKind.code == "invalidArgument")
    }

    @Test("an Ed25519 key from its 32 bytes")
    func ed25519() throws {
        let key = try PrivateKey.generate(.ed25519).publicKey
        let raw = Array(key.spkiDER.suffix(32))
        #expect(try PublicKey(ed25519: raw, source: "token") == key)
        let short = try thrown(SignetCoreError.self) { try PublicKey(ed25519: Array(raw.dropLast()), source: "token") }
        #expect(short.code == "malformed")
    }
}
