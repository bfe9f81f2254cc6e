import Foundation
import SignetCore
import SignetServer
import SignetTestSupport
import Testing

/// Accounts stored before the current e-mail rules (trimmed and lower-cased only) keep their
/// owners: they sign in and are found by admins in the form they were stored in, and the
/// composed spelling of a decomposed stored address is taken, not a second account.
@Suite struct LegacyAccountTests {
    static let password = "correct horse battery"

    /// Stores a user under `email` exactly as given, as an older server would have.
    static func storeLegacy(_ server: TestServer, email: String) async throws {
        let hash = try PasswordHasher(algorithm: .scrypt(logN: 10, r: 8, p: 1)).hash(SecretBytes(Array(password.utf8)))
        try await server.store.users.add(UserRecord(
            id: UUID().uuidString.lowercased(), email: email, displayName: "Legacy", passwordHash: hash, createdAt: 0))
    }

    @Test func accountsStoredInOlderFormsStillSignInAndAreNotDuplicated() async throws {
        try await TestServer.with { server in
            let decomposed = "jose\u{301}@example.com"
            let lookalike = "p\u{430}ypal@example.com"  // a Cyrillic а, refused for new accounts
            try await Self.storeLegacy(server, email: decomposed)
            try await Self.storeLegacy(server, email: lookalike)
            for typed in [decomposed, "jos\u{E9}@example.com", "JOSE\u{301}@Example.com", lookalike] {
                let session = try await server.api.send(
                    .post, "/v1/sessions", json: UserAPI.SignIn(email: typed, password: Self.password), signer: server.appSigner)
                #expect(session.status == 201, "\(typed.unicodeScalars.map { String($0.value, radix: 16) }): \(session.text)")
            }
            // The composed spelling of the stored decomposed address is that account's, not a new one.
            let again = try await server.api.send(
                .post, "/v1/users", json: UserAPI.Registration(email: "jos\u{E9}@example.com", password: Self.password, displayName: "J"),
                signer: server.appSigner)
            #expect(again.status == 409 && again.problemCode == "server.conflict", "\(again.text)")
            // New look-alike registrations stay refused.
            let fresh = try await server.api.send(
                .post, "/v1/users", json: UserAPI.Registration(email: "p\u{430}ypal2@example.com", password: Self.password, displayName: "P"),
                signer: server.appSigner)
            #expect(fresh.status == 422, "\(fresh.text)")
            // An admin reaches the decomposed account by its composed spelling.
            try await server.adminClient.disableUser(email: "jos\u{E9}@example.com")
            let disabled = try await server.api.send(
                .post, "/v1/sessions", json: UserAPI.SignIn(email: decomposed, password: Self.password), signer: server.appSigner)
            #expect(disabled.status == 403, "\(disabled.text)")
        }
    }
}
