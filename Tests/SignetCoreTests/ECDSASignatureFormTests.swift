import SignetCore
import Testing

/// ECDSA signatures between DER (openssl, Signer) and raw r‖s (RFC 9421, JWS).
@Suite("ECDSA signature forms")
struct ECDSASignatureFormTests {
    @Test("DER to raw and back is the identity; the raw form verifies after conversion", arguments: [KeyGenerationType.p256, KeyGenerationType.p384])
    func roundTrip(kind: KeyGenerationType) async throws {
        let key = try PrivateKey.generate(kind)
        let algorithm: SignatureAlgorithm = kind == .p256 ? .ecdsaP256SHA256 : .ecdsaP384SHA384
        let message = Array("message".utf8)
        let der = try await SoftwareSigner(key: key, algorithm: algorithm).sign(message: message)
        let raw = try algorithm.rawSignature(fromDER: der)
        #expect(raw.count == (kind == .p256 ? 64 : 96))
        #expect(try algorithm.derSignature(fromRaw: raw) == der)
        try PublicKeyVerifier(key: key.publicKey, algorithm: algorithm).verify(signature: try algorithm.derSignature(fromRaw: raw), message: message)
    }

    @Test("wrong lengths and non-DER input are refused, naming the algorithm; other algorithms pass through")
    func refusals() throws {
        #expect(throws: SignetCoreError.malformed(source: "ecdsa-p256-sha256", detail: "a raw ECDSA signature is 64 bytes, not 63")) {
            try SignatureAlgorithm.ecdsaP256SHA256.derSignature(fromRaw: [UInt8](repeating: 1, count: 63))
        }
        #expect(throws: SignetCoreError.malformed(source: "ecdsa-p384-sha384", detail: "a raw ECDSA signature is 96 bytes, not 64")) {
            try SignatureAlgorithm.ecdsaP384SHA384.derSignature(fromRaw: [UInt8](repeating: 1, count: 64))
        }
        #expect(throws: SignetCoreError.malformed(source: "ecdsa-p256-sha256", detail: "not a DER ECDSA signature")) {
            try SignatureAlgorithm.ecdsaP256SHA256.rawSignature(fromDER: [0x30, 0x03, 0x02, 0x01])
        }
        #expect(try SignatureAlgorithm.ed25519.rawSignature(fromDER: [1, 2, 3]) == [1, 2, 3])
        #expect(try SignatureAlgorithm.rsaPSSSHA512.derSignature(fromRaw: [4, 5]) == [4, 5])
    }
}
