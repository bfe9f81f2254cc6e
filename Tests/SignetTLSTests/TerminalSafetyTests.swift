import Foundation
import SignetCore
import SignetTestSupport
import SignetX509
import SignetX509TestSupport
import Testing

/// Issue 29, terminal safety: a certificate whose subject and names carry ESC, BEL, CR, LF, DEL,
/// a C1 CSI and a right-to-left override (made by openssl, which Signet's own parsers would
/// refuse) goes through every command that prints it — locally (`cert show` as text and JSON,
/// `cert pin`, `cert verify` accepted and refused) and from a remote server (`cert pin https://`,
/// `request send` refused) — and no output holds a character that could drive the terminal or
/// forge a line: every one is escaped.
@Suite("SignetTLS: no control character from a certificate reaches the terminal")
struct TerminalSafetyTests {
    static let hostileSubject = "/CN=ok\u{1b}]0;x\u{07}\r\nsignet: OK\u{202e}\u{9b}2J/O=a\u{7f}b"

    @Test func hostileCertificateOutputIsEscaped() async throws {
        let folder = try TemporaryFolder(prefix: "signet-terminal")
        let openssl = try #require(ProcessRunner.which("openssl"), "openssl is not installed (Scripts/test installs it)")
        let made = try ProcessRunner.run(openssl, [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "hostile.key", "-days", "5", "-utf8",
            "-subj", Self.hostileSubject, "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1,URI:http://x\u{1b}[2J",
            "-out", "hostile.pem",
        ], in: folder.url)
        try #require(made.status == 0, "\(made)")
        try folder.write("other.pem", try X509Files.encode(try await TestPKI.make().root, as: .pem))
        let signet = { (arguments: [String]) async throws -> RunResult in try await SignetBinary.runAsync(arguments, in: folder.url) }

        let shown = try await signet(["cert", "show", "hostile.pem"])
        #expect(shown.status == 0, "\(shown)")
        #expect(shown.out.contains("\\u{1b}]0"), "the escape is shown, escaped: \(shown)")
        TerminalText.expectClean(shown, "cert show")
        TerminalText.expectClean(try await signet(["cert", "show", "--json", "hostile.pem"]), "cert show --json")
        TerminalText.expectClean(try await signet(["cert", "pin", "hostile.pem"]), "cert pin")
        let verified = try await signet(["cert", "verify", "--roots", "hostile.pem", "--purpose", "any", "hostile.pem"])
        #expect(verified.status == 0, "\(verified)")
        TerminalText.expectClean(verified, "cert verify (accepted)")
        let refused = try await signet(["cert", "verify", "--roots", "other.pem", "hostile.pem"])
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.stderr.contains("\\u{1b}"), "the refusal names the subject, escaped: \(refused)")
        TerminalText.expectClean(refused, "cert verify (refused)")
        TerminalText.expectClean(try await signet(["cert", "verify", "--roots", "hostile.pem", "--hostname", "victim.test", "hostile.pem"]), "cert verify --hostname")

        let server = try await OpenSSLServer.start(certificate: "hostile.pem", key: "hostile.key", in: folder)
        defer { server.stop() }
        let url = "https://127.0.0.1:\(server.port)/"
        let pinned = try await signet(["cert", "pin", url])
        #expect(pinned.status == 0, "\(pinned)")
        TerminalText.expectClean(pinned, "cert pin https://")
        try OpenSSLServerTests.writeClientKey(in: folder)
        let sent = try await OpenSSLServerTests.send(url, ["--roots", "other.pem"], in: folder)
        #expect(sent.status == 1, "\(sent)")
        TerminalText.expectClean(sent, "request send (refused)")
    }

    @Test func hostileNamesAndCommentsAreEscaped() async throws {
        let folder = try TemporaryFolder(prefix: "signet-terminal-files")
        let signet = { (arguments: [String]) async throws -> RunResult in try await SignetBinary.runAsync(arguments, in: folder.url) }
        // A checksum list naming a file whose name holds an OSC sequence and a BEL.
        let name = "a\u{1b}]0;x\u{07}b\u{202e}"
        try folder.write(name, "")
        try folder.write("list.txt", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  \(name)\n")
        let checked = try await signet(["hash", "--check", "list.txt"])
        #expect(checked.status == 0, "\(checked)")
        TerminalText.expectClean(checked, "hash --check")
        // A minisign signature whose trusted comment clears the screen.
        let made = try await signet(["minisign", "generate", "-W", "-p", "k.pub", "-s", "k.key"])
        try #require(made.status == 0, "\(made)")
        try folder.write("data.bin", "data")
        let signed = try await signet(["minisign", "sign", "-s", "k.key", "-m", "data.bin", "-t", "ok\u{1b}[2J\u{9b}1;1H"])
        try #require(signed.status == 0, "\(signed)")
        let verified = try await signet(["minisign", "verify", "-p", "k.pub", "-m", "data.bin"])
        #expect(verified.status == 0, "\(verified)")
        #expect(verified.out.contains("\\u{1b}[2J"), "\(verified)")
        TerminalText.expectClean(verified, "minisign verify")
    }
}
