import SignetCore
import Testing

/// ECDSA signatures between DER (openssl, Signer) and raw r‖s (RFC 9421, JWS).
@Suite("ECDSA signature forms")
struct ECDSASignatureFormTests {
    static let message = Array("message".utf8)

    /// A new key of `kind`, its ECDSA algorithm, and its signature of ``message`` in both forms.
    static func signed(_ kind: KeyGenerationType) async throws -> (PrivateKey, SignatureAlgorithm, der: [UInt8], raw: [UInt8]) {
        let key = try PrivateKey.generate(kind)
        let algorithm: SignatureAlgorithm = kind == .p256 ? .ecdsaP256SHA256 : .ecdsaP384SHA384
        let der = try await SoftwareSigner(key: key, algorithm: algorithm).sign(message: message)
        return (key, algorithm, der, try algorithm.rawSignature(fromDER: der))
    }

    @Test("DER to raw and back is the identity; the raw form verifies after conversion", arguments: [KeyGenerationType.p256, KeyGenerationType.p384])
    func roundTrip(kind: KeyGenerationType) async throws {
        let (key, algorithm, der, raw) = try await Self.signed(kind)
        #expect(raw.count == (kind == .p256 ? 64 : 96))
        #expect(try algorithm.derSignature(fromRaw: raw) == der)
        try PublicKeyVerifier(key: key.publicKey, algorithm: algorithm).verify(signature: try algorithm.derSignature(fromRaw: raw), message: Self.message)
    }

    @Test("the raw form verifies as it is; a changed bit, another message, a DER or truncated signature are refused", arguments: [KeyGenerationType.p256, KeyGenerationType.p384])
    func rawVerification(kind: KeyGenerationType) async throws {
        let (key, algorithm, der, raw) = try await Self.signed(kind)
        let verifier = try PublicKeyVerifier(key: key.publicKey, algorithm: algorithm)
        try verifier.verify(rawSignature: raw, message: Self.message)
        for bit in [0, raw.count * 4, raw.count * 8 - 1] {
            var changed = raw
            changed[bit / 8] ^= UInt8(1) << UInt8(bit % 8)
            #expect(throws: SignetCoreError.self, "bit \(bit)") { try verifier.verify(rawSignature: changed, message: Self.message) }
        }
        #expect(throws: SignetCoreError.self) { try verifier.verify(rawSignature: raw, message: Array("massage".utf8)) }
        let length = raw.count
        #expect(throws: SignetCoreError.signatureInvalid(detail: "a raw \(algorithm.rawValue) signature (r‖s) is \(length) bytes; this one has \(der.count)")) {
            try verifier.verify(rawSignature: der, message: Self.message)
        }
        #expect(throws: SignetCoreError.signatureInvalid(detail: "a raw \(algorithm.rawValue) signature (r‖s) is \(length) bytes; this one has \(length - 1)")) {
            try verifier.verify(rawSignature: Array(raw.dropLast()), message: Self.message)
        }
    }

    @Test("for Ed25519 and RSA the raw form is the signature itself")
    func rawPassesThrough() async throws {
        for (kind, algorithm) in [(KeyGenerationType.ed25519, SignatureAlgorithm.ed25519), (.rsa2048, .rsaPSSSHA256)] {
            let key = try PrivateKey.generate(kind)
            let signature = try await SoftwareSigner(key: key, algorithm: algorithm).sign(message: Self.message)
            let verifier = try PublicKeyVerifier(key: key.publicKey, algorithm: algorithm)
            try verifier.verify(rawSignature: signature, message: Self.message)
            var changed = signature
            changed[0] ^= 1
            #expect(throws: SignetCoreError.self, "\(algorithm)") { try verifier.verify(rawSignature: changed, message: Self.message) }
        }
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
