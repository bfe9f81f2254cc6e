import Foundation
import HTTPTypes
import SignetCore
import SignetHTTP
import SignetServer
import SignetTLS
import SignetTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The attacks on the server's envelope — what a connection or request may cost before it has
/// proved anything (issue 28, docs/server.md "Limits") — against a live server over real
/// sockets on loopback: a label bomb, oversized heads, thousands of silent sockets, too many
/// connections from one address, a stalled body, a dripped body, a broken chunk, and SIGTERM
/// with a request half sent. Each is refused or cut off, and `/v1/health` answers 200 all the
/// while. Bounded in count and time; every wait is a hang guard of minutes (``TestTimeouts``),
/// never a speed expectation: how fast health answers under each attack is a benchmark row
/// (`Scripts/bench`), not an assertion. Heavy, so one at a time; filter with `Envelope`.
@Suite("Envelope", .serialized)
struct ServerEnvelopeTests {
    /// `Signature-Input` and `Signature` fields naming `count` made-up signatures `l0`, `l1`, …
    /// (each a plausible inner list and a 64-byte byte sequence), and an `Accept-Signature`
    /// asking for the answer to be signed — which once made the server sign over every label.
    static func labelFields(count: Int) -> HTTPFields {
        let bytes = Data(repeating: 0xA5, count: 64).base64EncodedString()
        var inputs: [String] = []
        var signatures: [String] = []
        for index in 0..<count {
            inputs.append(#"l\#(index)=("@method" "@target-uri");created=1700000000;keyid="made-up-\#(index % 16)";alg="ed25519""#)
            signatures.append("l\(index)=:\(bytes):")
        }
        var fields = HTTPFields()
        fields[.acceptSignature] = #"server=("@status" "@method";req "@target-uri";req)"#
        fields[.signatureInput] = inputs.joined(separator: ", ")
        fields[.signature] = signatures.joined(separator: ", ")
        return fields
    }

    /// How many request signatures (`"signature";req;key=…`) the answer's own signature covers.
    static func coveredRequestSignatures(_ answer: HTTPSResponse) -> Int {
        guard let input = answer.head.headerFields[.signatureInput] else { return 0 }
        return input.components(separatedBy: #""signature""#).count - 1
    }

    /// A registration as JSON, padded with spaces to `length` bytes.
    static func registrationBody(length: Int) -> [UInt8] {
        let json = Array(#"{"email":"slow@example.com","password":"0123456789abc","displayName":"Slow"}"#.utf8)
        return json + Array(repeating: UInt8(ascii: " "), count: max(0, length - json.count))
    }

    /// Whatever the server sent on `socket` before it closed: nothing, or one answer with `status`
    /// and the problem `code`.
    static func expectNothingOr(_ status: Int, code: String, on socket: LoopbackSocket, sourceLocation: SourceLocation = #_sourceLocation) {
        guard !socket.received.isEmpty else { return }
        let answer = RawHTTPResponse.parse(socket.received, ended: true)
        #expect(answer?.status == status, "\(answer.map { "\($0)" } ?? "not an HTTP answer")", sourceLocation: sourceLocation)
        #expect(answer?.text.contains(code) == true, "\(answer.map { "\($0)" } ?? "")", sourceLocation: sourceLocation)
    }

    @Test func aLabelBombGetsA401SignedOverNoMoreThanEightLabels() async throws {
        // The head limit (16 KiB) would refuse these heads before anything reads them; it is
        // raised here so that the bomb reaches the verifier and the responder themselves.
        try await TestServer.with(configure: { $0.limits.maximumHeaderBytes = 1 << 20 }) { server in
            let bomb = Self.labelFields(count: 2_000)
            let (answers, health) = try await whileHealthIsPolled(server) { () async throws -> [HTTPSResponse] in
                try await withThrowingTaskGroup(of: HTTPSResponse.self) { group in
                    for _ in 0..<4 {
                        group.addTask { try await server.api.send(try await server.api.request(.get, "/v1/me", headers: bomb)) }
                    }
                    return try await group.reduce(into: [HTTPSResponse]()) { $0.append($1) }
                }
            }
            expectHealthy(health)
            #expect(answers.count == 4)
            for answer in answers {
                #expect(answer.status == 401, "\(answer.status) \(answer.text)")
                #expect(answer.problemCode == "server.unauthorized")
                let covered = Self.coveredRequestSignatures(answer)
                #expect(covered <= 8, "the answer's signature covers \(covered) request signatures")
            }
        }
    }

    @Test func eightLabelsAreStillCoveredByTheSignedAnswer() async throws {
        try await TestServer.with { server in
            let labels = (0..<8).map { "l\($0)" }
            let prepared = try await server.api.request(.get, "/v1/me", headers: Self.labelFields(count: labels.count))
            let answer = try await server.api.send(prepared)
            #expect(answer.status == 401, "\(answer.text)")
            #expect(Self.coveredRequestSignatures(answer) == labels.count, "\(answer.head.headerFields[.signatureInput] ?? "no Signature-Input")")
            // The server's signature, over each of the request's signatures.
            var policy = HTTPSignaturePolicy()
            policy.requireNonce = false
            let requestSignatures: [SignatureComponent] = labels.map { label in
                var component = SignatureComponent("signature")
                component.key = label
                component.fromRequest = true
                return component
            }
            policy.requiredComponents = [.status] + requestSignatures
            let verifier = HTTPMessageVerifier(keys: StaticHTTPSignatureKeys(publicKeys: [server.identity.responseSigner.publicKey]), policy: policy)
            _ = try await verifier.verify(
                .response(answer.head, answering: prepared.0), bodyDigests: ContentDigest.digests(of: answer.body), label: "server")
        }
    }

    @Test func headsOverTheLimitsAreRefused() async throws {
        try await TestServer.with { server in
            var manyFields = HTTPFields()
            for index in 0..<150 { manyFields.append(HTTPField(name: HTTPField.Name("X-Filler-\(index)")!, value: "x")) }
            let cases: [(String, HTTPFields)] = [("2,000 labels (about 340 KB)", Self.labelFields(count: 2_000)), ("150 fields", manyFields)]
            let (_, health) = try await whileHealthIsPolled(server) { () async throws -> Void in
                for (name, fields) in cases {
                    do {
                        let answer = try await server.api.send(try await server.api.request(.get, "/v1/me", headers: fields))
                        #expect((400..<500).contains(answer.status), "\(name): \(answer.status) \(answer.text)")
                    } catch {
                        // The server closed the connection on the head: a refusal too, but not a hang.
                        #expect(!"\(error)".contains("within the timeout"), "\(name): \(error)")
                    }
                }
            }
            expectHealthy(health)
        }
    }

    @Test func twoThousandSilentSocketsAreClosedWhileHealthAnswers() async throws {
        // Both ends of every connection live in this process: the test's socket and the server's.
        let openFiles = OpenFileLimit.raiseToHardLimit()
        // 2,000 when the limit allows (2 descriptors each, and room for the rest of the suite);
        // as many as it allows otherwise.
        let count = min(2_000, (openFiles - 1_024) / 2)
        try #require(count >= 200, "the open-file limit (\(openFiles)) leaves room for too few sockets to mean anything")
        try await TestServer.with(configure: {
            $0.limits.idleTimeout = .seconds(2)
            $0.limits.maximumConnectionsPerAddress = 64
        }) { server in
            var sockets: [LoopbackSocket] = []
            defer { for socket in sockets { socket.close() } }
            let (stillOpen, health) = try await whileHealthIsPolled(server) { () async throws -> Int in
                // 50 from each of 127.0.1.1, 127.0.1.2, …: under the per-address limit, so that
                // every one is accepted and only the idle timeout can end it. Not one byte is sent,
                // not even a TLS ClientHello.
                for index in 0..<count {
                    sockets.append(try LoopbackSocket(port: server.port, from: "127.0.1.\(index / 50 + 1)"))
                }
                for socket in sockets { try await socket.waitUntilConnected() }
                let silent = try await LoopbackSocket.waitForPeerClose(sockets, deadline: .now + .seconds(30))
                guard !silent.isEmpty else { return 0 }
                // On a starved machine the kernel's accept queue (1,024) overflows during the burst:
                // the server's kernel drops the handshake's last ACK, this side believes it is
                // connected, and the server never sees the connection, so nothing closes it. One
                // byte tells the two apart: the server's kernel answers a connection it dropped
                // with a reset; one the server holds is still closed only by its idle timeout. (A
                // server that never times out silent sockets fails the first wait with all of
                // them, on any machine; only stragglers of a starved burst get the byte.)
                for socket in silent { try? await socket.write([0x16]) }
                return try await LoopbackSocket.waitForPeerClose(silent).count
            }
            expectHealthy(health)
            #expect(stillOpen == 0, "\(stillOpen) of \(count) silent connections were never closed by the server")
        }
    }

    @Test func theNinthConnectionFromOneAddressIsClosedAtOnce() async throws {
        try await TestServer.with(plainHTTP: true, configure: {
            $0.limits.maximumConnectionsPerAddress = 8
            // Long enough that only the per-address limit closes anything here.
            $0.limits.idleTimeout = .seconds(600)
        }) { server in
            var admitted: [LoopbackSocket] = []
            defer { for socket in admitted { socket.close() } }
            for _ in 0..<8 {
                let socket = try await server.connect(from: "127.0.0.3")
                admitted.append(socket)
                // An answer on it shows the server took the connection (and counts it).
                let answer = try await socket.exchange(healthRequest(port: server.port, keepAlive: true))
                #expect(answer?.status == 200, "\(answer.map { "\($0)" } ?? "closed")")
            }
            let ninth = try await server.connect(from: "127.0.0.3")
            defer { ninth.close() }
            #expect(try await ninth.waitForPeerClose(), "the ninth connection from 127.0.0.3 stayed open")
            #expect(ninth.received.isEmpty, "the refused connection was sent \(ninth.received.count) bytes")
            // Another address is served meanwhile, and so are the eight.
            #expect(try await server.healthStatus() == 200)
            for socket in admitted {
                #expect(try await socket.exchange(healthRequest(port: server.port, keepAlive: true))?.status == 200)
            }
            // One of the eight leaves: its place is free again once the server has seen it close.
            admitted.removeLast().close()
            var readmitted = false
            for _ in 0..<600 where !readmitted {
                let socket = try await server.connect(from: "127.0.0.3")
                defer { socket.close() }
                if let answer = try? await socket.exchange(healthRequest(port: server.port, keepAlive: false)), answer.status == 200 {
                    readmitted = true
                } else {
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
            #expect(readmitted, "127.0.0.3 was not let in again after one of its connections closed")
        }
    }

    @Test func aStalledBodyIsCutOff() async throws {
        try await TestServer.with(plainHTTP: true, configure: { $0.limits.idleTimeout = .seconds(2) }) { server in
            let body = Self.registrationBody(length: 1_000)
            // Signed, so that the server reads the body (to check its digest) before it answers.
            let request = try await server.rawRequest(.post, "/v1/users", body: body, signer: server.appSigner)
            let socket = try await server.connect()
            defer { socket.close() }
            let (closed, health) = try await whileHealthIsPolled(server) { () async throws -> Bool in
                try await socket.write(request.http1Head(adding: [("Content-Length", String(body.count))]) + Array(body.prefix(500)))
                return try await socket.waitForPeerClose()
            }
            expectHealthy(health)
            #expect(closed, "the server kept a connection whose body stalled half way")
            Self.expectNothingOr(408, code: "server.requestTimeout", on: socket)
            #expect(try await server.store.users.all().isEmpty)
        }
    }

    @Test func aBodyDrippedByteByByteIsCutOff() async throws {
        try await TestServer.with(plainHTTP: true, configure: {
            $0.limits.bodyReadTimeout = .seconds(2)
            // The drip is never idle for long: only the body's deadline can end it.
            $0.limits.idleTimeout = .seconds(60)
        }) { server in
            let body = Self.registrationBody(length: 1_000)
            let request = try await server.rawRequest(.post, "/v1/users", body: body, signer: server.appSigner)
            let socket = try await server.connect()
            defer { socket.close() }
            let (sent, health) = try await whileHealthIsPolled(server) { () async throws -> Int in
                try await socket.write(request.http1Head(adding: [("Content-Length", String(body.count))]))
                // One byte every half second (the whole body would take 500 s), until the server
                // answers or hangs up; the hang guard bounds the loop.
                var sent = 0
                let deadline = TestTimeouts.deadline
                while sent < body.count, !socket.drain(), socket.received.isEmpty, ContinuousClock.now < deadline {
                    do {
                        try await socket.write([body[sent]])
                    } catch {
                        break  // the server hung up
                    }
                    sent += 1
                    try await Task.sleep(for: .milliseconds(500))
                }
                return sent
            }
            expectHealthy(health)
            #expect(socket.peerHasClosed || !socket.received.isEmpty, "the server let a body drip for \(sent) bytes without cutting it")
            #expect(try await socket.waitForPeerClose(), "the server answered the dripped body but kept the connection")
            Self.expectNothingOr(408, code: "server.requestTimeout", on: socket)
            #expect(try await server.store.users.all().isEmpty)
        }
    }

    @Test func aMalformedChunkedBodyIsA400() async throws {
        try await TestServer.with(plainHTTP: true) { server in
            let body = Self.registrationBody(length: 200)
            let request = try await server.rawRequest(.post, "/v1/users", body: body, signer: server.appSigner)
            let socket = try await server.connect()
            defer { socket.close() }
            try await socket.write(
                request.http1Head(adding: [("Transfer-Encoding", "chunked"), ("Connection", "close")]) + Array("zz\r\nnot a chunk\r\n".utf8))
            let answer = try await socket.response()
            // The client's mistake: 400, never 503 ("retry later") or 500.
            #expect(answer?.status == 400, "\(answer.map { "\($0)" } ?? "closed without an answer")")
            #expect(try await server.store.users.all().isEmpty)
            #expect(try await server.healthStatus() == 200)
        }
    }

    @Test func sigtermEndsTheServerWithARequestHalfSent() async throws {
        let folder = try TemporaryFolder(prefix: "signet-envelope")
        // Idle and body timeouts far beyond the hang guard below: only the shutdown deadline can
        // end the half-sent request.
        let server = try await ServeProcess.start(
            in: folder, extra: ["--shutdown-timeout", "3", "--idle-timeout", "600", "--body-timeout", "600"], plainHTTP: true)
        defer { server.process.stop(signal: SIGKILL) }
        let socket = try LoopbackSocket(port: server.port)
        defer { socket.close() }
        try await socket.waitUntilConnected()
        // Served once: the connection is the server's, kept alive.
        #expect(try await socket.exchange(healthRequest(port: server.port, keepAlive: true))?.status == 200)
        // 10 bytes of a 100,000-byte body. The signature fields (made up) make the server read
        // the body before it answers; it waits for the rest.
        let head = "POST /v1/users HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\nContent-Type: application/json\r\n"
            + "Content-Length: 100000\r\nContent-Digest: sha-256=:AAAA:\r\n"
            + #"Signature-Input: sig1=("@method" "@target-uri" "content-digest");created=1700000000;keyid="k""# + "\r\n"
            + "Signature: sig1=:AAAA:\r\n\r\n"
        socket.clearReceived()
        try await socket.write(Array(head.utf8) + Array(#"{"email":""#.utf8))
        // Time for the head to reach a handler before the signal: an ordering, not a check of speed.
        try await Task.sleep(for: .seconds(1))
        #expect(!socket.drain(), "the server closed the half-sent request before SIGTERM: \(String(decoding: socket.received, as: UTF8.self))")
        try #require(server.process.process.isRunning, "\(server.process.output)")

        server.process.process.send(SIGTERM)
        let deadline = ContinuousClock.now + .seconds(120)
        while server.process.process.isRunning, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        let ended = !server.process.process.isRunning
        #expect(ended, "signet serve still ran 2 minutes after SIGTERM, with a request half sent:\n\(server.process.output)")
        let status = server.process.stop(signal: SIGKILL)
        if ended {
            #expect([0, 128 + SIGTERM].contains(status), "exit \(status):\n\(server.process.output)")
        }
        #expect(try await socket.waitForPeerClose())
    }

    /// The same over TLS, where a channel cannot close only its input: the shutdown deadline
    /// must still end the process, cleanly (it once died of SIGILL: "Cancellation took longer
    /// than allowed by the configuration"). The half-sent request comes from `openssl s_client`.
    @Test func sigtermEndsATLSServerWithARequestHalfSent() async throws {
        let folder = try TemporaryFolder(prefix: "signet-envelope")
        let server = try await ServeProcess.start(in: folder, extra: ["--shutdown-timeout", "2", "--idle-timeout", "600", "--body-timeout", "600"])
        defer { server.process.stop(signal: SIGKILL) }
        let client = try ChildProcess("/usr/bin/openssl", ["s_client", "-connect", "127.0.0.1:\(server.port)", "-quiet", "-ign_eof"], stdin: .pipe)
        let input = try #require(client.input)
        defer {
            client.send(SIGKILL)
            try? input.close()
        }
        let head = "POST /v1/users HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\nContent-Type: application/json\r\n"
            + "Content-Length: 100000\r\nSignature-Input: a\r\nSignature: b\r\n\r\n{"
        try input.write(contentsOf: Data(head.utf8))
        // Time for the handshake and the head to reach a handler: an ordering, not a check of speed.
        try await Task.sleep(for: .seconds(3))
        try #require(server.process.process.isRunning, "\(server.process.output)")
        server.process.process.send(SIGTERM)
        let deadline = ContinuousClock.now + TestTimeouts.hangGuard
        while server.process.process.isRunning, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(!server.process.process.isRunning, "signet serve still ran after SIGTERM with a TLS request half sent:\n\(server.process.output)")
        let status = server.process.stop(signal: SIGKILL)
        #expect([0, 128 + SIGTERM].contains(status), "exit \(status):\n\(server.process.output)")
        #expect(!server.process.output.contains("Fatal error"), "\(server.process.output)")
        #expect(!server.process.output.contains(" error "), "an error-level line on shutdown:\n\(server.process.output)")
    }
}
