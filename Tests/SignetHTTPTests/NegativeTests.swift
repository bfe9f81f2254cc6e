import Foundation
import HTTPTypes
import SignetCore
@testable import SignetHTTP
import SignetTestSupport
import Testing

@Suite("RFC 9421 verification failures, each with its exact error")
struct NegativeTests {
    static let body = HTTPTestSupport.sampleBody
    static let otherBody = Array("{\"hello\": \"World\"}".utf8)

    static func signer(_ fixture: SigningFixture, at seconds: Int64 = HTTPTestSupport.now) -> HTTPMessageSigner {
        var signer = HTTPMessageSigner(key: fixture.signingKey, keyID: "client-1")
        signer.clock = fixedClock(seconds)
        return signer
    }

    static func verifier(
        _ fixture: SigningFixture, policy: HTTPSignaturePolicy = .default, nonceCache: (any NonceCache)? = nil, at seconds: Int64 = HTTPTestSupport.now
    ) -> HTTPMessageVerifier {
        HTTPMessageVerifier(
            keys: StaticHTTPSignatureKeys(["client-1": fixture.verificationKey]), policy: policy, nonceCache: nonceCache,
            clock: fixedClock(seconds))
    }

    /// The sample request signed with a body (unless `body` is nil) after `configure`.
    static func signed(
        _ fixture: SigningFixture, body: [UInt8]? = NegativeTests.body, at seconds: Int64 = HTTPTestSupport.now,
        configure: (inout HTTPMessageSigner) -> Void = { _ in }
    ) async throws -> HTTPRequest {
        var signer = Self.signer(fixture, at: seconds)
        configure(&signer)
        var request = HTTPTestSupport.sampleRequest()
        try await signer.sign(&request, body: body)
        return request
    }

    /// `request` with its Signature-Input rewritten by `edit` (which must change it).
    static func rewritten(_ request: HTTPRequest, _ edit: (String) -> String) throws -> HTTPRequest {
        let original = try #require(request.headerFields[.signatureInput])
        let changed = edit(original)
        try #require(changed != original, "the edit changed nothing")
        var copy = request
        copy.headerFields[.signatureInput] = changed
        return copy
    }

    @Test("a changed method, path, query, authority, scheme or covered header fails with signatureInvalid")
    func tampering() async throws {
        let fixture = try SigningFixture.make(.ed25519)
        let signed = try await Self.signed(fixture) { $0.components = [.method, .targetURI, .contentDigest, SignatureComponent("x-account")] }
        let verifier = Self.verifier(fixture)
        _ = try await verifier.verify(signed, body: Self.body)
        var method = signed
        method.method = .put
        var path = signed
        path.path = "/v1/refunds?id=7"
        var query = signed
        query.path = "/v1/orders?id=8"
        var authority = signed
        authority.authority = "evil.example.com"
        var scheme = signed
        scheme.scheme = "http"
        var header = signed
        header.headerFields[HTTPTestSupport.xAccount] = "acct-43"
        for (name, request) in [("method", method), ("path", path), ("query", query), ("authority", authority), ("scheme", scheme), ("header", header)] {
            let error = try await HTTPTestSupport.thrown { try await verifier.verify(request, body: Self.body) }
            #expect(error == .signatureInvalid(label: "sig1"), "changed \(name)")
        }
        var uncovered = signed
        uncovered.headerFields[.userAgent] = "something else"
        _ = try await verifier.verify(uncovered, body: Self.body)
    }

    @Test("a changed body fails the Content-Digest check; a rewritten Content-Digest fails the signature")
    func tamperedBody() async throws {
        let fixture = try SigningFixture.make(.ed25519)
        let signed = try await Self.signed(fixture)
        let verifier = Self.verifier(fixture)
        let other = try await HTTPTestSupport.thrown { try await verifier.verify(signed, body: Self.otherBody) }
        #expect(other.code == "contentDigest")
        let dropped = try await HTTPTestSupport.thrown { try await verifier.verify(signed, body: nil) }
        #expect(dropped.code == "contentDigest")
        var rewritten = signed
        rewritten.headerFields[.contentDigest] = ContentDigest.fieldValue(for: Self.otherBody)
        let resigned = try await HTTPTestSupport.thrown { try await verifier.verify(rewritten, body: Self.otherBody) }
        #expect(resigned == .signatureInvalid(label: "sig1"))
    }

