import AsyncHTTPClient
import Foundation
import HTTPTypes
import NIOCore
import SignetCore
import SignetHTTP
import SignetHTTPClient
import Testing

/// RFC 9421 signatures made with SignetHTTP, sent over real HTTP by AsyncHTTPClient, and
/// checked by `HTTPSignatureAuthenticator` in a real Hummingbird server on loopback.
@Suite("HTTPSignatureAuthenticator on a live Hummingbird server", .timeLimit(.minutes(2)))
struct SignedRequestsEndToEndTests {
    @Test("a signed GET and a signed POST with a body are accepted", arguments: SigningKeyChoice.allCases)
    func signedRequestsAccepted(choice: SigningKeyChoice) async throws {
        try await withLiveServer { server in
            let signer = try server.keys.signer(choice)
            let expected = server.keys.keyID(choice)

            let get = try await server.sendSigned(.get, "/hello", with: signer)
            #expect(get.status == 200, "\(get)")
            #expect(get.body == "hello")
            #expect(get.signedBy == expected)

            let payload = #"{"order": 42, "note": "ünïcode ✓"}"#
            let post = try await server.sendSigned(.post, "/echo", body: payload, with: signer)
            #expect(post.status == 200, "\(post)")
            #expect(post.body == payload)
            #expect(post.signedBy == expected)

            // A body large enough to arrive in many pieces is collected whole, verified
            // against its digest, and still readable by the route.
            let large = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
            let big = try await server.sendSigned(.post, "/echo", bytes: large, with: signer)
            #expect(big.status == 200, "\(big.status) \(big.errorMessage)")
            #expect(big.bytes == large)
            #expect(big.signedBy == expected)
        }
    }

    @Test("the signed component values match what the server sees: authority with port, scheme http")
    func signedComponentsMatchServer() async throws {
        try await withLiveServer { server in
            // Cover @authority, @scheme, @path and @query explicitly as well.
            var signer = try server.keys.signer(.ed25519)
            signer.components = [.method, .targetURI, .authority, SignatureComponent("@scheme"), .path, .query, .contentDigest]
            let reply = try await server.sendSigned(.post, "/echo?x=1&y=%20z", body: "payload", with: signer)
            #expect(reply.status == 200, "\(reply)")
            #expect(reply.body == "payload")

            // Signed for another authority than the Host the client sends: refused.
            var elsewhere = server.head(.get, "/hello")
            elsewhere.authority = "localhost:\(server.port)"
            try await server.keys.signer(.ed25519).sign(&elsewhere)
            elsewhere.authority = server.authority
            let refused = try await server.send(elsewhere)
            #expect(refused.status == 401, "\(refused)")
            #expect(refused.errorMessage.contains("does not verify"), "\(refused)")
        }
    }

    @Test("the same signed request sent twice: the second is a replay")
    func replayRefused() async throws {
        try await withLiveServer { server in
            let body = Array("pay 10 to alice".utf8)
            let signed = try await server.signed(.post, "/echo", body: body, with: try server.keys.signer(.ed25519))
            let once = try HTTPClientRequest(signed, body: body)
            let first = try await server.send(once)
            #expect(first.status == 200, "\(first)")
            #expect(first.body == "pay 10 to alice")
            let second = try await server.send(once)
            #expect(second.status == 401, "\(second)")
            #expect(second.errorMessage.contains("replay"), "\(second)")
            #expect(second.body != "pay 10 to alice")
        }
    }

    @Test("a body other than the one signed is refused on its content digest")
    func tamperedBody() async throws {
        try await withLiveServer { server in
            let signed = try await server.signed(.post, "/echo", body: Array("amount=10".utf8), with: try server.keys.signer(.ecdsaP256))
            let swapped = try await server.send(signed, body: Array("amount=99999".utf8))
            #expect(swapped.status == 401, "\(swapped)")
            #expect(swapped.errorMessage.contains("content digest"), "\(swapped)")
            #expect(swapped.signedBy == nil)

            // The signed fields with the body dropped: the digest no longer matches either.
            let emptied = try await server.send(signed, body: nil)
            #expect(emptied.status == 401, "\(emptied)")
            #expect(emptied.errorMessage.contains("content digest"), "\(emptied)")
        }
    }

