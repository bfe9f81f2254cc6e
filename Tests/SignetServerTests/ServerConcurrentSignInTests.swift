import Foundation
import SignetServer
import SignetTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The third adversarial round's critical finding: three sign-ins at once (each ends in a
/// write transaction) deadlocked SQLite for good — statements waiting for the write lock spun
/// in sqlite-nio's busy handler on the two threads of Swift's shared pool, so the transaction
/// holding the lock never got a thread for its COMMIT. Now SQLite has threads of its own and
/// a bounded, sleeping busy wait. Against a `signet serve` process (a deadlocked server must
/// not take the test process with it: the requests then fail at the hang guard and the server
/// is killed), over TLS; every wait is a hang guard.
@Suite("Envelope: concurrent sign-ins", .serialized)
struct ServerConcurrentSignInTests {
    @Test func manySignInsAtOnceAllGetAnAnswerAndTheServerStaysUsable() async throws {
        let folder = try TemporaryFolder(prefix: "signet-concurrent-signin")
        let keys = try ServerKeys.initialise(in: folder)
        let server = try await ServeProcess.start(in: folder)
        defer { server.process.stop(signal: SIGKILL) }
        try await keys.enrolApp(on: server)
        let api = try server.api
        let appSigner = keys.appSigner
        let accounts = (0..<6).map { "user\($0)@example.com" }
        for email in accounts {
            let registered = try await api.send(
                .post, "/v1/users", json: UserAPI.Registration(email: email, password: "correct horse battery", displayName: "User"),
                signer: appSigner)
            try #require(registered.status == 201, "\(registered.text)")
        }
        // Six at a time, 60 in all: each is a session write.
        let statuses = try await withThrowingTaskGroup(of: [Int].self) { group in
            for worker in 0..<6 {
                group.addTask {
                    var seen: [Int] = []
                    for round in 0..<10 {
                        let email = accounts[(worker + round) % accounts.count]
                        let answer = try await api.send(
                            .post, "/v1/sessions", json: UserAPI.SignIn(email: email, password: "correct horse battery"), signer: appSigner)
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
        let trust = try await api.send(.get, "/v1/trust", signer: appSigner)
        #expect(trust.status == 200, "\(trust.text)")
        let late = try await api.send(
            .post, "/v1/users", json: UserAPI.Registration(email: "late@example.com", password: "correct horse battery", displayName: "Late"),
            signer: appSigner)
        #expect(late.status == 201, "\(late.text)")
        let session = try await api.send(
            .post, "/v1/sessions", json: UserAPI.SignIn(email: "late@example.com", password: "correct horse battery"), signer: appSigner)
        #expect(session.status == 201, "\(session.text)")
    }
}