    @Test("a body whose Content-Digest is not covered is refused; relaxed, the digest is still checked")
    func contentDigestNotCovered() async throws {
        let fixture = try SigningFixture.make(.ed25519)
        let uncovered = try await Self.signed(fixture) { $0.components = [.method, .targetURI] }
        #expect(uncovered.headerFields[.contentDigest] != nil)
        let error = try await HTTPTestSupport.thrown { try await Self.verifier(fixture).verify(uncovered, body: Self.body) }
        #expect(error == .componentNotCovered("content-digest"))
        let noField = try await Self.signed(fixture, body: nil)
        let sentWithBody = try await HTTPTestSupport.thrown { try await Self.verifier(fixture).verify(noField, body: Self.body) }
        #expect(sentWithBody == .componentNotCovered("content-digest"))

        var relaxed = HTTPSignaturePolicy()
        relaxed.requireContentDigestWithBody = false
        _ = try await Self.verifier(fixture, policy: relaxed).verify(uncovered, body: Self.body)
        let mismatch = try await HTTPTestSupport.thrown { try await Self.verifier(fixture, policy: relaxed).verify(uncovered, body: Self.otherBody) }
        #expect(mismatch.code == "contentDigest")
    }

    @Test("a signature that does not cover @target-uri or @method is refused by the default policy")
    func requiredComponents() async throws {
        let fixture = try SigningFixture.make(.ed25519)
        let noURI = try await Self.signed(fixture) { $0.components = [.method, .contentDigest] }
        let uri = try await HTTPTestSupport.thrown { try await Self.verifier(fixture).verify(noURI, body: Self.body) }
        #expect(uri == .componentNotCovered("\"@target-uri\""))
        let noMethod = try await Self.signed(fixture) { $0.components = [.targetURI, .contentDigest] }
        let method = try await HTTPTestSupport.thrown { try await Self.verifier(fixture).verify(noMethod, body: Self.body) }
        #expect(method == .componentNotCovered("\"@method\""))
        var policy = HTTPSignaturePolicy()
        policy.requiredComponents = [.method]
        _ = try await Self.verifier(fixture, policy: policy).verify(noURI, body: Self.body)
    }

    @Test("another key under the same keyid, or an unknown keyid, is refused")
    func wrongAndUnknownKeys() async throws {
        let fixture = try SigningFixture.make(.ed25519)
        let signed = try await Self.signed(fixture)
        let stranger = try PrivateKey.generate(.ed25519).publicKey
        let wrong = HTTPMessageVerifier(keys: StaticHTTPSignatureKeys(["client-1": .publicKey(stranger, .ed25519)]), clock: fixedClock(HTTPTestSupport.now))
        let invalid = try await HTTPTestSupport.thrown { try await wrong.verify(signed, body: Self.body) }
        #expect(invalid == .signatureInvalid(label: "sig1"))

        let mac = try SigningFixture.make(.hmacSHA256)
        let macSigned = try await Self.signed(mac)
        var otherSecret = SharedHTTPTestKeys.hmacSecretBytes
        otherSecret[0] ^= 1
        let wrongSecret = HTTPMessageVerifier(
            keys: StaticHTTPSignatureKeys(["client-1": .hmacSHA256(SecretBytes(otherSecret))]), clock: fixedClock(HTTPTestSupport.now))
        let macInvalid = try await HTTPTestSupport.thrown { try await wrongSecret.verify(macSigned, body: Self.body) }
        #expect(macInvalid == .signatureInvalid(label: "sig1"))

        let empty = HTTPMessageVerifier(keys: StaticHTTPSignatureKeys([:]), clock: fixedClock(HTTPTestSupport.now))
        let unknown = try await HTTPTestSupport.thrown { try await empty.verify(signed, body: Self.body) }
        #expect(unknown == .unknownKey(keyID: "client-1"))
        let failing = HTTPMessageVerifier(keys: FailingKeyStore(), clock: fixedClock(HTTPTestSupport.now))
        let storeDown = try await HTTPTestSupport.thrown { try await failing.verify(signed, body: Self.body) }
        // A store that fails is not a key that is unknown: retry later (503), not 401.
        #expect(storeDown == .keyStoreUnavailable(keyID: "client-1", detail: "the key store did not answer"))
    }

