import Foundation
import HTTPTypes
import SignetCore
@testable import SignetHTTP
import SignetTestSupport
import Testing

/// A nonce may be forgotten only when the signature carrying it can no longer be accepted:
/// with a replay cache, a signature with neither `created` nor `expires` (which never ages
/// out) is refused, and one bounded only by `expires` keeps its nonce until then.
@Suite("replay protection: nonces live as long as their signatures")
struct NonceLifetimeTests {
    /// The sample request, signed over `@method` and `@target-uri` with exactly `parameters`.
    static func signed(_ fixture: SigningFixture, _ parameters: SignatureParameters) async throws -> HTTPRequest {
        var request = HTTPTestSupport.sampleRequest()
        let input = try SignatureInput(components: [.method, .targetURI], parameters: parameters)
        let signature = try await fixture.signingKey.sign(Array(try input.signatureBase(for: .request(request)).utf8))
        request.headerFields.append(HTTPField(name: .signatureInput, value: "sig1=" + (try input.serializedParameters())))
        request.headerFields.append(HTTPField(name: .signature, value: "sig1=:" + Base64.encode(signature) + ":"))
        return request
    }

    static func verifier(_ fixture: SigningFixture, cache: (any NonceCache)?, clock: ManualClock) -> HTTPMessageVerifier {
        var policy = HTTPSignaturePolicy()
        policy.requireCreated = false
        return HTTPMessageVerifier(
            keys: StaticHTTPSignatureKeys(["client-1": fixture.verificationKey]), policy: policy, nonceCache: cache, clock: clock.wallClock)
    }

    @Test("with a replay cache, a signature without created or expires is refused before its nonce is recorded")
    func unboundedSignatureRefused() async throws {
        let fixture = try SigningFixture.make(.ed25519)
        let clock = ManualClock(HTTPTestSupport.now)
        let cache = InMemoryNonceCache(clock: clock.wallClock)
        let request = try await Self.signed(fixture, SignatureParameters(nonce: "n-1", keyID: "client-1"))
        let refused = try await HTTPTestSupport.thrown { try await Self.verifier(fixture, cache: cache, clock: clock).verify(request, body: nil) }
        #expect(refused == .missingParameter("created or expires"))
        #expect(refused.description == "the signature parameter created or expires is required")
        #expect(cache.count == 0)
        // The attack this closes: the same request a day later, once a nonce would be forgotten.
        clock.advance(by: 86_400)
        let later = try await HTTPTestSupport.thrown { try await Self.verifier(fixture, cache: cache, clock: clock).verify(request, body: nil) }
        #expect(later == .missingParameter("created or expires"))
        // Without a replay cache there is nothing to forget, and the policy allows it.
        _ = try await Self.verifier(fixture, cache: nil, clock: clock).verify(request, body: nil)
    }

    @Test("a nonce longer than the policy's bound is refused before it is recorded")
    func longNonceRefused() async throws {
        let fixture = try SigningFixture.make(.ed25519)
        let clock = ManualClock(HTTPTestSupport.now)
        let cache = InMemoryNonceCache(clock: clock.wallClock)
        let created = HTTPTestSupport.now
        let long = try await Self.signed(fixture, SignatureParameters(created: created, nonce: String(repeating: "n", count: 129), keyID: "client-1"))
        let refused = try await HTTPTestSupport.thrown { try await Self.verifier(fixture, cache: cache, clock: clock).verify(long, body: nil) }
        #expect(refused == .tooLarge(what: "the nonce", limit: 128))
        #expect(cache.count == 0)
        let empty = try await Self.signed(fixture, SignatureParameters(created: created, nonce: "", keyID: "client-1"))
        let refusedEmpty = try await HTTPTestSupport.thrown { try await Self.verifier(fixture, cache: cache, clock: clock).verify(empty, body: nil) }
        #expect(refusedEmpty == .missingParameter("nonce"))
        let bound = try await Self.signed(fixture, SignatureParameters(created: created, nonce: String(repeating: "n", count: 128), keyID: "client-1"))
        _ = try await Self.verifier(fixture, cache: cache, clock: clock).verify(bound, body: nil)
        #expect(cache.count == 1)
    }

    @Test("a signature bounded only by expires keeps its nonce until it expires: a replay after maximumAge is still refused")
    func expiresOnlyKeepsNonce() async throws {
        let fixture = try SigningFixture.make(.ed25519)
        let clock = ManualClock(HTTPTestSupport.now)
        let cache = InMemoryNonceCache(clock: clock.wallClock)
        let expires = HTTPTestSupport.now + 3600
        let request = try await Self.signed(fixture, SignatureParameters(expires: expires, nonce: "n-2", keyID: "client-1"))
        _ = try await Self.verifier(fixture, cache: cache, clock: clock).verify(request, body: nil)
        // Well past maximumAge (300 s), still before expires: the signature is still acceptable,
        // so the nonce must still be known.
        clock.advance(by: 1800)
        let replayed = try await HTTPTestSupport.thrown { try await Self.verifier(fixture, cache: cache, clock: clock).verify(request, body: nil) }
        #expect(replayed == .replayedNonce(keyID: "client-1"))
        // Past expires + skew, the signature itself is refused.
        clock.advance(by: 1800 + 301)
        let expired = try await HTTPTestSupport.thrown { try await Self.verifier(fixture, cache: cache, clock: clock).verify(request, body: nil) }
        #expect(expired == .expired(expires: expires, now: expires + 301))
    }

    @Test("the acceptance bound is the earlier of created + maximumAge and expires + skew")
    func acceptableUntil() {
        let policy = HTTPSignaturePolicy()
        #expect(HTTPMessageVerifier.acceptableUntil(SignatureParameters(), policy: policy) == nil)
        #expect(HTTPMessageVerifier.acceptableUntil(SignatureParameters(created: 1000), policy: policy) == 1300)
        #expect(HTTPMessageVerifier.acceptableUntil(SignatureParameters(expires: 5000), policy: policy) == 5300)
        #expect(HTTPMessageVerifier.acceptableUntil(SignatureParameters(created: 1000, expires: 1100), policy: policy) == 1300)
        #expect(HTTPMessageVerifier.acceptableUntil(SignatureParameters(created: 1000, expires: 900), policy: policy) == 1200)
    }
}