    @Test("a body whose digest the signature does not cover is refused")
    func bodyWithoutSignedDigest() async throws {
        try await withLiveServer { server in
            var signer = try server.keys.signer(.ed25519)
            signer.components = [.method, .targetURI]
            var request = server.head(.post, "/echo")
            try await signer.sign(&request)  // no body given: no Content-Digest
            let reply = try await server.send(request, body: Array("unsigned body".utf8))
            #expect(reply.status == 401, "\(reply)")
            #expect(reply.errorMessage.contains("content-digest"), "\(reply)")
        }
    }

    @Test("an unsigned request gets 401 with an Accept-Signature hint")
    func unsignedRequest() async throws {
        try await withLiveServer { server in
            let cases: [(HTTPRequest.Method, String, [UInt8]?)] = [(.get, "/hello", nil), (.post, "/echo", Array("x".utf8))]
            for (method, path, body) in cases {
                let reply = try await server.send(server.head(method, path), body: body)
                #expect(reply.status == 401, "\(reply)")
                #expect(reply.errorMessage.contains("no usable signature"), "\(reply)")
                let hint = try #require(reply.headers.first(name: "Accept-Signature"), "\(reply)")
                #expect(hint.contains("\"@method\""), "\(hint)")
                #expect(hint.contains("\"@target-uri\""), "\(hint)")
                #expect(hint.contains("content-digest"), "\(hint)")
                #expect(hint.contains("nonce"), "\(hint)")
            }
        }
    }

    @Test("a key the server does not know is refused as an unknown keyid")
    func unknownKey() async throws {
        try await withLiveServer { server in
            let signer = try server.keys.strangerSigner()
            let reply = try await server.sendSigned(.post, "/echo", body: "hi", with: signer)
            #expect(reply.status == 401, "\(reply)")
            #expect(reply.errorMessage.contains("unknown keyid"), "\(reply)")
            #expect(reply.errorMessage.contains(server.keys.stranger.publicKey.fingerprint.description), "\(reply)")
            #expect(reply.headers.first(name: "Accept-Signature") != nil)

            // A known keyid with another key's signature does not verify.
            var impostor = try server.keys.strangerSigner()
            impostor.keyID = server.keys.keyID(.ed25519)
            let forged = try await server.sendSigned(.get, "/hello", with: impostor)
            #expect(forged.status == 401, "\(forged)")
            #expect(forged.errorMessage.contains("does not verify"), "\(forged)")

            // An HMAC signature made with the wrong secret under the right keyid.
            let wrongSecret = HTTPMessageSigner(key: .hmacSHA256(SecretBytes(Array(repeating: UInt8(7), count: 32))), keyID: TestKeys.hmacKeyID)
            let badMAC = try await server.sendSigned(.get, "/hello", with: wrongSecret)
            #expect(badMAC.status == 401, "\(badMAC)")
        }
    }

    @Test("created an hour ago, or an hour ahead, is refused")
    func staleOrFutureCreated() async throws {
        try await withLiveServer { server in
            var stale = try server.keys.signer(.ed25519)
            stale.clock = WallClock { Date(timeIntervalSinceNow: -3600) }
            let old = try await server.sendSigned(.get, "/hello", with: stale)
            #expect(old.status == 401, "\(old)")
            #expect(old.errorMessage.contains("s ago"), "\(old)")

            var ahead = try server.keys.signer(.hmacSHA256)
            ahead.clock = WallClock { Date(timeIntervalSinceNow: 3600) }
            let future = try await server.sendSigned(.get, "/hello", with: ahead)
            #expect(future.status == 401, "\(future)")
            #expect(future.errorMessage.contains("future"), "\(future)")

            // Within the window (two minutes ago) is still fine.
            var recent = try server.keys.signer(.ed25519)
            recent.clock = WallClock { Date(timeIntervalSinceNow: -120) }
            let fine = try await server.sendSigned(.get, "/hello", with: recent)
            #expect(fine.status == 200, "\(fine)")
        }
    }

