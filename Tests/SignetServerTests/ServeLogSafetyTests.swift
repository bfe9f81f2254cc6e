import Foundation
import HTTPTypes
import SignetServer
import SignetTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 29, terminal safety of the server's log: `signet serve` at its most talkative
/// (`--log-level trace`) is sent requests whose request line, `Host`, other fields, paths,
/// queries and JSON bodies carry ESC sequences, BEL, CR LF with a forged line, DEL, a C1 CSI and
/// a right-to-left override — raw where HTTP/1.1 lets them through a parser, percent-encoded or
/// JSON-escaped where it does not — and what it writes (its log on standard error and its
/// announcements on standard output) holds no character that could drive the terminal showing
/// it or forge a line of it (``TerminalText``). An operator's hostile `--data` path, which the
/// server does log, is escaped too.
@Suite("signet serve: no control character a client or an operator sends reaches the log")
struct ServeLogSafetyTests {
    static let hostile = "a\u{1b}[31m\u{1b}]0;x\u{07}\r\nsignet: OK \u{7f}\u{9b}2J\u{202e}z"

    /// ``hostile`` percent-encoded, for a path or a query.
    static var hostilePath: String { TerminalText.percentEncoded(hostile) }

    /// Stops `server` with SIGTERM and checks everything it wrote.
    static func expectCleanLog(_ server: ServeProcess, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(server.process.stop(signal: SIGTERM) == 0, "\(server.process.output)", sourceLocation: sourceLocation)
        let log = server.process.output
        #expect(log.contains("starting"), "the server logged nothing: \(log)", sourceLocation: sourceLocation)
        TerminalText.expectClean(log, "the output of signet serve", sourceLocation: sourceLocation)
    }