    @Test("expires in the past (beyond the skew), created too far ahead, and created too long ago are refused")
    func timeWindow() async throws {
        let fixture = try SigningFixture.make(.ed25519)
        let now = HTTPTestSupport.now
        var longAge = HTTPSignaturePolicy()
        longAge.maximumAge = .seconds(3600)
        let expiring = try await Self.signed(fixture) { $0.expiresAfter = .seconds(10) }
        _ = try await Self.verifier(fixture, policy: longAge, at: now + 310).verify(expiring, body: Self.body)
        let expired = try await HTTPTestSupport.thrown { try await Self.verifier(fixture, policy: longAge, at: now + 311).verify(expiring, body: Self.body) }
        #expect(expired == .expired(expires: now + 10, now: now + 311))

        let ahead = try await Self.signed(fixture, at: now + 301)
        let future = try await HTTPTestSupport.thrown { try await Self.verifier(fixture).verify(ahead, body: Self.body) }
        #expect(future == .createdInFuture(created: now + 301, now: now, skew: 300))
        _ = try await Self.verifier(fixture).verify(try await Self.signed(fixture, at: now + 300), body: Self.body)

        let signed = try await Self.signed(fixture)
        _ = try await Self.verifier(fixture, at: now + 300).verify(signed, body: Self.body)
        let old = try await HTTPTestSupport.thrown { try await Self.verifier(fixture, at: now + 301).verify(signed, body: Self.body) }
        #expect(old == .tooOld(created: now, now: now + 301, maxAge: 300))
    }

    @Test("a replayed nonce is refused; a nonce is recorded only once everything else passed")
    func replay() async throws {
        let fixture = try SigningFixture.make(.ed25519)
        let cache = InMemoryNonceCache(clock: fixedClock(HTTPTestSupport.now))
        let verifier = Self.verifier(fixture, nonceCache: cache)
        let signed = try await Self.signed(fixture)
        var tampered = signed
        tampered.method = .put
        let invalid = try await HTTPTestSupport.thrown { try await verifier.verify(tampered, body: Self.body) }
        #expect(invalid == .signatureInvalid(label: "sig1"))
        let digest = try await HTTPTestSupport.thrown { try await verifier.verify(signed, body: Self.otherBody) }
        #expect(digest.code == "contentDigest")
        #expect(cache.count == 0)

        _ = try await verifier.verify(signed, body: Self.body)
        #expect(cache.count == 1)
        let replayed = try await HTTPTestSupport.thrown { try await verifier.verify(signed, body: Self.body) }
        #expect(replayed.code == "replayedNonce")
        // A new signature has a new nonce.
        _ = try await verifier.verify(try await Self.signed(fixture), body: Self.body)
        #expect(cache.count == 2)
    }

    @Test("without a nonce: refused when a replay cache is set or the policy asks for one")
    func missingNonce() async throws {
        let fixture = try SigningFixture.make(.ed25519)
        let noNonce = try await Self.signed(fixture) { $0.includeNonce = false }
        let cache = InMemoryNonceCache(clock: fixedClock(HTTPTestSupport.now))
        let withCache = try await HTTPTestSupport.thrown { try await Self.verifier(fixture, nonceCache: cache).verify(noNonce, body: Self.body) }
        #expect(withCache == .missingParameter("nonce"))
        var policy = HTTPSignaturePolicy()
        policy.requireNonce = true
        let required = try await HTTPTestSupport.thrown { try await Self.verifier(fixture, policy: policy).verify(noNonce, body: Self.body) }
        #expect(required == .missingParameter("nonce"))
        _ = try await Self.verifier(fixture).verify(noNonce, body: Self.body)
    }

    @Test("without created or keyid: refused by the default policy")
    func missingCreatedOrKeyID() async throws {
        let fixture = try SigningFixture.make(.ed25519)
        for (parameters, missing) in [
            (SignatureParameters(keyID: "client-1"), "created"), (SignatureParameters(created: HTTPTestSupport.now), "keyid"),
        ] {
            var request = HTTPTestSupport.sampleRequest()
            let input = try SignatureInput(components: [.method, .targetURI], parameters: parameters)
            let signature = try await fixture.signingKey.sign(Array(try input.signatureBase(for: .request(request)).utf8))
            request.headerFields.append(HTTPField(name: .signatureInput, value: "sig1=" + (try input.serializedParameters())))
            request.headerFields.append(HTTPField(name: .signature, value: "sig1=:" + Base64.encode(signature) + ":"))
            let error = try await HTTPTestSupport.thrown { try await Self.verifier(fixture).verify(request, body: nil) }
            #expect(error == .missingParameter(missing))
            if missing == "created" {
                var policy = HTTPSignaturePolicy()
                policy.requireCreated = false
                _ = try await Self.verifier(fixture, policy: policy).verify(request, body: nil)
            }
        }
    }

