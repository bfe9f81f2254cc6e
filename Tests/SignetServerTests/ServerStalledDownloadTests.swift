import Foundation
import HTTPTypes
import SignetHTTP
import SignetServer
import SignetTestSupport
import Testing

/// Stalled downloads (issue 28, parts 3 and 10): a client that asks for a resource and then
/// reads nothing is cut off once the server's writes have waited for it for the write timeout
/// (``ServerLimits/writeTimeout``, 2 s here), and a thousand of them at once are all cut off
/// while `/v1/health` answers 200. What they cost the process meanwhile is printed, not
/// asserted (docs/server.md "Limits" has the bound).
///
/// A stalled client must not read before the server has given up on it: one that reads, however
/// slowly, is a slow client, which the server rightly keeps serving. So these clients never read
/// early. They peek at the bytes waiting on their socket (the answer has begun) and watch the
/// kernel's table of connections, /proc/net/tcp, for the server's end to stop being established
/// (the server has closed it); only then do they read, and find the stream ending short of
/// `Content-Length`. They announce Ethernet-sized segments and keep a small receive buffer, so
/// that a thousand of them cost the kernel what a thousand remote clients would, not gigabytes.
/// Every wait is a hang guard (``TestTimeouts``), never a speed expectation. Heavy, so one at a
/// time; filter with `Envelope`.
@Suite(
    "Envelope: stalled downloads", .serialized,
    .enabled(if: FileManager.default.isReadableFile(atPath: "/proc/net/tcp"), "watches the server's end of each connection in /proc/net/tcp"))
struct ServerStalledDownloadTests {
    /// How long the server's writes wait for a client that does not read.
    static let writeTimeout: Duration = .seconds(2)
    static let resourceName = "stalled-site"
    /// The one file of the published resource: far more than the buffers of a connection hold.
    static let payloadSize = 16 << 20

    /// A plain HTTP server whose writes wait for a client at most ``writeTimeout`` (and whose
    /// idle timeout is far longer, so that only the write timeout can end a download), with
    /// ``resourceName`` published by its admin as a tar of one file of ``payloadSize`` random
    /// bytes, which the server bundles and signs.
    static func withPublishedResource(_ body: (TestServer, ResourceRecord) async throws -> Void) async throws {
        try await TestServer.with(plainHTTP: true, configure: {
            $0.limits.writeTimeout = Self.writeTimeout
            $0.limits.idleTimeout = .seconds(600)
        }) { server in
            let payload = TestBytes.random(count: Self.payloadSize, seed: 28)
            // One ustar entry (the payload fills whole blocks) and the end marker.
            let tar = TarBuilder.header("payload.bin", size: payload.count) + payload + TarBuilder.end
            var publish = try await server.rawRequest(
                .post, "/v1/admin/resources/\(Self.resourceName)", fields: [.contentType: ResourceAPI.tarType])
            try await server.adminSigner.sign(&publish, body: tar)
            let answer = try await ServerBindingTests.send(publish, body: tar, to: server)
            try #require(answer.status == 201, "publishing \(Self.resourceName): \(answer)")
            let record = try JSONDecoder().decode(ResourceRecord.self, from: Data(answer.body))
            try #require(record.size > Int64(Self.payloadSize), "\(record)")
            try await body(server, record)
        }
    }

    /// A client of `server` from `source` that will read nothing: a small receive buffer, and
    /// segments of 1460 bytes (see ``LoopbackSocket/init(port:host:from:receiveBuffer:segmentSize:)``).
    static func quietClient(of server: TestServer, from source: String) throws -> LoopbackSocket {
        try LoopbackSocket(port: server.port, from: source, receiveBuffer: 16 << 10, segmentSize: 1_460)
    }

    /// What ``waitUntilCutOff(_:by:)`` saw.
    struct Stall: Sendable {
        /// The connections the server still held when the hang guard ran out.
        var held: [LoopbackSocket]
        /// The most resident memory (VmRSS, KiB) this process had meanwhile.
        var peakKiB: Int?
    }

    /// Waits, reading nothing, until on each of `sockets` the server's answer has begun (its
    /// first bytes wait unread) and the server has closed its end of the connection (the kernel
    /// no longer lists it as established) — or the server answered something other than 200, or
    /// left nothing to read, which the reading afterwards shows.
    static func waitUntilCutOff(_ sockets: [LoopbackSocket], by server: TestServer) async throws -> Stall {
        let deadline = TestTimeouts.deadline
        var stall = Stall(held: sockets, peakKiB: residentKiB())
        while true {
            // The sockets first, then the table: an answer already begun proves that the server
            // had taken the connection before the table was read.
            var unanswered: [LoopbackSocket] = []
            var downloading: [LoopbackSocket] = []
            for socket in stall.held {
                guard let first = socket.peek(upTo: 12) else { continue }
                if first.count < 12 {
                    unanswered.append(socket)
                } else if first[9..<12].elementsEqual("200".utf8) {
                    downloading.append(socket)
                }
            }
            let established = try serverEndsEstablished(port: server.port)
            stall.held = unanswered + downloading.filter { established.contains("\($0.source):\($0.localPort)") }
            if let now = residentKiB() { stall.peakKiB = max(stall.peakKiB ?? now, now) }
            if stall.held.isEmpty || ContinuousClock.now >= deadline { return stall }
            try await Task.sleep(for: .milliseconds(200))
        }
    }