    @Test("raw requests with controls in the request line, Host, fields, paths and body (plain HTTP)")
    func hostileRawRequestsLeaveTheLogClean() async throws {
        let folder = try TemporaryFolder(prefix: "signet-serve-log")
        let server = try await ServeProcess.start(in: folder, plainHTTP: true, logLevel: "trace")
        defer { server.process.stop(signal: SIGKILL) }
        let host = "127.0.0.1:\(server.port)"
        let path = Self.hostilePath
        func head(_ requestLine: String, _ fields: String = "") -> [UInt8] {
            Array("\(requestLine)\r\nHost: \(host)\r\n\(fields)Connection: close\r\n\r\n".utf8)
        }
        let json = Array(#"{"email":"a\u001b[31m@x.test\u0007\r\nsignet: OK\u009b\u202e","password":"p\u001b"}"#.utf8)
        let rawBody = Array("{\"email\":\"a\u{1b}[31m\u{07}\u{7f}\u{9b}@x.test\",\"password\":\"p\"}".utf8)
        func post(_ target: String, _ body: [UInt8], signature keyID: String = "k") -> [UInt8] {
            head(
                "POST \(target) HTTP/1.1",
                "Content-Type: application/json\r\nContent-Length: \(body.count)\r\nContent-Digest: sha-256=:AAAA:\r\n"
                    + "Signature-Input: sig1=(\"@method\" \"@target-uri\");keyid=\"\(keyID)\";alg=\"ed25519\"\r\nSignature: sig1=:AAAA:\r\n") + body
        }
        let requests: [[UInt8]] = [
            // Raw controls: in the request target, the Host, a field (a parser refuses most).
            head("GET /v1/\u{1b}[2J\u{07}\u{7f}x HTTP/1.1"),
            head("GET /v1/health\rX HTTP/1.1"),
            Array("GET /v1/health HTTP/1.1\r\nHost: evil\u{1b}]0;x\u{07}.test\r\nConnection: close\r\n\r\n".utf8),
            head("GET /v1/health HTTP/1.1", "X-Note: a\u{1b}[31mb\u{7f}\u{07}\r\n"),
            // UTF-8 a parser lets through as obs-text (C1, RLO), and a lone C1 byte.
            Array("GET /v1/health HTTP/1.1\r\nHost: evil\u{202e}\u{9b}.test\r\nConnection: close\r\n\r\n".utf8),
            head("GET /v1/health HTTP/1.1", "User-Agent: \u{9b}2J\u{202e}\r\n"),
            Array("GET /v1/health HTTP/1.1\r\nHost: \(host)\r\nUser-Agent: x".utf8) + [0x9B] + Array("2J\r\nConnection: close\r\n\r\n".utf8),
            // Percent-encoded controls in the paths and queries of the admin, user and resource routes.
            head("DELETE /v1/admin/apps/\(path) HTTP/1.1"),
            head("POST /v1/admin/users/\(path)/disable HTTP/1.1", "Content-Length: 0\r\n"),
            head("GET /v1/resources/\(path) HTTP/1.1"),
            head("GET /v1/trust?since=\(path) HTTP/1.1"),
            head("POST /v1/admin/resources/\(path)?expires=\(path) HTTP/1.1", "Content-Length: 0\r\n"),
            head("GET /\(path) HTTP/1.1"),
            // Bodies: JSON-escaped controls, raw ones, and a signature naming a hostile key.
            post("/v1/sessions", json),
            post("/v1/users", json, signature: path),
            post("/v1/sessions", rawBody),
            post("/v1/sessions", json, signature: "k\u{1b}[2J\u{07}"),
        ]
        var answers: [String] = []
        for request in requests {
            let socket = try LoopbackSocket(port: server.port)
            defer { socket.close() }
            try await socket.waitUntilConnected()
            // A refused request may be answered, or the connection closed without a word.
            let answer = try? await socket.exchange(request)
            answers.append(answer.map { String($0.status) } ?? "none")
        }
        #expect(try await plainHealthStatus(port: server.port) == 200, "the server is unwell after \(answers)")
        Self.expectCleanLog(server)
    }

    @Test("signed requests with controls in e-mails, passwords, names, paths and queries (TLS)")
    func hostileSignedRequestsLeaveTheLogClean() async throws {
        let folder = try TemporaryFolder(prefix: "signet-serve-log")
        let keys = try ServerKeys.initialise(in: folder)
        let server = try await ServeProcess.start(in: folder, logLevel: "trace")
        defer { server.process.stop(signal: SIGKILL) }
        try await keys.enrolApp(on: server)
        let api = try server.api
        let hostile = Self.hostile
        let path = Self.hostilePath
        let app = keys.appSigner
        let admin = keys.adminSigner
        var statuses: [String: Int] = [:]
        statuses["register e-mail"] = try await api.send(
            .post, "/v1/users", json: UserAPI.Registration(email: hostile + "@example.com", password: "correct horse battery", displayName: "Ann"),
            signer: app).status
        statuses["register name"] = try await api.send(
            .post, "/v1/users", json: UserAPI.Registration(email: "ann@example.com", password: "correct horse battery", displayName: hostile),
            signer: app).status
        statuses["register password"] = try await api.send(
            .post, "/v1/users", json: UserAPI.Registration(email: "bob@example.com", password: hostile + " staple", displayName: "Bob"),
            signer: app).status
        statuses["sign in e-mail"] = try await api.send(
            .post, "/v1/sessions", json: UserAPI.SignIn(email: hostile + "@example.com", password: hostile), signer: app).status
        statuses["sign in password"] = try await api.send(
            .post, "/v1/sessions", json: UserAPI.SignIn(email: "bob@example.com", password: hostile), signer: app).status
        statuses["enrol"] = try await api.send(.post, "/v1/admin/apps", json: AdminAPI.Enrolment(name: hostile, hmac: true), signer: admin).status
        statuses["revoke"] = try await api.send(.delete, "/v1/admin/apps/\(path)", signer: admin).status
        statuses["disable"] = try await api.send(.post, "/v1/admin/users/\(path)/disable", signer: admin).status
        statuses["sessions"] = try await api.send(.delete, "/v1/admin/users/\(path)/sessions", signer: admin).status
        statuses["resource"] = try await api.send(.get, "/v1/resources/\(path)", signer: app).status
        statuses["trust"] = try await api.send(.get, "/v1/trust?since=\(path)", signer: app).status
        #expect(!statuses.values.contains { $0 >= 500 }, "a hostile request failed the server: \(statuses)")
        #expect(try await api.send(.get, "/v1/health", signer: nil).status == 200, "the server is unwell after \(statuses)")
        Self.expectCleanLog(server)
    }

    @Test("an operator's --data path with controls: the log and the announcements")
    func aHostileDataPathIsEscaped() async throws {
        let folder = try TemporaryFolder(prefix: "signet-serve-log")
        // No CR or LF: the announcements must stay lines to be read.
        let server = try await ServeProcess.start(in: folder, plainHTTP: true, data: "data\u{1b}]0;x\u{07}\u{9b}2J\u{202e}", logLevel: "debug")
        defer { server.process.stop(signal: SIGKILL) }
        #expect(try await plainHealthStatus(port: server.port) == 200)
        Self.expectCleanLog(server)
        let log = server.process.output
        #expect(log.contains("data\\u{1b}]0;x\\u{7}"), "the data folder was not logged, escaped: \(log.debugDescription)")
    }
}