    @Test("malformed Signature-Input and Signature fields are refused", arguments: MalformedSignatureCase.all)
    func malformedFields(_ c: MalformedSignatureCase) async throws {
        let fixture = try SigningFixture.make(.ed25519)
        var request = HTTPTestSupport.sampleRequest()
        for value in c.signatureInput { request.headerFields.append(HTTPField(name: .signatureInput, value: value)) }
        for value in c.signature { request.headerFields.append(HTTPField(name: .signature, value: value)) }
        let error = try await HTTPTestSupport.thrown { try await Self.verifier(fixture).verify(request, body: nil) }
        #expect(error.code == "malformedField", "got \(error)")
        #expect(error.malformedFieldName == c.field, "got \(error)")
    }

    @Test("a message with no signature fields has no usable signature")
    func noSignature() async throws {
        let fixture = try SigningFixture.make(.ed25519)
        let error = try await HTTPTestSupport.thrown { try await Self.verifier(fixture).verify(HTTPTestSupport.sampleRequest(), body: nil) }
        #expect(error.code == "missingSignature")
    }

    @Test("alg naming an unknown algorithm, or another algorithm than the key's, is refused (algorithm confusion)")
    func algParameter() async throws {
        let fixture = try SigningFixture.make(.ed25519)
        let signed = try await Self.signed(fixture)
        let verifier = Self.verifier(fixture)
        for name in ["rsa-sha1", "hmac-sha512", "hs2019"] {
            let request = try Self.rewritten(signed) { $0.replacingOccurrences(of: "alg=\"ed25519\"", with: "alg=\"\(name)\"") }
            let error = try await HTTPTestSupport.thrown { try await verifier.verify(request, body: Self.body) }
            #expect(error == .unsupportedAlgorithm(name))
        }
        let relabelled = try Self.rewritten(signed) { $0.replacingOccurrences(of: "alg=\"ed25519\"", with: "alg=\"hmac-sha256\"") }
        let mismatch = try await HTTPTestSupport.thrown { try await verifier.verify(relabelled, body: Self.body) }
        #expect(mismatch == .algorithmMismatch(declared: "hmac-sha256", key: "ed25519"))

        // A key pinned to an algorithm RFC 9421 does not register (rsa-pss-sha256) is refused as
        // unsupported, even when the message names that very algorithm.
        let rsa = try SigningFixture.make(.rsaPSSSHA512)
        let outside = HTTPMessageVerifier(
            keys: StaticHTTPSignatureKeys(["client-1": .publicKey(try #require(rsa.publicKey), .rsaPSSSHA256)]),
            clock: fixedClock(HTTPTestSupport.now))
        let named = try Self.rewritten(signed) { $0.replacingOccurrences(of: "alg=\"ed25519\"", with: "alg=\"rsa-pss-sha256\"") }
        let unregistered = try await HTTPTestSupport.thrown { try await outside.verify(named, body: Self.body) }
        #expect(unregistered == .unsupportedAlgorithm("rsa-pss-sha256"))

        // An attacker MACs with the (public) Ed25519 key as the HMAC secret.
        let publicKey = try #require(fixture.publicKey)
        for includeAlgorithm in [true, false] {
            var forger = HTTPMessageSigner(key: .hmacSHA256(SecretBytes(publicKey.spkiDER)), keyID: "client-1")
            forger.clock = fixedClock(HTTPTestSupport.now)
            forger.includeAlgorithm = includeAlgorithm
            var forged = HTTPTestSupport.sampleRequest()
            try await forger.sign(&forged, body: Self.body)
            let error = try await HTTPTestSupport.thrown { try await verifier.verify(forged, body: Self.body) }
            let expected: HTTPSignatureError =
                includeAlgorithm ? .algorithmMismatch(declared: "hmac-sha256", key: "ed25519") : .signatureInvalid(label: "sig1")
            #expect(error == expected, "alg included: \(includeAlgorithm)")
        }

        // An RSA key registered for rsa-pss-sha512 does not accept rsa-v1_5-sha256.
        let v15 = try SigningFixture.make(.rsaPKCS1v15SHA256)
        let pss = HTTPMessageVerifier(
            keys: StaticHTTPSignatureKeys(publicKeys: [try #require(v15.publicKey)]), clock: fixedClock(HTTPTestSupport.now))
        let keyID = try #require(v15.publicKey?.fingerprint.description)
        for includeAlgorithm in [true, false] {
            var signer = HTTPMessageSigner(key: v15.signingKey)
            signer.clock = fixedClock(HTTPTestSupport.now)
            signer.includeAlgorithm = includeAlgorithm
            var request = HTTPTestSupport.sampleRequest()
            try await signer.sign(&request)
            let error = try await HTTPTestSupport.thrown { try await pss.verify(request, body: nil, keyID: keyID) }
            let expected: HTTPSignatureError =
                includeAlgorithm ? .algorithmMismatch(declared: "rsa-v1_5-sha256", key: "rsa-pss-sha512") : .signatureInvalid(label: "sig1")
            #expect(error == expected, "alg included: \(includeAlgorithm)")
        }
    }

    @Test("an oversized Signature-Input, or more signatures than the policy allows, is refused as too large")
    func tooLarge() async throws {
        let fixture = try SigningFixture.make(.hmacSHA256)
        let long = try await Self.signed(fixture) { $0.tag = String(repeating: "t", count: 9000) }
        let field = try await HTTPTestSupport.thrown { try await Self.verifier(fixture).verify(long, body: Self.body) }
        guard case .tooLarge(_, let limit) = field else {
            Issue.record("expected tooLarge, got \(field)")
            return
        }
        #expect(limit == 8192)
        var small = HTTPSignaturePolicy()
        small.maximumFieldBytes = 100
        let ordinary = try await Self.signed(fixture)
        let smallLimit = try await HTTPTestSupport.thrown { try await Self.verifier(fixture, policy: small).verify(ordinary, body: Self.body) }
        #expect(smallLimit.code == "tooLarge")

        var request = HTTPTestSupport.sampleRequest()
        for index in 1...8 {
            var signer = Self.signer(fixture)
            signer.label = "sig\(index)"
            try await signer.sign(&request)
        }
        _ = try await Self.verifier(fixture).verify(request, body: nil)
        var ninth = Self.signer(fixture)
        ninth.label = "sig9"
        try await ninth.sign(&request)
        let count = try await HTTPTestSupport.thrown { try await Self.verifier(fixture).verify(request, body: nil) }
        #expect(count == .tooLarge(what: "the number of signatures", limit: 8))
    }

    @Test("error descriptions never contain the HMAC secret")
    func noSecretsInErrors() async throws {
        let secret = try RFC9421Keys.sharedSecret()
        let base64 = try RFC9421Keys.sharedSecretBase64()
        let hex = secret.bytes.map { String(format: "%02x", $0) }.joined()
        let fixture = SigningFixture(algorithm: .hmacSHA256, signingKey: .hmacSHA256(secret), verificationKey: .hmacSHA256(secret), publicKey: nil)
        let signed = try await Self.signed(fixture) { $0.expiresAfter = .seconds(5) }
        let cache = InMemoryNonceCache(clock: fixedClock(HTTPTestSupport.now))
        _ = try await Self.verifier(fixture, nonceCache: cache).verify(signed, body: Self.body)
        var tampered = signed
        tampered.method = .delete
        var errors: [HTTPSignatureError] = []
        errors.append(try await HTTPTestSupport.thrown { try await Self.verifier(fixture).verify(tampered, body: Self.body) })
        errors.append(try await HTTPTestSupport.thrown { try await Self.verifier(fixture).verify(signed, body: Self.otherBody) })
        errors.append(try await HTTPTestSupport.thrown { try await Self.verifier(fixture, nonceCache: cache).verify(signed, body: Self.body) })
        errors.append(try await HTTPTestSupport.thrown { try await Self.verifier(fixture, at: HTTPTestSupport.now + 400).verify(signed, body: Self.body) })
        errors.append(try await HTTPTestSupport.thrown { try await Self.verifier(fixture, at: HTTPTestSupport.now - 400).verify(signed, body: Self.body) })
        let relabelled = try Self.rewritten(signed) { $0.replacingOccurrences(of: "alg=\"hmac-sha256\"", with: "alg=\"ed25519\"") }
        errors.append(try await HTTPTestSupport.thrown { try await Self.verifier(fixture).verify(relabelled, body: Self.body) })
        #expect(errors.map(\.code) == ["signatureInvalid", "contentDigest", "replayedNonce", "tooOld", "createdInFuture", "algorithmMismatch"])
        for error in errors {
            for text in [error.description, String(describing: error), String(reflecting: error)] {
                #expect(!text.contains(base64) && !text.contains(String(base64.prefix(12))), "\(text)")
                #expect(!text.lowercased().contains(hex.prefix(16)), "\(text)")
            }
        }
        for key in [String(describing: fixture.signingKey), String(reflecting: fixture.signingKey), String(reflecting: fixture.verificationKey)] {
            #expect(!key.contains(base64) && !key.contains(String(base64.prefix(12))) && !key.contains(hex.prefix(16)), "\(key)")
        }
    }
}
