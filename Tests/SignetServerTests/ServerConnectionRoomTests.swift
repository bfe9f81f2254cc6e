import Foundation
import HTTPTypes
import NIOCore
import NIOEmbedded
@testable import SignetServer
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

    /// The indices of `sockets` the server has closed, once at least `count` are (or the hang
    /// guard ran out).
    static func closed(_ sockets: [LoopbackSocket], atLeast count: Int) async throws -> [Int] {
        let deadline = TestTimeouts.deadline
        while true {
            let closed = sockets.indices.filter { sockets[$0].drain() }
            if closed.count >= count || ContinuousClock.now >= deadline { return closed }
            try await Task.sleep(for: .milliseconds(100))
        }
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
            // Room was made, from the oldest: the server orders connections as its two event
            // loops set them up, which on a busy machine is only roughly the order they came
            // in, so "oldest" is the older half here; the newest stayed.
            let closed = try await Self.closed(sockets, atLeast: 20)
            #expect(closed.count >= 20, "only \(closed.count) connections were closed to make room")
            #expect(closed.allSatisfy { $0 < 60 }, "connections of the newer half were closed before older ones: \(closed)")
            #expect(!closed.contains { $0 >= 110 }, "one of the 10 newest connections was closed: \(closed)")
        }
    }

    /// The third adversarial round's reproduction: any signed route, a made-up signature and a
    /// `Content-Length` with no body once held each connection "being served" until the body
    /// timeout, so 12 addresses kept every new client out. A body that has not come is waiting
    /// on the client: such a connection makes room like a silent one.
    @Test func aRequestWhoseBodyNeverComesMakesRoomToo() async throws {
        try await TestServer.with(plainHTTP: true, configure: {
            $0.limits.maximumConnections = 100
            $0.limits.maximumConnectionsPerAddress = 10
            $0.limits.idleTimeout = .seconds(600)
            $0.limits.bodyReadTimeout = .seconds(600)
        }) { server in
            let head = Array((
                "POST /v1/users HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\nContent-Type: application/json\r\n"
                    + "Signature-Input: sig1=(\"@method\");keyid=\"x\";created=1;nonce=\"a\"\r\nSignature: sig1=:AAAA:\r\n"
                    + "Content-Length: 65536\r\n\r\n").utf8)
            var sockets: [LoopbackSocket] = []
            defer { for socket in sockets { socket.close() } }
            for index in 0..<120 {
                let socket = try await server.connect(from: "127.4.0.\(index / 10 + 1)")
                sockets.append(socket)
                try await socket.write(head)
            }
            for _ in 0..<20 { #expect(try await server.healthStatus() == 200) }
            let closed = try await Self.closed(sockets, atLeast: 20)
            #expect(closed.count >= 20, "only \(closed.count) bodiless requests were closed to make room")
            #expect(closed.allSatisfy { $0 < 60 }, "newer bodiless requests were closed before older ones: \(closed)")
            #expect(try await server.store.users.all().isEmpty)
        }
    }

    /// Which connection the table closes to make room: the one that has waited longest on its
    /// client, never one being served — on the table alone, with channels that do nothing.
    @Test func theTableNeverPicksAConnectionBeingServed() throws {
        let table = ConnectionTable(maximumPerAddress: 10, maximumTotal: 4)
        let channels = (0..<6).map { _ in EmbeddedChannel() }
        defer { for channel in channels { _ = try? channel.finish() } }
        func admit(_ index: Int) -> (any Channel)? {
            guard case .admitted(let room) = table.admit(channels[index], from: "192.0.2.1") else {
                Issue.record("channel \(index) was refused")
                return nil
            }
            return room
        }
        #expect(admit(0) == nil && admit(1) == nil && admit(2) == nil)
        table.serving(channels[0])
        // Full at the fourth: the oldest waiting one (1) goes, not 0, which is being served.
        #expect(admit(3) === channels[1])
        // 2 answered and waiting again is now newer than 3.
        table.serving(channels[2])
        table.waiting(channels[2])
        #expect(admit(4) === channels[3])
        // 0 and 2 being served: the oldest waiting one (4) goes.
        table.serving(channels[2])
        #expect(admit(5) === channels[4])
        table.closed(channels[0])
        #expect(table.evictions == 3)
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
