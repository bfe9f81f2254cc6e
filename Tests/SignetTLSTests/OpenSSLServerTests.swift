import Foundation
#if canImport(Glibc)
import Glibc
#endif
import SignetCore
import SignetTestSupport
import SignetX509
import SignetX509TestSupport
import Testing
import X509

/// A real `openssl s_server -www` on 127.0.0.1, which answers `GET /` with its status page.
///
/// It listens on port 0: openssl picks a free port and prints it on its `ACCEPT 127.0.0.1:PORT`
/// line, which it writes once the socket listens, so there is no race for a port and no probe
/// connection. ``stop()`` terminates it (and so does `deinit`).
final class OpenSSLServer {
    /// What s_server's status page always holds.
    static let statusPage = "Ciphers supported in s_server binary"

    let server: BackgroundProcess
    let port: Int

    private init(server: BackgroundProcess, port: Int) {
        self.server = server
        self.port = port
    }

    deinit { stop() }

    /// Starts s_server in `folder` with `certificate` and `key` (and `chain` sent after the
    /// leaf); waits for it to listen (at most the hang guard).
    static func start(certificate: String, key: String, chain: String? = nil, in folder: TemporaryFolder) async throws -> OpenSSLServer {
        let openssl = try #require(ProcessRunner.which("openssl"), "openssl is not installed (Scripts/test installs it)")
        var logs: [String] = []
        for attempt in 1...3 {
            var arguments = ["s_server", "-accept", "127.0.0.1:0", "-cert", certificate, "-key", key, "-www", "-naccept", "100"]
            if let chain { arguments += ["-cert_chain", chain] }
            let server = try BackgroundProcess(openssl, arguments, in: folder.url, log: folder.fileURL("s_server-\(attempt).log"))
            // `ACCEPT 127.0.0.1:PORT`, or nil when it exits first.
            let port = try await server.waitForLine("ACCEPT 127.0.0.1", separator: ":").flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            if let port { return OpenSSLServer(server: server, port: port) }
            // s_server ignores SIGTERM; SIGKILL ends it at once.
            server.stop(signal: SIGKILL)
            logs.append(server.output)
        }
        throw OpenSSLServerError(description: "openssl s_server did not start:\n" + logs.joined(separator: "\n---\n"))
    }

    /// What s_server wrote so far, for failure messages.
    var logText: String { server.output }

    /// Ends the server (s_server ignores SIGTERM) and waits for it to end.
    func stop() { server.stop(signal: SIGKILL) }
}

struct OpenSSLServerError: Error, CustomStringConvertible {
    let description: String
}

/// A test CA (root → intermediate), a leaf for localhost and 127.0.0.1 served by s_server
/// with the intermediate, and a client signing key for `request send`.
struct OpenSSLSetup {
    let folder: TemporaryFolder
    let pki: TestPKI
    let leaf: Certificate
    let server: OpenSSLServer

    var url: String { "https://127.0.0.1:\(server.port)/" }
    var leafPin: String { leaf.publicKey.fingerprint.description }
    var intermediatePin: String { pki.intermediate.publicKey.fingerprint.description }

    static func start() async throws -> OpenSSLSetup {
        let folder = try TemporaryFolder(prefix: "signet-s_server")
        let pki = try await TestPKI.make()
        let (leaf, signer) = try await pki.leaf("DNS:localhost,IP:127.0.0.1")
        try folder.write("root.pem", try X509Files.encode(pki.root, as: .pem))
        try folder.write("intermediate.pem", try X509Files.encode(pki.intermediate, as: .pem))
        try folder.write("leaf.pem", try X509Files.encode(leaf, as: .pem))
        try folder.write("leaf.key", try signer.key.encoded(as: .pem))
        try OpenSSLServerTests.writeClientKey(in: folder)
        let server = try await OpenSSLServer.start(certificate: "leaf.pem", key: "leaf.key", chain: "intermediate.pem", in: folder)
        return OpenSSLSetup(folder: folder, pki: pki, leaf: leaf, server: server)
    }

    /// `signet request send` to the server's status page, signed with client.pem, with `tls` options.
    func send(_ tls: [String]) async throws -> RunResult {
        try await OpenSSLServerTests.send(url, tls, in: folder)
    }
}