    /// The client ends (`address:port`) of the TCP connections to 127.0.0.1:`port` whose server
    /// end the kernel lists as established (or still in its handshake).
    static func serverEndsEstablished(port: Int) throws -> Set<String> {
        guard let table = FileHandle(forReadingAtPath: "/proc/net/tcp")?.readDataToEndOfFile() else {
            throw ServerTestError(description: "/proc/net/tcp cannot be read")
        }
        var ends: Set<String> = []
        // A header line, then `sl local_address rem_address st …`: 01 is ESTABLISHED, 03 SYN_RECV.
        for line in String(decoding: table, as: UTF8.self).split(separator: "\n").dropFirst() {
            let columns = line.split(separator: " ")
            guard columns.count > 3, columns[3] == "01" || columns[3] == "03",
                let local = endpoint(columns[1]), local.address == "127.0.0.1", local.port == port,
                let remote = endpoint(columns[2])
            else { continue }
            ends.insert("\(remote.address):\(remote.port)")
        }
        return ends
    }

    /// `0100007F:1F90` → (`127.0.0.1`, 8080): the address is its four bytes (network order, as
    /// the kernel keeps them) printed as a number in this machine's byte order, the port in hex.
    static func endpoint(_ text: Substring) -> (address: String, port: Int)? {
        let parts = text.split(separator: ":")
        guard parts.count == 2, let number = UInt32(parts[0], radix: 16), let port = Int(parts[1], radix: 16) else { return nil }
        let octets = withUnsafeBytes(of: number) { Array($0) }
        return (octets.map { String($0) }.joined(separator: "."), port)
    }

