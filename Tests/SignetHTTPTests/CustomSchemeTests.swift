import Foundation
import HTTPTypes
import SignetCore
@testable import SignetHTTP
import SignetTestSupport
import Testing

/// A scheme of the test's own, with a counter: the `Signature` member is an 8-byte big-endian
/// counter followed by HMAC-SHA256(secret, counter ‖ base) — the shape of an App Attest
/// assertion (a counter the verifier keeps growing, bytes that are not a raw signature).
private struct CountedScheme: HTTPSignatureProducing, HTTPSignatureVerifying {
    static let name = "x-counted"
    let secret: SecretBytes
    var counter: UInt64 = 1
    /// The last counter accepted under this key.
    var stored: UInt64 = 0
    var failsForeign = false

    var algorithmName: String { Self.name }
    var algorithm: SignatureAlgorithm { .hmacSHA256 }

    func sign(base: [UInt8]) async throws -> [UInt8] {
        let prefix = (0..<8).map { UInt8(truncatingIfNeeded: counter >> (56 - 8 * $0)) }
        return prefix + (try mac(prefix + base))
    }

    func verify(signature: [UInt8], base: [UInt8]) throws -> UInt64? {
        struct Foreign: Error {}
        if failsForeign { throw Foreign() }
        guard signature.count == 40 else { throw Foreign() }
        let prefix = Array(signature.prefix(8))
        guard try mac(prefix + base) == Array(signature.dropFirst(8)) else { throw Foreign() }
        let found = prefix.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        guard found > stored else { throw HTTPSignatureError.counterNotIncreasing(keyID: "device-1", stored: stored, found: found) }
        return found
    }

    private func mac(_ bytes: [UInt8]) throws -> [UInt8] {
        var mac = try MessageAuthenticator(algorithm: .hmacSHA256, key: secret)
        mac.update(bytes)
        return mac.finalize()
    }
}

@Suite("a signature scheme of the application's own (HTTPSignatureVerifying)")
struct CustomSchemeTests {
    private let scheme = CountedScheme(secret: SecretBytes(RandomBytes.make(32)), counter: 7)

    private func signed(_ scheme: CountedScheme, keyID: String? = "device-1") async throws -> HTTPRequest {
        var request = HTTPTestSupport.sampleRequest()
        var signer = HTTPMessageSigner(key: .custom(scheme), keyID: keyID)
        signer.clock = fixedClock(HTTPTestSupport.now)
        _ = try await signer.sign(&request)
        return request
    }

    private func verify(_ request: HTTPRequest, with key: HTTPVerificationKey) async throws -> VerifiedHTTPSignature {
        try await SignVerifyTests.verifier(["device-1": key]).verify(request, body: nil)
    }

    @Test("signed and verified: alg names the scheme, the counter reaches the caller")
    func roundTrip() async throws {
        let request = try await signed(scheme)
        #expect(request.headerFields[.signatureInput]?.contains(";alg=\"x-counted\";") == true)
        let verified = try await verify(request, with: .custom(scheme))
        #expect(verified.algorithmName == "x-counted")
        #expect(verified.algorithm == .hmacSHA256)
        #expect(verified.counter == 7)
        #expect(verified.keyID == "device-1")
        // Registered keys report no counter and their own algorithm's name.
        let fixture = try SigningFixture.make(.ed25519)
        var plain = HTTPTestSupport.sampleRequest()
        _ = try await SignVerifyTests.signer(fixture).sign(&plain)
        let ordinary = try await SignVerifyTests.verifier(["client-1": fixture.verificationKey]).verify(plain, body: nil)
        #expect(ordinary.counter == nil && ordinary.algorithmName == "ed25519")
    }

    @Test("the message must name the scheme in alg: missing or another algorithm is refused before any check")
    func algRequired() async throws {
        let request = try await signed(scheme)
        let input = try #require(request.headerFields[.signatureInput])
        for (replacement, declared) in [("", "(none)"), (";alg=\"hmac-sha256\"", "hmac-sha256"), (";alg=\"X-COUNTED\"", "X-COUNTED")] {
            var altered = request
            altered.headerFields[.signatureInput] = input.replacingOccurrences(of: ";alg=\"x-counted\"", with: replacement)
            await #expect(throws: HTTPSignatureError.algorithmMismatch(declared: declared, key: "x-counted")) {
                try await verify(altered, with: .custom(scheme))
            }
        }
    }

    @Test("a registered key does not take the custom scheme's name")
    func registeredKeyRefusesCustomAlg() async throws {
        let request = try await signed(scheme)
        await #expect(throws: HTTPSignatureError.unsupportedAlgorithm("x-counted")) {
            try await verify(request, with: .hmacSHA256(scheme.secret))
        }
    }

    @Test("the scheme's own HTTPSignatureError passes through; any other error is signatureInvalid")
    func errors() async throws {
        var stale = scheme
        stale.stored = 7
        let request = try await signed(scheme)
        await #expect(throws: HTTPSignatureError.counterNotIncreasing(keyID: "device-1", stored: 7, found: 7)) {
            try await verify(request, with: .custom(stale))
        }
        var foreign = scheme
        foreign.failsForeign = true
        await #expect(throws: HTTPSignatureError.signatureInvalid(label: "sig1")) { try await verify(request, with: .custom(foreign)) }
        // Tampering with the base is the scheme's to find.
        var tampered = request
        tampered.path = "/v1/orders?id=8"
        await #expect(throws: HTTPSignatureError.signatureInvalid(label: "sig1")) { try await verify(tampered, with: .custom(scheme)) }
    }

    @Test("a custom key has no default key id: one must be given")
    func keyIDRequired() async throws {
        await #expect(throws: HTTPSignatureError.invalidArgument(detail: "a x-counted key needs a key id")) {
            _ = try await signed(scheme, keyID: nil)
        }
        #expect(HTTPSigningKey.custom(scheme).defaultKeyID == nil)
        #expect(HTTPSigningKey.custom(scheme).algorithmName == "x-counted")
        #expect(HTTPVerificationKey.custom(scheme).algorithmName == "x-counted")
    }
}
