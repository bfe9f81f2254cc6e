import Foundation
import SignetCore
import Testing

/// `signet request send` (the built binary) against the live Hummingbird server.
@Suite("signet request send against a live server", .timeLimit(.minutes(2)))
struct RequestSendCLITests {
    struct CLIResult: CustomStringConvertible {
        var status: Int32
        var stdout: String
        var stderr: String
        var description: String { "exit \(status)\nstdout: \(stdout)\nstderr: \(stderr)" }
    }

    /// The `signet` executable next to the test bundle (or `SIGNET_BIN`), found as SignetCLITests finds it.
    static let signetBinary: String = {
        if let override = ProcessInfo.processInfo.environment["SIGNET_BIN"] { return override }
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var folder = URL(fileURLWithPath: executable).deletingLastPathComponent()
        while !FileManager.default.isExecutableFile(atPath: folder.appendingPathComponent("signet").path), folder.path != "/" {
            folder.deleteLastPathComponent()
        }
        return folder.appendingPathComponent("signet").path
    }()

    /// A scratch folder, removed afterwards.
    static func withFolder(_ body: (URL) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("signet-send-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try await body(folder)
    }

    /// Runs signet without blocking a thread of the cooperative pool (the server's handlers
    /// need it while the process waits for them).
    static func signet(_ arguments: [String], in folder: URL, stdin: Data? = nil) async throws -> CLIResult {
        try #require(FileManager.default.isExecutableFile(atPath: signetBinary), "no signet binary at \(signetBinary)")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: signetBinary)
        process.arguments = arguments
        process.currentDirectoryURL = folder
        var environment = ProcessInfo.processInfo.environment
        environment["SIGNET_PASSPHRASE"] = nil
        environment["SIGNET_HMAC_KEY"] = nil
        environment["SIGNET_VAULT"] = nil
        environment["XDG_DATA_HOME"] = folder.appendingPathComponent("xdg-data").path
        process.environment = environment
        let outURL = folder.appendingPathComponent(".out-\(UUID().uuidString)")
        let errURL = folder.appendingPathComponent(".err-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let outHandle = try FileHandle(forWritingTo: outURL)
        let errHandle = try FileHandle(forWritingTo: errURL)
        process.standardOutput = outHandle
        process.standardError = errHandle
        if let stdin {
            let inURL = folder.appendingPathComponent(".in-\(UUID().uuidString)")
            try stdin.write(to: inURL)
            process.standardInput = try FileHandle(forReadingFrom: inURL)
        } else {
            process.standardInput = FileHandle.nullDevice
        }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            process.terminationHandler = { _ in continuation.resume() }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
            }
        }
        try outHandle.close()
        try errHandle.close()
        let status = process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
        return CLIResult(
            status: status,
            stdout: String(decoding: try Data(contentsOf: outURL), as: UTF8.self),
            stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
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
                #expect(posted.stdout == body, "\(posted)")
                #expect(posted.stderr.contains("200"), "\(posted)")
                #expect(posted.stderr.lowercased().contains("x-signed-by: \(server.keys.keyID(.ed25519).lowercased())"), "\(posted)")

                // GET (the default method) with no body.
                let got = try await Self.signet(["request", "send", "--url", "\(server.baseURL)/hello", "--key", "ed.pem", "-q"], in: folder)
                #expect(got.status == 0, "\(got)")
                #expect(got.stdout == "hello")
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
                #expect(result.stdout == body, "\(result)")
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
                #expect(result.stdout.hasPrefix("HTTP/1.1 200"), "\(result)")
                #expect(result.stdout.lowercased().contains("x-signed-by: shared-1"), "\(result)")
                #expect(result.stdout.hasSuffix("\n\nmac me"), "\(result)")
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
                #expect(result.stdout.contains("unknown keyid"), "\(result)")
                #expect(!result.stdout.contains("who am I"), "\(result)")

                // No server listening is exit 4 (I/O), not 1 (refused).
                let closed = try await Self.signet(
                    ["request", "send", "--url", "http://127.0.0.1:1/hello", "--key", "stranger.pem", "--timeout", "5"], in: folder)
                #expect(closed.status == 4, "\(closed)")
            }
        }
    }
}
