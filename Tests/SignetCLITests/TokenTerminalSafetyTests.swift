import Foundation
import SignetTestSupport
import Testing

/// Issue 29, terminal safety on tokens: a token label and key labels that carry ESC, BEL, CR,
/// LF, DEL, a right-to-left override and a C1 CSI (softhsm2-util and pkcs11-tool set any bytes)
/// go through every command that prints them — `token list`, `token keys` and `token generate`
/// as text and as JSON, and the refusals that quote them — and no output line holds a
/// character that could drive the terminal or forge a line (``TerminalText``).
@Suite("signet token: no control character from a token reaches the terminal")
struct TokenTerminalSafetyTests {
    /// A token label of 17 bytes (a label holds 32).
    static let hostileToken = "t\u{1b}[31m\u{07}\r\n\u{7f}\u{202e}\u{9b}2J"
    /// A key label: an OSC that retitles the window, then the same controls.
    static let hostileKey = "k\u{1b}]0;x\u{07}\r\n\u{7f}\u{202e}\u{9b}1;1H"

    /// `text` as a pkcs11: URI path value, encoded as signet writes one: every byte but RFC
    /// 7512's `pk11-pchar` (letters, digits, `-._~:[]@!$'()*+,=&`) percent-encoded.
    static func percentEncoded(_ text: String) -> String {
        TerminalText.percentEncoded(text, keeping: "-._~:[]@!$'()*+,=&")
    }

    @Test("a hostile token label: token list, generate and keys, as text and JSON")
    func hostileTokenLabelIsEscaped() throws {
        let box = try Sandbox()
        let store = try SoftHSM(box, tokens: Self.hostileToken)

        let listed = try store.signetOK("token", "list", pin: nil)
        #expect(listed.out.contains("token=t%1B"), "the token is listed, its label percent-encoded in its URI: \(listed)")
        TerminalText.expectClean(listed, "token list")
        let json = try store.signetOK("token", "list", "--json", pin: nil)
        TerminalText.expectClean(json, "token list --json")
        let object = try #require(try SoftHSM.json(json) as? [String: Any])
        let slots = try #require(object["slots"] as? [[String: Any]], "\(object)")
        #expect(slots.contains { $0["label"] as? String == Self.hostileToken }, "the JSON does not carry the label as it is: \(slots)")

        // A key made on it: the URI printed and the note on standard error name the token.
        let token = "pkcs11:token=" + Self.percentEncoded(Self.hostileToken)
        let generated = try store.signetOK("token", "generate", token + ";object=k", "-t", "p256")
        TerminalText.expectClean(generated, "token generate")
        let keys = try store.signetOK("token", "keys", token, "--login")
        #expect(keys.out.contains("object=k;"), "\(keys)")
        TerminalText.expectClean(keys, "token keys")
        TerminalText.expectClean(try store.signetOK("token", "keys", token, "--login", "--json"), "token keys --json")

        // The label written into a URI unencoded is refused, and the refusal quotes the URI.
        let unencoded = try store.signet("token", "keys", "pkcs11:token=" + Self.hostileToken)
        #expect(unencoded.status == 2, "\(unencoded)")
        TerminalText.expectClean(unencoded, "token keys (an unencoded label refused)")
        // A URI that matches no token: the refusal lists the labels of those there are.
        try box.write("file", "to be signed\n")
        let noToken = try store.signet("sign", "--key", "pkcs11:token=nosuch;object=k", "file", "-o", "sig")
        #expect(noToken.status == 3 && noToken.stderr.contains("nothing on the token matches"), "\(noToken)")
        TerminalText.expectClean(noToken, "sign --key (no such token)")
    }

    @Test("hostile key labels: token keys as text and JSON, token generate and its refusal")
    func hostileKeyLabelsAreEscaped() throws {
        let box = try Sandbox()
        let store = try SoftHSM(box, tokens: "demo")
        try store.pkcs11ToolOK(token: "demo", "--keypairgen", "--key-type", "EC:prime256v1", "--id", "01", "--label", Self.hostileKey)
        let generated = try store.signetOK("token", "generate", "pkcs11:token=demo", "-t", "p256", "--label", Self.hostileKey + "2")
        #expect(generated.out.hasPrefix("pkcs11:token=demo;object=k%1B"), "\(generated)")
        TerminalText.expectClean(generated, "token generate --label")

        // Listed without a PIN (the public halves) and with one, as text and JSON.
        for login in [false, true] {
            let flags = login ? ["--login"] : []
            let text = try store.signet(arguments: ["token", "keys", "pkcs11:token=demo"] + flags, pin: login ? SoftHSM.pin : nil)
            #expect(text.status == 0, "\(text)")
            #expect(text.stdout.filter { $0 == UInt8(ascii: "\n") }.count == 2, "two keys, one line each: \(text)")
            TerminalText.expectClean(text, "token keys \(flags)")
            let json = try store.signet(arguments: ["token", "keys", "pkcs11:token=demo", "--json"] + flags, pin: login ? SoftHSM.pin : nil)
            #expect(json.status == 0, "\(json)")
            TerminalText.expectClean(json, "token keys --json \(flags)")
        }
        let listed = try store.keys("pkcs11:token=demo")
        let uris = listed.compactMap { $0["uri"] as? String }
        #expect(uris.contains("pkcs11:token=demo;object=\(Self.percentEncoded(Self.hostileKey));id=%01;type=private"), "\(uris)")

        // A URI that matches no key: the refusal lists the labels of those there are.
        try box.write("file", "to be signed\n")
        let missing = try store.signet("sign", "--key", "pkcs11:token=demo;object=nothere", "file", "-o", "sig")
        #expect(missing.status == 3 && missing.stderr.contains("it has"), "\(missing)")
        TerminalText.expectClean(missing, "sign --key (no such key)")

        // The same label again is refused, and the refusal quotes it.
        let again = try store.signet("token", "generate", "pkcs11:token=demo", "-t", "p256", "--label", Self.hostileKey)
        #expect(again.status == 2, "\(again)")
        #expect(again.stderr.contains("already has a key labelled"), "\(again)")
        TerminalText.expectClean(again, "token generate (a label taken)")
    }
}