    /// This process's resident memory (VmRSS in /proc/self/status), in KiB.
    static func residentKiB() -> Int? {
        guard let status = FileHandle(forReadingAtPath: "/proc/self/status")?.readDataToEndOfFile() else { return nil }
        let line = String(decoding: status, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
        let number = line?.split(whereSeparator: { character in character == " " || character == "\t" }).dropFirst().first
        return number.flatMap { Int($0) }
    }

    /// One download read to its end, its bytes counted and forgotten as they come.
    struct Download {
        let socket: LoopbackSocket
        /// The answer's status and fields, once its head has come whole.
        var head: RawHTTPResponse?
        /// How many bytes of its body came.
        var bodyBytes = 0
        /// Whether the connection ended (end of stream, or a reset).
        var ended = false
        /// What came before the head was whole.
        var early: [UInt8] = []

        init(_ socket: LoopbackSocket) { self.socket = socket }

        /// Takes what has arrived.
        mutating func read() {
            ended = socket.drain()
            let bytes = socket.received
            socket.clearReceived()
            guard head == nil else {
                bodyBytes += bytes.count
                return
            }
            early += bytes
            if let parsed = RawHTTPResponse.parseHead(early) {
                head = parsed.response
                bodyBytes = early.count - parsed.bodyStart
                early = []
            }
        }

        /// Nothing more to wait for: the connection ended, the answer is not the download, or
        /// all `size` bytes came.
        func isOver(size: Int64) -> Bool {
            ended || (head.map { $0.status != 200 } ?? false) || Int64(bodyBytes) >= size
        }

        var summary: String {
            "\(socket.source):\(socket.localPort): \(head.map { "\($0.status)" } ?? "no answer"), \(bodyBytes) bytes of body, "
                + (ended ? "ended" : "still open")
        }
    }

    /// Reads every one of `sockets` until its connection ends, its answer turns out not to be
    /// the download, or all `size` bytes of the download came; stops at the hang guard.
    static func readToTheEnd(_ sockets: [LoopbackSocket], size: Int64) async throws -> [Download] {
        var downloads = sockets.map { Download($0) }
        let deadline = TestTimeouts.deadline
        while true {
            for index in downloads.indices where !downloads[index].isOver(size: size) {
                downloads[index].read()
            }
            if downloads.allSatisfy({ $0.isOver(size: size) }) || ContinuousClock.now >= deadline { return downloads }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Every one of `downloads` was answered 200 with the resource's `Content-Length`, and its
    /// connection ended before that many bytes came.
    static func expectCutShort(_ downloads: [Download], of record: ResourceRecord, sourceLocation: SourceLocation = #_sourceLocation) {
        // A download refused with 503 (the server shedding load on a busy machine: its database
        // or key lookups could not keep up; "retry later") is a refusal, not a stall.
        let isShed = { (download: Download) in download.head?.status == 503 }
        let shed = downloads.filter(isShed)
        let wrong = downloads.filter { download in
            !(download.ended && download.head?.status == 200 && download.head?.field("Content-Length") == String(record.size)
                && Int64(download.bodyBytes) < record.size) && !isShed(download)
        }
        // Shedding is the server's right under load (this suite's full run shed 17–21 % of a
        // thousand on two busy cores; an idle run, none): what is tested is that the downloads it
        // served were cut off, so most must have been served — not how many a busy machine sheds.
        #expect(shed.count * 2 < downloads.count, "\(shed.count) of \(downloads.count) downloads were refused with 503", sourceLocation: sourceLocation)
        #expect(
            wrong.isEmpty, "\(wrong.count) of \(downloads.count) downloads of \(record.size) bytes were not cut short: \(wrong.prefix(5).map(\.summary))",
            sourceLocation: sourceLocation)
    }

    @Test func aClientThatDoesNotReadIsCutOff() async throws {
        try await Self.withPublishedResource { server, record in
            let path = "/v1/resources/\(record.name)"
            // The control: a client that reads as the bytes come gets every one of them.
            let prompt = try await server.connect()
            defer { prompt.close() }
            let asked = try await server.rawRequest(.get, path, signer: server.appSigner)
            let answer = try await prompt.exchange(asked.http1Head(adding: [("Connection", "close")]))
            let whole = try #require(answer, "the server closed a download read promptly without an answer")
            #expect(whole.status == 200, "\(whole.status) \(whole.fields.map { "\($0.name): \($0.value)" })")
            #expect(whole.field("Content-Length") == String(record.size))
            #expect(whole.body.count == Int(record.size), "\(whole.body.count) of \(record.size) bytes")
            #expect(whole.field("ETag") == record.etag)
            #expect(ResourceFixtures.sha256(whole.body) == record.sha256)

            // A client that asks, then reads nothing.
            let request = try await server.rawRequest(.get, path, signer: server.appSigner)
            let started = ContinuousClock.now
            let stalled = try Self.quietClient(of: server, from: "127.0.3.1")
            defer { stalled.close() }
            try await stalled.waitUntilConnected()
            try await stalled.write(request.http1Head())
            let (stall, health) = try await whileHealthIsPolled(server) { () async throws -> Stall in
                try await Self.waitUntilCutOff([stalled], by: server)
            }
            expectHealthy(health)
            #expect(stall.held.isEmpty, "the server kept a download nobody read")
            // A lower bound, which load can only lengthen: the server waited for the reader for its write timeout.
            #expect(ContinuousClock.now - started >= Self.writeTimeout)
            let downloads = try await Self.readToTheEnd([stalled], size: record.size)
            Self.expectCutShort(downloads, of: record)
        }
    }

    @Test func aThousandStalledDownloadsAreCutOffWhileHealthAnswers() async throws {
        let count = 1_000
        // Both ends of every connection are in this process, and the rest of the suite needs room.
        let openFiles = OpenFileLimit.raiseToHardLimit()
        try #require(openFiles >= 2 * count + 1_024, "the open-file limit (\(openFiles)) leaves no room for \(count) stalled downloads")
        try await Self.withPublishedResource { server, record in
            let path = "/v1/resources/\(record.name)"
            // A signature each: a nonce is taken once.
            var requests: [HTTPRequest] = []
            for _ in 0..<count { requests.append(try await server.rawRequest(.get, path, signer: server.appSigner)) }
            let before = Self.residentKiB()
            var sockets: [LoopbackSocket] = []
            defer { for socket in sockets { socket.close() } }
            let (stall, health) = try await whileHealthIsPolled(server) { () async throws -> Stall in
                // 100 from each of 127.0.3.1, 127.0.3.2, …: under the per-address limit (128), so
                // that every one is served and only the write timeout can end it.
                for index in 0..<count {
                    sockets.append(try Self.quietClient(of: server, from: "127.0.3.\(index / 100 + 1)"))
                }
                for (socket, request) in zip(sockets, requests) {
                    try await socket.waitUntilConnected()
                    try await socket.write(request.http1Head())
                }
                return try await Self.waitUntilCutOff(sockets, by: server)
            }
            expectHealthy(health)
            #expect(stall.held.isEmpty, "\(stall.held.count) of \(count) stalled downloads were never cut off")
            let downloads = try await Self.readToTheEnd(sockets, size: record.size)
            Self.expectCutShort(downloads, of: record)

            // The figure for the note (not an assertion): this whole test process — the server,
            // its database and every client socket, and whatever else the suite runs beside it.
            let after = Self.residentKiB()
            let delivered = downloads.map(\.bodyBytes)
            func mebibytes(_ kib: Int?) -> String { kib.map { String(format: "%.1f MiB", Double($0) / 1024) } ?? "?" }
            var each = ""
            if let peak = stall.peakKiB, let before { each = " (\((peak - before) / count) KiB a download)" }
            print(
                "\(count) stalled downloads of \(record.size) bytes, write timeout \(Self.writeTimeout): VmRSS of the test process "
                    + "\(mebibytes(before)) before, at most \(mebibytes(stall.peakKiB)) while they stalled\(each), \(mebibytes(after)) after; "
                    + "each delivered \(delivered.min() ?? 0)–\(delivered.max() ?? 0) bytes of body before the server's end")
        }
    }
}
