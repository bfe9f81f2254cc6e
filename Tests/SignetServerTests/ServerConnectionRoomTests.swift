import Foundation
import HTTPTypes
import SignetServer
import SignetTestSupport
import Testing

/// Filling every connection the server allows (docs/server.md "Limits", `--max-connections`):
/// silent sockets from many addresses, each address under its own limit, once kept every new
/// client out until the idle timeout — and an attacker who reopens them at once keeps it so for
/// ever. Now the connection that has waited longest on its client is closed to make room, and
/// one being served never is. Over real sockets on loopback; every wait is a hang guard.
@Suite("Envelope: room for new connections", .serialized)
struct ServerConnectionRoomTests {
    /// `count` sockets connected to `server`, `perAddress` from each of 127.0.`block`.1, .2, …,
    /// in order; each of the first `answered` first gets one health answer and keeps its
    /// connection (idle keep-alive), the rest never send a byte.
    static func fill(
        _ server: TestServer, count: Int, perAddress: Int, block: Int, answered: Int = 0
    ) async throws -> [LoopbackSocket] {
        var sockets: [LoopbackSocket] = []
        for index in 0..<count {
            let socket = try await server.connect(from: "127.\(block).\(index / perAddress / 250).\(index / perAddress % 250 + 1)")
            sockets.append(socket)
            if index < answered {
                let answer = try await socket.exchange(healthRequest(port: server.port, keepAlive: true))
                #expect(answer?.status == 200, "socket \(index): \(answer.map { "\($0.status)" } ?? "closed")")
            }
        }
        return sockets
    }

    @Test func theConnectionsThatWaitedLongestMakeRoomForNewClients() async throws {
        try await TestServer.with(plainHTTP: true, configure: {
            $0.limits.maximumConnections = 100
            $0.limits.maximumConnectionsPerAddress = 10
            // Long enough that only making room closes anything here.
            $0.limits.idleTimeout = .seconds(600)
        }) { server in
            // 120 from twelve addresses, each at its own limit: 40 answered once and kept alive,
            // then 80 that never say a word.
            let sockets = try await Self.fill(server, count: 120, perAddress: 10, block: 3, answered: 40)
            defer { for socket in sockets { socket.close() } }
            for _ in 0..<20 { #expect(try await server.healthStatus() == 200) }
            // The oldest went first — the idle keep-alive ones, then the silent ones in the order
            // they came (the margin allows for connections set up on two event loops at once);
            // the newest stayed.
            let oldestOpen = try await LoopbackSocket.waitForPeerClose(Array(sockets.prefix(15)))
            #expect(oldestOpen.isEmpty, "\(oldestOpen.count) of the 15 oldest connections were not closed to make room")
            let newestClosed = sockets.suffix(10).filter { $0.drain() }
            #expect(newestClosed.isEmpty, "\(newestClosed.count) of the 10 newest connections were closed before older ones")
        }
    }

    @Test func aConnectionBeingServedIsNeverClosedToMakeRoom() async throws {
        try await TestServer.with(plainHTTP: true, configure: {
            $0.limits.maximumConnections = 50
            $0.limits.maximumConnectionsPerAddress = 10
            $0.limits.idleTimeout = .seconds(600)
            $0.limits.bodyReadTimeout = .seconds(600)
        }) { server in
            // The oldest connection of all, half way through a signed registration's body.
            let body = ServerEnvelopeTests.registrationBody(length: 1_000)
            let request = try await server.rawRequest(.post, "/v1/users", body: body, signer: server.appSigner)
            let slow = try await server.connect(from: "127.0.4.200")
            defer { slow.close() }
            try await slow.write(request.http1Head(adding: [("Content-Length", String(body.count))]) + Array(body.prefix(500)))
            // Until the server has read the head, the connection is only waiting on its client.
            var served = false
            for _ in 0..<600 where !served {
                served = try await server.healthStatus() == 200 && !slow.drain()
                try await Task.sleep(for: .milliseconds(50))
            }
            let sockets = try await Self.fill(server, count: 80, perAddress: 10, block: 4)
            defer { for socket in sockets { socket.close() } }
            #expect(try await server.healthStatus() == 200)
            let oldestOpen = try await LoopbackSocket.waitForPeerClose(Array(sockets.prefix(20)))
            #expect(oldestOpen.isEmpty, "\(oldestOpen.count) of the 20 oldest silent connections were not closed to make room")
            #expect(!slow.drain(), "the connection whose request was being read was closed to make room")
            // It finishes its request and is answered.
            slow.clearReceived()
            try await slow.write(Array(body.dropFirst(500)))
            let answer = try await slow.response()
            #expect(answer?.status == 201, "\(answer.map { "\($0.status)" } ?? "closed")")
            #expect(try await server.store.users().count == 1)
        }
    }

    /// The attack as it was found, at the default limits: 34 addresses × 128 silent sockets is
    /// more than the 4,096 connections the server allows. (Scaled down when this process may
    /// not open that many files.)
    @Test func silentSocketsFromManyAddressesDoNotKeepHealthOut() async throws {
        let openFiles = OpenFileLimit.raiseToHardLimit()
        let defaults = ServerLimits()
        // Both ends of every connection live in this process.
        let allowed = min(defaults.maximumConnections, (openFiles - 1_500) / 2 - 200)
        try #require(allowed >= 200, "the open-file limit (\(openFiles)) leaves room for too few sockets to mean anything")
        let perAddress = defaults.maximumConnectionsPerAddress
        let count = allowed + 2 * perAddress
        try await TestServer.with(plainHTTP: true, configure: {
            $0.limits.maximumConnections = allowed
            $0.limits.idleTimeout = .seconds(600)
        }) { server in
            var sockets: [LoopbackSocket] = []
            defer { for socket in sockets { socket.close() } }
            let (_, health) = try await whileHealthIsPolled(server) { () async throws -> Void in
                sockets = try await Self.fill(server, count: count, perAddress: perAddress, block: 5)
            }
            expectHealthy(health)
            for _ in 0..<10 { #expect(try await server.healthStatus() == 200) }
            let stillOpen = sockets.filter { !$0.drain() }.count
            #expect(stillOpen < allowed, "\(stillOpen) of \(count) silent connections are open, the server allows \(allowed)")
        }
    }
}
