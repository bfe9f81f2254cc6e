import Foundation
import SignetCore
import SignetTestSupport
import Testing

/// `signet request send` (the built binary) against the live Hummingbird server.
@Suite("signet request send against a live server", .timeLimit(.minutes(2)))
struct RequestSendCLITests {
    /// A scratch folder, removed afterwards.
    static func withFolder(_ body: (URL) async throws -> Void) async throws {
        let folder = try TemporaryFolder(prefix: "signet-send")
        defer { folder.remove() }
        try await body(folder.url)
    }

    /// Runs signet without blocking a thread of the cooperative pool (the server's handlers
    /// need it while the process waits for them).
    static func signet(_ arguments: [String], in folder: URL, stdin: Data? = nil) async throws -> RunResult {
        try #require(FileManager.default.isExecutableFile(atPath: SignetBinary.path), "no signet binary at \(SignetBinary.path)")
        // The request's timeout is a hang guard: the server in this process answers late when
        // a loaded suite starves it, never wrongly.
        var arguments = arguments
        if arguments.starts(with: ["request", "send"]), !arguments.contains("--timeout") {
            arguments += ["--timeout", String(TestTimeouts.hangGuardSeconds)]
        }
        return try await SignetBinary.runAsync(arguments, in: folder, stdin: stdin)
    }

    static func writePEM(_ key: PrivateKey, to url: URL) throws {
        try Data(try key.encoded(as: .pem)).write(to: url)
    }

    @Test("send signs with a PEM key file: the server verifies it and echoes the body")
    func sendSigned() async throws {
        try await withLiveServer { server in
            try await Self.withFolder { folder in
                try Self.writePEM(server.keys.ed25519, to: folder.appendingPathComponent("ed.pem"))
                let body = "{\"hello\": \"from the CLI\"}\n"
                try Data(body.utf8).write(to: folder.appendingPathComponent("body.json"))

                let posted = try await Self.signet(
                    ["request", "send", "-X", "POST", "--url", "\(server.baseURL)/echo", "--body", "body.json", "--key", "ed.pem"], in: folder)
                #expect(posted.status == 0, "\(posted)")
                #expect(posted.out == body, "\(posted)")
                #expect(posted.stderr.contains("200"), "\(posted)")
                #expect(posted.stderr.lowercased().contains("x-signed-by: \(server.keys.keyID(.ed25519).lowercased())"), "\(posted)")

                // GET (the default method) with no body.
                let got = try await Self.signet(["request", "send", "--url", "\(server.baseURL)/hello", "--key", "ed.pem", "-q"], in: folder)
                #expect(got.status == 0, "\(got)")
                #expect(got.out == "hello")
                #expect(got.stderr.isEmpty, "\(got)")
            }
        }
    }

    @Test("send --body - reads the body from standard input once: it is signed and sent")
    func sendBodyFromStandardInput() async throws {
        try await withLiveServer { server in
            try await Self.withFolder { folder in
                try Self.writePEM(server.keys.p256, to: folder.appendingPathComponent("p256.pem"))
                let body = "piped body\n"
                let result = try await Self.signet(
                    ["request", "send", "-X", "POST", "--url", "\(server.baseURL)/echo", "--body", "-", "--key", "p256.pem"],
                    in: folder, stdin: Data(body.utf8))
                #expect(result.status == 0, "\(result)")
                #expect(result.out == body, "\(result)")
            }
        }
    }

    @Test("send with an HMAC secret and -i prints the head first")
    func sendHMAC() async throws {
        try await withLiveServer { server in
            try await Self.withFolder { folder in
                try Data(server.keys.hmacSecret).write(to: folder.appendingPathComponent("secret.bin"))
                try Data("mac me".utf8).write(to: folder.appendingPathComponent("body"))
                let result = try await Self.signet(
                    ["request", "send", "-i", "-X", "POST", "--url", "\(server.baseURL)/echo", "--body", "body",
                     "-a", "hmac-sha256", "--key", "secret.bin", "--keyid", TestKeys.hmacKeyID], in: folder)
                #expect(result.status == 0, "\(result)")
                #expect(result.out.hasPrefix("HTTP/1.1 200"), "\(result)")
                #expect(result.out.lowercased().contains("x-signed-by: shared-1"), "\(result)")
                #expect(result.out.hasSuffix("\n\nmac me"), "\(result)")
            }
        }
    }

    @Test("send with a key the server does not know exits 1 and shows the 401")
    func sendUnknownKey() async throws {
        try await withLiveServer { server in
            try await Self.withFolder { folder in
                try Self.writePEM(server.keys.stranger, to: folder.appendingPathComponent("stranger.pem"))
                try Data("who am I".utf8).write(to: folder.appendingPathComponent("body"))
                let result = try await Self.signet(
                    ["request", "send", "-X", "POST", "--url", "\(server.baseURL)/echo", "--body", "body", "--key", "stranger.pem"], in: folder)
                #expect(result.status == 1, "\(result)")
                #expect(result.stderr.contains("401"), "\(result)")
                #expect(result.out.contains("unknown keyid"), "\(result)")
                #expect(!result.out.contains("who am I"), "\(result)")

                // No server listening is exit 4 (I/O), not 1 (refused).
                let closed = try await Self.signet(
                    ["request", "send", "--url", "http://127.0.0.1:1/hello", "--key", "stranger.pem"], in: folder)
                #expect(closed.status == 4, "\(closed)")
            }
        }
    }
}
