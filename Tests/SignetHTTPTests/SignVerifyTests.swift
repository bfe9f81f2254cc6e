import Foundation
import HTTPTypes
import SignetCore
@testable import SignetHTTP
import SignetTestSupport
import Testing

@Suite("RFC 9421 signing and verifying round trips")
struct SignVerifyTests {
    /// A signer under `keyID` whose clock is stopped at ``HTTPTestSupport/now``.
    static func signer(_ fixture: SigningFixture, keyID: String? = "client-1") -> HTTPMessageSigner {
        var signer = HTTPMessageSigner(key: fixture.signingKey, keyID: keyID)
        signer.clock = fixedClock(HTTPTestSupport.now)
        return signer
    }

    /// A verifier with `keys`, its clock stopped at ``HTTPTestSupport/now``.
    static func verifier(_ keys: [String: HTTPVerificationKey], policy: HTTPSignaturePolicy = .default) -> HTTPMessageVerifier {
        HTTPMessageVerifier(keys: StaticHTTPSignatureKeys(keys), policy: policy, clock: fixedClock(HTTPTestSupport.now))
    }

    @Test("the supported algorithms are RFC 9421's six; other names are refused")
    func supportedAlgorithms() throws {
        #expect(
            Set(HTTPSignatureAlgorithms.supported.map(\.rawValue))
                == ["hmac-sha256", "rsa-pss-sha512", "rsa-v1_5-sha256", "ecdsa-p256-sha256", "ecdsa-p384-sha384", "ed25519"])
        for algorithm in HTTPSignatureAlgorithms.supported {
            #expect(try HTTPSignatureAlgorithms.parse(algorithm.rawValue) == algorithm)
        }
        for name in ["rsa-v1_5-sha512", "rsa-pss-sha256", "hmac-sha512", "rsa-sha1", "hs2019", "ED25519", ""] {
            #expect(throws: HTTPSignatureError.unsupportedAlgorithm(name)) { try HTTPSignatureAlgorithms.parse(name) }
        }
        #expect(HTTPSignatureAlgorithms.default(for: .rsa(bits: 2048)) == .rsaPSSSHA512)
        #expect(HTTPSignatureAlgorithms.default(for: .p256) == .ecdsaP256SHA256)
        #expect(HTTPSignatureAlgorithms.default(for: .p384) == .ecdsaP384SHA384)
        #expect(HTTPSignatureAlgorithms.default(for: .ed25519) == .ed25519)
    }

    @Test("a request signed with the default components verifies", arguments: HTTPSignatureAlgorithms.supported)
    func defaultComponents(_ algorithm: SignatureAlgorithm) async throws {
        let fixture = try SigningFixture.make(algorithm)
        var request = HTTPTestSupport.sampleRequest()
        let input = try await Self.signer(fixture).sign(&request)
        #expect(input.components == [.method, .targetURI])
        #expect(input.parameters.created == HTTPTestSupport.now)
        #expect(input.parameters.algorithm == algorithm.rawValue)
        #expect(input.parameters.keyID == "client-1")
        #expect(input.parameters.expires == nil && input.parameters.tag == nil)
        let nonce = try #require(input.parameters.nonce)
        #expect(nonce.count == 22, "16 random bytes in unpadded base64url")
        #expect(nonce.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }))
        #expect(request.headerFields[.contentDigest] == nil)

        let params = "(\"@method\" \"@target-uri\");created=1700000000;nonce=\"\(nonce)\";alg=\"\(algorithm.rawValue)\";keyid=\"client-1\""
        #expect(request.headerFields[values: .signatureInput] == ["sig1=" + params])
        #expect(
            try input.signatureBase(for: .request(request))
                == "\"@method\": POST\n\"@target-uri\": https://api.example.com/v1/orders?id=7\n\"@signature-params\": " + params)
        #expect(try HTTPTestSupport.signature("sig1", in: request.headerFields).count == fixture.signatureLength)

        let verified = try await Self.verifier(["client-1": fixture.verificationKey]).verify(request, body: nil)
        #expect(verified.label == "sig1")
        #expect(verified.keyID == "client-1")
        #expect(verified.algorithm == algorithm)
        #expect(verified.input == input)

        // Each signature gets a fresh nonce.
        var again = HTTPTestSupport.sampleRequest()
        let againInput = try await Self.signer(fixture).sign(&again)
        #expect(againInput.parameters.nonce != nonce)
    }

    @Test("a body gets a covered sha-512 Content-Digest and verifies with that body", arguments: HTTPSignatureAlgorithms.supported)
    func withBody(_ algorithm: SignatureAlgorithm) async throws {
        let fixture = try SigningFixture.make(algorithm)
        let body = HTTPTestSupport.sampleBody
        var request = HTTPTestSupport.sampleRequest()
        let input = try await Self.signer(fixture).sign(&request, body: body)
        #expect(request.headerFields[values: .contentDigest] == [HTTPTestSupport.sampleBodyContentDigest])
        #expect(input.components == [.method, .targetURI, .contentDigest])
        let verifier = Self.verifier(["client-1": fixture.verificationKey])
        let verified = try await verifier.verify(request, body: body)
        #expect(verified.input.components.contains(.contentDigest))
        // The same through digests computed while the body streamed.
        #expect(try await verifier.verify(.request(request), bodyDigests: HTTPTestSupport.digests(body)).label == "sig1")
    }

    @Test("a Content-Digest the application set is kept, and covered")
    func existingContentDigest() async throws {
        let fixture = try SigningFixture.make(.ecdsaP384SHA384)
        let body = HTTPTestSupport.sampleBody
        var request = HTTPTestSupport.sampleRequest()
        let sha256 = ContentDigest.fieldValue(for: body, algorithm: .sha256)
        request.headerFields[.contentDigest] = sha256
        let input = try await Self.signer(fixture).sign(&request, body: body)
        #expect(request.headerFields[values: .contentDigest] == [sha256])
        #expect(input.components.last == .contentDigest)
        _ = try await Self.verifier(["client-1": fixture.verificationKey]).verify(request, body: body)
    }

    @Test("alg may be left out; the key's algorithm still applies", arguments: HTTPSignatureAlgorithms.supported)
    func withoutAlg(_ algorithm: SignatureAlgorithm) async throws {
        let fixture = try SigningFixture.make(algorithm)
        var signer = Self.signer(fixture)
        signer.includeAlgorithm = false
        var request = HTTPTestSupport.sampleRequest()
        let input = try await signer.sign(&request)
        #expect(input.parameters.algorithm == nil)
        #expect(request.headerFields[.signatureInput]?.contains("alg=") == false)
        let verified = try await Self.verifier(["client-1": fixture.verificationKey]).verify(request, body: nil)
        #expect(verified.algorithm == algorithm)
        #expect(verified.input.parameters.algorithm == nil)
    }

    @Test("two labelled signatures (ed25519 sig1, HMAC sig2): keyid or label picks one; otherwise the first that passes")
    func twoSignatures() async throws {
        let ed = try SigningFixture.make(.ed25519)
        let mac = try SigningFixture.make(.hmacSHA256)
        let body = HTTPTestSupport.sampleBody
        var request = HTTPTestSupport.sampleRequest()
        try await Self.signer(ed, keyID: "ed-key").sign(&request, body: body)
        var second = Self.signer(mac, keyID: "mac-key")
        second.label = "sig2"
        second.components = [.method, .targetURI, .contentDigest, SignatureComponent("x-account")]
        try await second.sign(&request, body: body)
        #expect(request.headerFields[values: .signatureInput].count == 2)
        #expect(request.headerFields[values: .signature].count == 2)
        #expect(request.headerFields[values: .contentDigest].count == 1)
        #expect(try HTTPTestSupport.signature("sig1", in: request.headerFields).count == 64)
        #expect(try HTTPTestSupport.signature("sig2", in: request.headerFields).count == 32)

        let both = Self.verifier(["ed-key": ed.verificationKey, "mac-key": mac.verificationKey])
        #expect(try await both.verify(request, body: body, keyID: "mac-key").label == "sig2")
        #expect(try await both.verify(request, body: body, keyID: "ed-key").label == "sig1")
        let bySig2 = try await both.verify(request, body: body, label: "sig2")
        #expect(bySig2.keyID == "mac-key" && bySig2.algorithm == .hmacSHA256)
        #expect(bySig2.input.components.contains(SignatureComponent("X-Account")))
        #expect(try await both.verify(request, body: body).label == "sig1")
        // Knowing only the HMAC key: sig1 fails (unknown key), sig2 passes.
        #expect(try await Self.verifier(["mac-key": mac.verificationKey]).verify(request, body: body).label == "sig2")

        let noKeyID = try await HTTPTestSupport.thrown { try await both.verify(request, body: body, keyID: "nobody") }
        #expect(noKeyID.code == "missingSignature")
        let noLabel = try await HTTPTestSupport.thrown { try await both.verify(request, body: body, label: "sig3") }
        #expect(noLabel.code == "missingSignature")
        // A label already used is refused.
        let reused = try await HTTPTestSupport.thrown {
            var copy = request
            return try await Self.signer(ed, keyID: "ed-key").sign(&copy)
        }
        #expect(reused.code == "invalidArgument")
    }

    @Test("a response signed over @status and the request's @method and @target-uri (req) verifies with that request only")
    func responseWithRequestComponents() async throws {
        let fixture = try SigningFixture.make(.ecdsaP256SHA256)
        let request = HTTPTestSupport.sampleRequest()
        var response = HTTPResponse(status: .created, headerFields: [.contentType: "application/json"])
        var methodOfRequest = SignatureComponent.method
        methodOfRequest.fromRequest = true
        var uriOfRequest = SignatureComponent.targetURI
        uriOfRequest.fromRequest = true
        var signer = Self.signer(fixture, keyID: "server")
        let components = [SignatureComponent.status, SignatureComponent("content-type"), .contentDigest, methodOfRequest, uriOfRequest]
        signer.components = components
        let body = Array("{\"id\": 7}".utf8)
        let input = try await signer.sign(&response, body: body, answering: request)
        #expect(input.components == components)
        let base = try input.signatureBase(for: .response(response, answering: request))
        #expect(base.hasPrefix("\"@status\": 201\n\"content-type\": application/json\n\"content-digest\": sha-512=:"))
        #expect(
            base.contains(
                "\n\"@method\";req: POST\n\"@target-uri\";req: https://api.example.com/v1/orders?id=7\n\"@signature-params\": "
                    + "(\"@status\" \"content-type\" \"content-digest\" \"@method\";req \"@target-uri\";req);created=1700000000;"))

        let verifier = Self.verifier(["server": fixture.verificationKey])
        let digests = HTTPTestSupport.digests(body)
        let verified = try await verifier.verify(.response(response, answering: request), bodyDigests: digests)
        #expect(verified.input.components == components)
        var otherRequest = request
        otherRequest.path = "/v1/orders?id=8"
        let changed = try await HTTPTestSupport.thrown { try await verifier.verify(.response(response, answering: otherRequest), bodyDigests: digests) }
        #expect(changed == .signatureInvalid(label: "sig1"))
        let alone = try await HTTPTestSupport.thrown { try await verifier.verify(.response(response), bodyDigests: digests) }
        #expect(alone.code == "missingComponent")
    }

    @Test("a response signed with the defaults covers @status, and content-digest with a body")
    func responseDefaults() async throws {
        let fixture = try SigningFixture.make(.ed25519)
        let verifier = Self.verifier(["client-1": fixture.verificationKey])
        var empty = HTTPResponse(status: .noContent)
        let emptyInput = try await Self.signer(fixture).sign(&empty)
        #expect(emptyInput.components == [.status])
        _ = try await verifier.verify(.response(empty), bodyDigests: nil)

        var response = HTTPResponse(status: .ok)
        let input = try await Self.signer(fixture).sign(&response, body: HTTPTestSupport.sampleBody)
        #expect(input.components == [.status, .contentDigest])
        #expect(response.headerFields[.contentDigest] == HTTPTestSupport.sampleBodyContentDigest)
        let digests = HTTPTestSupport.digests(HTTPTestSupport.sampleBody)
        _ = try await verifier.verify(.response(response), bodyDigests: digests)
        var changed = response
        changed.status = .accepted
        let error = try await HTTPTestSupport.thrown { try await verifier.verify(.response(changed), bodyDigests: digests) }
        #expect(error == .signatureInvalid(label: "sig1"))
    }

    @Test("expires and tag are signed; a policy can require a tag")
    func expiresAndTag() async throws {
        let fixture = try SigningFixture.make(.ecdsaP256SHA256)
        var signer = Self.signer(fixture)
        signer.expiresAfter = .seconds(60)
        signer.tag = "orders-api"
        var request = HTTPTestSupport.sampleRequest()
        let input = try await signer.sign(&request)
        #expect(input.parameters.expires == HTTPTestSupport.now + 60)
        #expect(input.parameters.tag == "orders-api")
        let field = try #require(request.headerFields[.signatureInput])
        #expect(field.contains(";created=1700000000;expires=1700000060;"))
        #expect(field.hasSuffix(";keyid=\"client-1\";tag=\"orders-api\""))
        var policy = HTTPSignaturePolicy()
        policy.requiredTag = "orders-api"
        _ = try await Self.verifier(["client-1": fixture.verificationKey], policy: policy).verify(request, body: nil)
        policy.requiredTag = "payments-api"
        let error = try await HTTPTestSupport.thrown {
            try await Self.verifier(["client-1": fixture.verificationKey], policy: policy).verify(request, body: nil)
        }
        #expect(error == .missingParameter("tag=\"payments-api\""))
    }

    @Test("a public key's default keyid is its fingerprint, found by StaticHTTPSignatureKeys(publicKeys:)")
    func fingerprintKeyID() async throws {
        for algorithm in [SignatureAlgorithm.ed25519, .ecdsaP256SHA256, .ecdsaP384SHA384, .rsaPSSSHA512] {
            let fixture = try SigningFixture.make(algorithm)
            let publicKey = try #require(fixture.publicKey)
            var request = HTTPTestSupport.sampleRequest()
            let input = try await Self.signer(fixture, keyID: nil).sign(&request)
            #expect(input.parameters.keyID == publicKey.fingerprint.description)
            #expect(input.parameters.keyID?.hasPrefix("sha256/") == true)
            let verifier = HTTPMessageVerifier(
                keys: StaticHTTPSignatureKeys(publicKeys: [publicKey]), clock: fixedClock(HTTPTestSupport.now))
            #expect(try await verifier.verify(request, body: nil).algorithm == algorithm)
        }
    }

    @Test("an HMAC key needs a key id; a label must be a structured-field key")
    func signerArguments() async throws {
        let mac = try SigningFixture.make(.hmacSHA256)
        let request = HTTPTestSupport.sampleRequest()
        let noKeyID = Self.signer(mac, keyID: nil)
        let missing = try await HTTPTestSupport.thrown {
            var copy = request
            return try await noKeyID.sign(&copy)
        }
        #expect(missing.code == "invalidArgument")
        for label in ["Sig1", "1sig", "sig 1", "sig=1", ""] {
            var signer = Self.signer(mac)
            signer.label = label
            let error = try await HTTPTestSupport.thrown {
                var copy = request
                return try await signer.sign(&copy)
            }
            #expect(error.code == "invalidArgument", "label \"\(label)\"")
        }
        var good = Self.signer(mac)
        good.label = "proxy_sig-2.a"
        var copy = request
        try await good.sign(&copy)
        #expect(copy.headerFields[.signatureInput]?.hasPrefix("proxy_sig-2.a=(") == true)
    }

    @Test("another party's signature that Signet cannot read does not stop its own from verifying")
    func unreadableNeighbour() async throws {
        let fixture = try SigningFixture.make(.ed25519)
        var request = HTTPTestSupport.sampleRequest()
        // A proxy's signature over a trailer (tr is not supported) and with a bad signature value.
        request.headerFields.append(HTTPField(name: .signatureInput, value: #"proxy=("x-trailer";tr);created=1700000000;keyid="proxy""#))
        request.headerFields.append(HTTPField(name: .signature, value: "proxy=not-a-byte-sequence"))
        var signer = Self.signer(fixture)
        signer.label = "sig2"
        try await signer.sign(&request)
        let verifier = Self.verifier(["client-1": fixture.verificationKey])
        #expect(try await verifier.verify(request, body: nil).label == "sig2")
        #expect(try await verifier.verify(request, body: nil, keyID: "client-1").label == "sig2")
        let proxyOnly = try await HTTPTestSupport.thrown { try await verifier.verify(request, body: nil, label: "proxy") }
        guard case .malformedField = proxyOnly else {
            Issue.record("the unreadable signature itself must still be refused as malformed: \(proxyOnly)")
            return
        }
    }
}
