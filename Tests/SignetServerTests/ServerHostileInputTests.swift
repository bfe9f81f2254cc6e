import Foundation
import HTTPTypes
import SignetCore
import SignetHTTP
import SignetServer
import SignetTestSupport
import Testing

/// Hostile bodies and paths on every endpoint that reads one: each gets a precise 4xx with a
/// problem document — never a 5xx — and nothing is stored.
@Suite struct ServerHostileInputTests {
    struct Case: Sendable, CustomStringConvertible {
        var name: String
        var body: [UInt8]
        var contentType: String? = "application/json"
        var status: Int
        var description: String { name }
    }

    static func text(_ value: String) -> [UInt8] { Array(value.utf8) }

    static let cases: [Case] = [
        Case(name: "truncated JSON", body: text(#"{"email":"a@b.co","pass"#), status: 400),
        Case(name: "not JSON", body: text("email=a@b.co&password=x"), status: 400),
        Case(name: "empty body", body: [], status: 400),
        Case(name: "an array", body: text("[]"), status: 422),
        Case(name: "a string", body: text(#""hello""#), status: 422),
        Case(name: "wrong type", body: text(#"{"email":5,"password":"0123456789","displayName":"x","name":5}"#), status: 422),
        Case(name: "null field", body: text(#"{"email":null,"password":"0123456789","displayName":"x","name":null}"#), status: 422),
        Case(name: "missing fields", body: text("{}"), status: 422),
        Case(name: "invalid UTF-8", body: text(#"{"email":""#) + [0xFF, 0xFE, 0xC0] + text(#"","password":"x"}"#), status: 400),
        Case(name: "over the size limit", body: text(#"{"email":""#) + Array(repeating: UInt8(ascii: "a"), count: 70_000) + text(#""}"#), status: 413),
        Case(name: "text/plain", body: text(#"{"email":"a@b.co"}"#), contentType: "text/plain", status: 415),
        Case(name: "no content type", body: text(#"{"email":"a@b.co"}"#), contentType: nil, status: 415),
        Case(name: "deep nesting", body: Array(repeating: UInt8(ascii: "["), count: 20_000) + Array(repeating: UInt8(ascii: "]"), count: 20_000), status: 400),
    ]

    static let endpoints: [(String, Bool)] = [("/v1/users", false), ("/v1/sessions", false), ("/v1/admin/apps", true), ("/v1/admin/admins", true)]

    @Test(arguments: cases)
    func hostileBodiesGetA4xxProblem(_ hostile: Case) async throws {
        try await TestServer.with { server in
            for (path, admin) in Self.endpoints {
                let response = try await server.api.sendRaw(
                    .post, path, body: hostile.body, contentType: hostile.contentType, signer: admin ? server.adminSigner : server.appSigner)
                // The empty body and deep nesting may be refused as either malformed or misshapen.
                let allowed: Set<Int> = hostile.status == 400 ? [400, 422] : [hostile.status]
                #expect(allowed.contains(response.status), "\(path) \(hostile.name): \(response.status) \(response.text)")
                #expect(response.head.headerFields[.contentType] == "application/problem+json", "\(path) \(hostile.name)")
                #expect(response.problemCode?.hasPrefix("server.") == true, "\(path) \(hostile.name)")
            }
            #expect(try await server.store.users.all().isEmpty)
            #expect(try await server.store.principals.all(role: .app).count == 1)
        }
    }

    @Test func fieldRulesNameTheField() async throws {
        try await TestServer.with { server in
            let checks: [(UserAPI.Registration, String)] = [
                (.init(email: String(repeating: "a", count: 250) + "@example.com", password: "0123456789", displayName: "x"), "email"),
                (.init(email: "no-at-sign.example.com", password: "0123456789", displayName: "x"), "email"),
                (.init(email: "a b@example.com", password: "0123456789", displayName: "x"), "email"),
                (.init(email: "a\u{0}@example.com", password: "0123456789", displayName: "x"), "email"),
                (.init(email: "a@example.com", password: "short", displayName: "x"), "password"),
                (.init(email: "a@example.com", password: String(repeating: "p", count: 2000), displayName: "x"), "password"),
                (.init(email: "a@example.com", password: "0123456789", displayName: String(repeating: "n", count: 101)), "displayName"),
                (.init(email: "a@example.com", password: "0123456789", displayName: "tab\u{7}bell"), "displayName"),
                (.init(email: "a@example.com", password: "0123456789", displayName: "   "), "displayName"),
            ]
            for (registration, field) in checks {
                let response = try await server.api.send(.post, "/v1/users", json: registration, signer: server.appSigner)
                #expect(response.status == 422, "\(field): \(response.text)")
                #expect(try response.decode(ProblemDocument.self).detail.hasPrefix(field + ":"), "\(response.text)")
            }
            #expect(try await server.store.users.all().isEmpty)
        }
    }

    @Test func sqlMetacharactersAreJustText() async throws {
        try await TestServer.with { server in
            let email = "o'brien--@example.com"
            let name = "Robert'); DROP TABLE users; --"
            let registered = try await server.api.send(
                .post, "/v1/users", json: UserAPI.Registration(email: email, password: "0123456789", displayName: name), signer: server.appSigner)
            #expect(registered.status == 201, "\(registered.text)")
            let profile = try registered.decode(UserAPI.Profile.self)
            #expect(profile.displayName == name && profile.email == email)
            let signIn = try await server.api.send(
                .post, "/v1/sessions", json: UserAPI.SignIn(email: "'or'1'='1'--@x.co", password: "' OR '1'='1"), signer: server.appSigner)
            #expect(signIn.status == 401)
            #expect(try await server.store.users.all().map(\.displayName) == [name])
            let app = try await server.api.send(
                .post, "/v1/admin/apps", json: AdminAPI.Enrolment(name: "x'; DELETE FROM principals; --", hmac: true), signer: server.adminSigner)
            #expect(app.status == 422)
            #expect(try await server.store.principals.all(role: .app).count == 1)
        }
    }

    @Test func enrolmentsRefuseWhatIsNotAPublicKey() async throws {
        try await TestServer.with { server in
            let privatePEM = String(decoding: try PrivateKey.generate(.ed25519).encoded(as: .pem), as: UTF8.self)
            let weak = try PrivateKey.generate(.rsa1024, policy: KeyPolicy(allowWeakRSA: true))
            let cases: [(AdminAPI.Enrolment, String)] = [
                (.init(name: "a", publicKey: privatePEM), "private key"),
                (.init(name: "b", publicKey: "not a key at all!"), "neither PEM"),
                (.init(name: "c", publicKey: Base64.encode(weak.publicKey.spkiDER)), "publicKey"),
                (.init(name: "d", publicKey: Base64.encode(server.app.publicKey.spkiDER), algorithm: "rsa-pss-sha512"), "algorithm"),
                (.init(name: "e"), "publicKey"),
                (.init(name: "", hmac: true), "name"),
                (.init(name: String(repeating: "n", count: 65), hmac: true), "name"),
                (.init(name: "../etc", hmac: true), "name"),
            ]
            for (enrolment, expected) in cases {
                let response = try await server.api.send(.post, "/v1/admin/apps", json: enrolment, signer: server.adminSigner)
                #expect(response.status == 422, "\(enrolment.name): \(response.text)")
                #expect(response.text.contains(expected), "\(enrolment.name): \(response.text)")
            }
            // The same key or name again is a conflict.
            let duplicate = try await server.api.send(
                .post, "/v1/admin/apps", json: AdminAPI.Enrolment(name: "other", publicKey: Base64.encode(server.app.publicKey.spkiDER)),
                signer: server.adminSigner)
            #expect(duplicate.status == 409)
            #expect(try await server.store.principals.all(role: .app).count == 1)
        }
    }

    @Test func hostilePathsAndUnknownRoutes() async throws {
        try await TestServer.with { server in
            let cases: [(HTTPRequest.Method, String, Set<Int>)] = [
                (.get, "/v1/nothing-here", [404]),
                (.get, "/nothing", [404]),
                (.post, "/v1/admin/users/not-an-email/disable", [422]),
                (.post, "/v1/admin/users/nobody%40example.com/disable", [404]),
                (.delete, "/v1/admin/apps/..%2F..%2Fetc", [404]),
                (.delete, "/v1/admin/apps/" + String(repeating: "x", count: 3000), [404]),
                (.put, "/v1/me", [404, 405]),
            ]
            for (method, path, statuses) in cases {
                let signer = path.hasPrefix("/v1/admin") ? server.adminSigner : server.appSigner
                let response = try await server.api.send(try await server.api.request(method, path, signer: signer))
                #expect(statuses.contains(response.status), "\(method) \(path.prefix(60)): \(response.status) \(response.text)")
                #expect(response.status < 500)
            }
            // A bearer token that is not one of ours, or far too long.
            for bearer in ["garbage", "sgt_" + String(repeating: "A", count: 5000), "sgt_unknown"] {
                let response = try await server.api.send(.get, "/v1/me", signer: server.appSigner, bearer: bearer)
                #expect(response.status == 401)
            }
        }
    }
}