/// `signet request send` and `signet cert pin` against a real `openssl s_server`: chain,
/// pins, pin sets and the pinned self-signed mode, from the command line.
@Suite("SignetTLS: the signet CLI against openssl s_server")
struct OpenSSLServerTests {
    static func randomPin() throws -> String { try PrivateKey.generate(.p256).publicKey.fingerprint.description }

    static func writeClientKey(in folder: TemporaryFolder) throws {
        try folder.write("client.pem", try PrivateKey.generate(.ed25519).encoded(as: .pem))
    }

    static func send(_ url: String, _ tls: [String], in folder: TemporaryFolder) async throws -> RunResult {
        try await SignetBinary.runAsync(["request", "send", "--url", url, "--key", "client.pem"] + tls, in: folder.url)
    }

    static func signet(_ arguments: [String], in folder: TemporaryFolder) async throws -> RunResult {
        try await SignetBinary.runAsync(arguments, in: folder.url)
    }

    /// A pin file (version 1) pinning 127.0.0.1.
    static func pinFile(_ pins: [String], reportOnly: Bool) -> String {
        let list = pins.map { "\"\($0)\"" }.joined(separator: ", ")
        return "{\"version\": 1, \"hosts\": [{\"host\": \"127.0.0.1\", \"pins\": [\(list)], \"reportOnly\": \(reportOnly)}]}\n"
    }

    @Test("--roots and the leaf's pin with a backup: exit 0 and the status page; a pinned intermediate or no pins too")
    func pinned() async throws {
        let setup = try await OpenSSLSetup.start()
        defer { setup.server.stop() }
        let result = try await setup.send(["--roots", "root.pem", "--pin", setup.leafPin, "--pin", try Self.randomPin()])
        #expect(result.status == 0, "\(result)\ns_server: \(setup.server.logText)")
        #expect(result.out.contains(OpenSSLServer.statusPage), "\(result)")
        let intermediate = try await setup.send(["--roots", "root.pem", "--pin", try Self.randomPin(), "--pin", setup.intermediatePin])
        #expect(intermediate.status == 0, "\(intermediate)")
        #expect(intermediate.out.contains(OpenSSLServer.statusPage))
        let chainOnly = try await setup.send(["--roots", "root.pem"])
        #expect(chainOnly.status == 0, "\(chainOnly)")
        #expect(chainOnly.out.contains(OpenSSLServer.statusPage))
    }

    @Test("two wrong pins: exit 1, naming the presented and expected pins, and a pin failure report")
    func wrongPins() async throws {
        let setup = try await OpenSSLSetup.start()
        defer { setup.server.stop() }
        let expected = [try Self.randomPin(), try Self.randomPin()]
        let result = try await setup.send(["--roots", "root.pem", "--pin", expected[0], "--pin", expected[1]])
        #expect(result.status == 1, "\(result)")
        for fragment in [expected[0], expected[1], setup.leafPin, "127.0.0.1", "no pinned key", "pin failure report"] {
            #expect(result.stderr.contains(fragment), "stderr does not mention \"\(fragment)\": \(result.stderr)")
        }
        #expect(!result.out.contains(OpenSSLServer.statusPage), "no data may be exchanged with a refused server")
    }

