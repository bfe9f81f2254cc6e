import Foundation
import SignetServer
import SignetTestSupport
import Testing

/// The third adversarial round's critical finding: three sign-ins at once (each ends in a
/// write transaction) deadlocked SQLite for good — statements waiting for the write lock spun
/// in sqlite-nio's busy handler on the two threads of Swift's shared pool, so the transaction
/// holding the lock never got a thread for its COMMIT. Now SQLite has threads of its own and
/// a bounded, sleeping busy wait. Real requests over TLS; every wait is a hang guard.
@Suite("Envelope: concurrent sign-ins", .serialized)
struct ServerConcurrentSignInTests {
    @Test func manySignInsAtOnceAllGetAnAnswerAndTheServerStaysUsable() async throws {
        try await TestServer.with { server in
            let accounts = (0..<6).map { "user\($0)@example.com" }
            for email in accounts {
                let registered = try await server.api.send(
                    .post, "/v1/users", json: UserAPI.Registration(email: email, password: "correct horse battery", displayName: "User"),
                    signer: server.appSigner)
                try #require(registered.status == 201, "\(registered.text)")
            }
            // Six at a time, 60 in all: each is a session write.
            let statuses = try await withThrowingTaskGroup(of: [Int].self) { group in
                for worker in 0..<6 {
                    group.addTask {
                        var seen: [Int] = []
                        for round in 0..<10 {
                            let email = accounts[(worker + round) % accounts.count]
                            let answer = try await server.api.send(
                                .post, "/v1/sessions", json: UserAPI.SignIn(email: email, password: "correct horse battery"), signer: server.appSigner)
                            seen.append(answer.status)
                        }
                        return seen
                    }
                }
                var all: [Int] = []
                for try await seen in group { all += seen }
                return all
            }
            #expect(statuses.count == 60)
            #expect(statuses.allSatisfy { [201, 429, 503].contains($0) }, "\(statuses)")
            #expect(statuses.filter { $0 == 201 }.count >= 30, "too few sign-ins succeeded: \(statuses)")
            // Signed requests are still answered, and a new sign-in works.
            let trust = try await server.api.send(.get, "/v1/trust", signer: server.appSigner)
            #expect(trust.status == 200, "\(trust.text)")
            _ = try await registerAndSignIn(server, email: "late@example.com")
        }
    }
}
