import Foundation
import HTTPTypes
import SignetCore
import SignetHTTP
import SignetServer
import SignetTestSupport
import Testing

/// A node on SQLite keeps its replay cache in memory: a restart, however abrupt, must not let a
/// request accepted before it be accepted again after it (docs/server.md "Throughput").
@Suite(.serialized) struct ReplayAcrossRestartTests {
    typealias Nodes = ServerNodesTests

    static func registration(_ name: String, signer: HTTPMessageSigner) async throws -> (HTTPRequest, [UInt8]?) {
        try await Nodes.signed(
            .post, "/v1/users", json: UserAPI.Registration(email: "\(name)@example.com", password: "correct horse battery", displayName: name),
            signer: signer)
    }

    @Test func aRequestAcceptedBeforeKillNineIsRefusedAfterTheRestart() async throws {
        let folder = try TemporaryFolder(prefix: "signet-replay-restart")
        let keys = try ServerKeys.initialise(in: folder)
        let extra = ["--public-url", "https://\(Nodes.publicAuthority)"]
        let first = try await ServeProcess.start(in: folder, extra: extra, name: "first")
        try await Nodes.enrolApp(keys, on: first)

        // One signed now, one dated two minutes ahead (a client clock that runs fast, within
        // the five minutes of skew allowed): both accepted before the kill.
        let present = try await Self.registration("ann", signer: keys.appSigner)
        var fastClock = keys.appSigner
        fastClock.clock = WallClock { Date().addingTimeInterval(120) }
        let future = try await Self.registration("bob", signer: fastClock)
        #expect(try await Nodes.send(present, to: first).status == 201)
        #expect(try await Nodes.send(future, to: first).status == 201)
        // Replays to the same process are refused from memory.
        #expect(try await Nodes.send(present, to: first).status == 401)
        #expect(try await Nodes.send(future, to: first).status == 401)
        _ = first.process.stop(signal: SIGKILL)

        let second = try await ServeProcess.start(in: folder, extra: extra, name: "second")
        defer { second.process.stop() }
        let replayed = try await Nodes.send(present, to: second)
        #expect(replayed.status == 401)
        #expect(replayed.text.contains("precedes the server's start"), "\(replayed.text)")
        #expect(replayed.head.headerFields[.acceptSignature] != nil)
        let replayedFuture = try await Nodes.send(future, to: second)
        #expect(replayedFuture.status == 401)
        #expect(replayedFuture.text.contains("replay"), "\(replayedFuture.text)")
        // Signed again after the restart, the same registration is a new request: 409, the
        // account exists once.
        #expect(try await Nodes.send(try await Self.registration("ann", signer: keys.appSigner), to: second).status == 409)
        #expect(try await Nodes.send(try await Self.registration("cat", signer: keys.appSigner), to: second).status == 201)
        #expect(try await second.api.send(.get, "/v1/health", signer: nil).status == 200)
    }

    /// SIGTERM: the server saves its replay cache, and the next process restores it and keeps
    /// the previous start as the bound — a replay is refused as a replay, and a request signed
    /// before the restart but sent after it (a client whose clock runs behind looks the same) is
    /// accepted.
    @Test func aCleanRestartKeepsTheNoncesAndRefusesNobody() async throws {
        let folder = try TemporaryFolder(prefix: "signet-replay-clean")
        let keys = try ServerKeys.initialise(in: folder)
        let extra = ["--public-url", "https://\(Nodes.publicAuthority)"]
        let first = try await ServeProcess.start(in: folder, extra: extra, name: "first")
        try await Nodes.enrolApp(keys, on: first)
        let accepted = try await Self.registration("ann", signer: keys.appSigner)
        #expect(try await Nodes.send(accepted, to: first).status == 201)
        let held = try await Self.registration("bob", signer: keys.appSigner)
        #expect(first.process.stop() == 0)
        #expect(FileManager.default.fileExists(atPath: folder.file("data/signet.sqlite-nonces")))

        let second = try await ServeProcess.start(in: folder, extra: extra, name: "second")
        defer { second.process.stop() }
        #expect(!FileManager.default.fileExists(atPath: folder.file("data/signet.sqlite-nonces")))
        let replayed = try await Nodes.send(accepted, to: second)
        #expect(replayed.status == 401)
        #expect(replayed.text.contains("replay"), "\(replayed.text)")
        #expect(try await Nodes.send(held, to: second).status == 201)
    }

    /// In process: a signature made before the server started is refused with a reason the
    /// client can act on; one made after is accepted once; one dated ahead is accepted once.
    @Test func signaturesMadeBeforeTheStartAreRefused() async throws {
        try await TestServer.with { server in
            var before = server.appSigner
            before.clock = WallClock { Date().addingTimeInterval(-30) }
            let stale = try await server.api.send(.get, "/v1/me", signer: before)
            #expect(stale.status == 401)
            #expect(stale.text.contains("precedes the server's start"), "\(stale.text)")
            #expect(stale.head.headerFields[.acceptSignature] != nil)
            var ahead = server.appSigner
            ahead.clock = WallClock { Date().addingTimeInterval(60) }
            for signer in [server.appSigner, ahead] {
                let request = try await server.api.request(.get, "/v1/me", signer: signer)
                // Signed but without a session: 401 for the session, after the nonce was taken.
                #expect(try await server.api.send(request).problemCode == "server.sessionEnded")
                let replay = try await server.api.send(request)
                #expect(replay.status == 401)
                #expect(replay.text.contains("replay"), "\(replay.text)")
            }
            // The nonce dated ahead is also in the database, for the next start.
            #expect(try await server.store.nonces.unexpired(limit: 10).count == 1)
        }
    }

    @Test func aSecondServerOnTheSameSQLiteWaitsForTheFirstToStop() async throws {
        let folder = try TemporaryFolder(prefix: "signet-replay-lock")
        _ = try ServerKeys.initialise(in: folder)
        let first = try await ServeProcess.start(in: folder, name: "first")
        let starting = Task { try await ServeProcess.start(in: folder, name: "second") }
        // It says why it waits, and does not listen meanwhile: the first keeps answering.
        let deadline = ContinuousClock.now + TestTimeouts.hangGuard
        var waiting = false
        while !waiting, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
            let logs = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix("second-") }
            waiting = try logs.contains { try String(contentsOfFile: folder.file($0), encoding: .utf8).contains("waiting for the other server") }
        }
        #expect(waiting)
        #expect(try await first.api.send(.get, "/v1/health", signer: nil).status == 200)
        _ = first.process.stop()
        let second = try await starting.value
        defer { second.process.stop() }
        #expect(try await second.api.send(.get, "/v1/health", signer: nil).status == 200)
    }
}