    @Test("--roots of another CA: exit 1, not trusted, even with the right pins")
    func otherCA() async throws {
        let setup = try await OpenSSLSetup.start()
        defer { setup.server.stop() }
        let other = try await TestPKI.make()
        try setup.folder.write("other-root.pem", try X509Files.encode(other.root, as: .pem))
        let result = try await setup.send(["--roots", "other-root.pem", "--pin", setup.leafPin, "--pin", try Self.randomPin()])
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("not trusted"), "\(result)")
        #expect(!result.out.contains(OpenSSLServer.statusPage))
        // Without --roots the system's roots do not know the test CA either.
        let system = try await setup.send([])
        #expect(system.status == 1, "\(system)")
        #expect(system.stderr.contains("not trusted"), "\(system)")
    }

    @Test("--pins: a report-only pin set with wrong pins connects and reports; a set with one pin is refused (exit 3)")
    func pinSetFiles() async throws {
        let setup = try await OpenSSLSetup.start()
        defer { setup.server.stop() }
        try setup.folder.write("report-only.json", Self.pinFile([try Self.randomPin(), try Self.randomPin()], reportOnly: true))
        let reported = try await setup.send(["--roots", "root.pem", "--pins", "report-only.json"])
        #expect(reported.status == 0, "\(reported)")
        #expect(reported.out.contains(OpenSSLServer.statusPage), "\(reported)")
        for fragment in ["pin failure report (report-only)", "known-pins", "127.0.0.1"] {
            #expect(reported.stderr.contains(fragment), "stderr does not mention \"\(fragment)\": \(reported.stderr)")
        }

        try setup.folder.write("one.json", Self.pinFile([setup.leafPin], reportOnly: false))
        let one = try await setup.send(["--roots", "root.pem", "--pins", "one.json"])
        #expect(one.status == 3, "\(one)")
        for fragment in ["one.json", "only one pin", "backup"] {
            #expect(one.stderr.contains(fragment), "stderr does not mention \"\(fragment)\": \(one.stderr)")
        }
        #expect(one.out.isEmpty)
        let single = try await setup.send(["--roots", "root.pem", "--pin", setup.leafPin])
        #expect(single.status == 3, "\(single)")
        #expect(single.stderr.contains("only one pin"), "\(single)")
        #expect(single.out.isEmpty)
        let both = try await setup.send(["--roots", "root.pem", "--pin", setup.leafPin, "--pins", "report-only.json"])
        #expect(both.status == 2, "\(both)")
    }

    @Test("cert pin https://127.0.0.1:PORT prints the leaf's pin, then the intermediate's")
    func pinsOfServer() async throws {
        let setup = try await OpenSSLSetup.start()
        defer { setup.server.stop() }
        let result = try await Self.signet(["cert", "pin", "https://127.0.0.1:\(setup.server.port)"], in: setup.folder)
        #expect(result.status == 0, "\(result)\ns_server: \(setup.server.logText)")
        let lines = result.out.split(separator: "\n").map(String.init)
        #expect(lines == ["\(setup.leafPin)  \(setup.leaf.subject)", "\(setup.intermediatePin)  \(setup.pki.intermediate.subject)"])
        #expect(lines.map { $0.components(separatedBy: "  ")[0] } == [setup.leafPin, setup.intermediatePin])
    }

    @Test("a self-signed server: accepted with --pinned-self-signed and its pin, refused in chain mode with the same pins")
    func pinnedSelfSigned() async throws {
        let folder = try TemporaryFolder(prefix: "signet-s_server")
        let signer = try SoftwareSigner(key: try PrivateKey.generate(.p256))
        let certificate = try await CertificateFactory.selfSigned(
            signer: signer, subject: try SubjectParsing.distinguishedName("CN=localhost"),
            alternativeNames: try SubjectParsing.alternativeNames("DNS:localhost,IP:127.0.0.1"), days: 5)
        try folder.write("self.pem", try X509Files.encode(certificate, as: .pem))
        try folder.write("self.key", try signer.key.encoded(as: .pem))
        try Self.writeClientKey(in: folder)
        let server = try await OpenSSLServer.start(certificate: "self.pem", key: "self.key", in: folder)
        defer { server.stop() }
        let url = "https://127.0.0.1:\(server.port)/"
        let pins = ["--pin", certificate.publicKey.fingerprint.description, "--pin", try Self.randomPin()]

        let pinned = try await Self.send(url, ["--pinned-self-signed"] + pins, in: folder)
        #expect(pinned.status == 0, "\(pinned)\ns_server: \(server.logText)")
        #expect(pinned.out.contains(OpenSSLServer.statusPage), "\(pinned)")

        let chainMode = try await Self.send(url, pins, in: folder)
        #expect(chainMode.status == 1, "\(chainMode)")
        #expect(chainMode.stderr.contains("self-signed"), "\(chainMode)")
        #expect(!chainMode.out.contains(OpenSSLServer.statusPage))

        let otherPins = try await Self.send(url, ["--pinned-self-signed", "--pin", try Self.randomPin(), "--pin", try Self.randomPin()], in: folder)
        #expect(otherPins.status == 1, "\(otherPins)")
        #expect(otherPins.stderr.contains(certificate.publicKey.fingerprint.description), "\(otherPins)")
        #expect(!otherPins.out.contains(OpenSSLServer.statusPage))

        let withRoots = try await Self.send(url, ["--pinned-self-signed", "--roots", "self.pem"] + pins, in: folder)
        #expect(withRoots.status == 2, "\(withRoots)")
        #expect(withRoots.stderr.contains("--pinned-self-signed"), "\(withRoots)")
    }
}