    @Test("missingSignature: .passThrough lets unsigned requests through but still refuses bad signatures")
    func passThrough() async throws {
        try await withLiveServer { server in
            let anonymous = try await server.send(server.head(.get, "/open/hello"))
            #expect(anonymous.status == 200, "\(anonymous)")
            #expect(anonymous.body == "anonymous")

            let signed = try await server.sendSigned(.get, "/open/hello", with: try server.keys.signer(.ecdsaP256))
            #expect(signed.status == 200, "\(signed)")
            #expect(signed.body == "signed by \(server.keys.keyID(.ecdsaP256))")

            let stranger = try await server.sendSigned(.get, "/open/hello", with: try server.keys.strangerSigner())
            #expect(stranger.status == 401, "\(stranger)")
            #expect(stranger.errorMessage.contains("unknown keyid"), "\(stranger)")

            // Half a signature (Signature-Input without Signature) is not "no signature".
            var half = try await server.signed(.get, "/open/hello", with: try server.keys.signer(.ed25519))
            half.headerFields[.signature] = nil
            let broken = try await server.send(half)
            #expect(broken.status == 401, "\(broken)")
            #expect(broken.body != "anonymous")

            // The same server's default routes still reject unsigned requests.
            let rejected = try await server.send(server.head(.get, "/hello"))
            #expect(rejected.status == 401, "\(rejected)")
        }
    }

    @Test("a request signed for POST /echo and sent to /echo2, or as PUT /echo, is refused by the signature check")
    func tamperedPath() async throws {
        try await withLiveServer { server in
            let signer = try server.keys.signer(.ed25519)
            let body = Array("move me".utf8)
            // /echo2 exists and accepts requests signed for it.
            let direct = try await server.sendSigned(.post, "/echo2", bytes: body, with: signer)
            #expect(direct.status == 200, "\(direct)")
            #expect(direct.body == "move me")

            var moved = try await server.signed(.post, "/echo", body: body, with: signer)
            moved.path = "/echo2"
            let reply = try await server.send(moved, body: body)
            #expect(reply.status == 401, "\(reply)")
            #expect(reply.errorMessage == HTTPSignatureError.signatureInvalid(label: "sig1").description, "\(reply)")
            #expect(reply.signedBy == nil)

            // And a changed method on the same path. PUT /echo is a route too (a PUT signed
            // as PUT is accepted), so the refusal can only come from the signature check.
            let directPut = try await server.sendSigned(.put, "/echo", bytes: body, with: signer)
            #expect(directPut.status == 200, "\(directPut)")
            #expect(directPut.body == "move me")
            var changed = try await server.signed(.post, "/echo", body: body, with: signer)
            changed.method = .put
            let put = try await server.send(changed, body: body)
            #expect(put.status == 401, "\(put)")
            #expect(put.errorMessage == HTTPSignatureError.signatureInvalid(label: "sig1").description, "\(put)")
            #expect(put.signedBy == nil)
            #expect(put.body != "move me")
        }
    }

    @Test("a body over the authenticator's limit gets 413, one under it 200")
    func bodyLimit() async throws {
        try await withLiveServer { server in
            let signer = try server.keys.signer(.ed25519)
            let small = try await server.sendSigned(.post, "/small/echo", bytes: Array(repeating: UInt8(ascii: "a"), count: 100), with: signer)
            #expect(small.status == 200, "\(small)")
            #expect(small.body == String(repeating: "a", count: 100))
            let big = try await server.sendSigned(
                .post, "/small/echo", bytes: Array(repeating: UInt8(ascii: "b"), count: TestRoutes.smallBodyLimit * 4), with: signer)
            #expect(big.status == 413, "\(big.status) \(big.errorMessage)")
        }
    }
}
