import Foundation
import SignetCore
import SignetTestSupport
import Testing

/// What an adversarial review found printed (issue 29's second attack round): PINs of PKCS#11
/// URIs in odd spellings and places, control characters in ArgumentParser's messages and in
/// JSON output. No token is needed: every place refuses before a module is loaded, or loads
/// none.
@Suite struct SecretLeakTests {
    static let pin = "7319"
    /// Spellings of a PIN in a `pkcs11:` URI: the separators a parser may not split on, a
    /// capitalised scheme, percent-encoded and misspelled attribute names, a fragment, the PIN
    /// itself percent-encoded.
    static let uris: [String] = [
        "pkcs11:token=tok;object=k1?pin-value=\(pin)",
        "pkcs11:token=tok;object=k1?PIN-VALUE=\(pin)",
        "pkcs11:token=tok;object=k1?pin%2Dvalue=\(pin)",
        "pkcs11:token=tok;object=k1;pin-value=\(pin)",
        "pkcs11:pin-value=\(pin);token=tok",
        "pkcs11:token=tok;object=k1?module-path=/nonexistent/lib.so;pin-value=\(pin)",
        "pkcs11:token=tok;object=k1?module-name=nosuch;pin-value=\(pin)",
        "pkcs11:token=tok;object=k1?pin-source=file:/nonexistent;pin-value=\(pin)",
        "pkcs11:token=tok;object=k1?pin-value=\(pin);module-path=/x",
        "pkcs11:token=tok;object=k1?pin-value%3D\(pin)",
        "pkcs11:token=tok;object=k1?pin-value%={pin}".replacingOccurrences(of: "{pin}", with: pin),
        "pkcs11:token=tok;object=k1?pin-value%00=\(pin)",
        "pkcs11:token=tok;object=k1?pin-value%20=\(pin)",
        "pkcs11:token=tok;object=k1#pin-value=\(pin)",
        "pkcs11:token=tok%3Fpin-value=\(pin)",
        "PKCS11:token=tok;object=k1?pin-value=\(pin)",
        "Pkcs11:object=k1?pin-value=\(pin)",
        "pkcs11:token=tok;object=k1?pin-value=%37%33%31%39",
        "pkcs11:token=tok;object=k1?pin\u{2010}value=\(pin)",
        "pkcs11:token=tok;object=k1?pin-value=\(pin)?pin-value=\(pin)",
    ]

    /// Every place a key reference (or a stray argument) goes, without a token.
    static func places(_ uri: String) -> [[String]] {
        [
            ["sign", "--key", uri, "data.txt"],
            ["key", "fingerprint", uri],
            ["encrypt", "-r", uri, "data.txt"],
            ["decrypt", "-i", uri, "data.txt"],
            ["token", "list", "--module", uri],
            ["key", "generate", "-t", "p256", "-o", "k.pem", uri],
            ["cert", "csr", "--key", uri, "--subject", "CN=x", "-o", "out.csr"],
        ]
    }

    @Test func noSpellingOfAPINIsEverPrinted() throws {
        let box = try Sandbox()
        _ = try box.write("data.txt", "hello\n")
        var leaks: [String] = []
        for uri in Self.uris {
            for arguments in Self.places(uri) {
                let result = try box.signet(arguments: arguments)
                #expect(result.status != 0, "\(arguments) succeeded")
                let output = result.out + result.stderr
                if output.contains(Self.pin) || output.contains("%37%33%31%39") {
                    leaks.append("\(arguments.prefix(2).joined(separator: " ")) \(uri.debugDescription): \(output.prefix(300))")
                }
            }
        }
        #expect(leaks.isEmpty, "\(leaks.count) leaks:\n\(leaks.prefix(10).joined(separator: "\n"))")
    }

    /// ArgumentParser quotes what it refuses: escaped like every other message.
    @Test func argumentParsersMessagesAreEscaped() throws {
        let box = try Sandbox()
        _ = try box.write("data.txt", "hello\n")
        let hostile = "-x\u{1B}]0;PWNED\u{07}\u{1B}[31mRED\r\u{9B}1m\u{202E}\u{2028}"
        for arguments in [["hash", hostile], ["cert", "verify", "data.txt", "--purpose", hostile], ["key", "generate", "-t", "p256", "-o", "k.pem", hostile]] {
            let result = try box.signet(arguments: arguments)
            #expect(result.status == 2, "\(arguments): \(result)")
            TerminalText.expectClean(result, "\(arguments.prefix(2))")
        }
    }

    /// `vault show --json` escapes C1 and bidi characters too (JSON allows `\uXXXX` for any).
    @Test func jsonOutputIsEscaped() throws {
        let box = try Sandbox()
        let environment = ["SIGNET_VAULT": box.path("v.db"), "SIGNET_PASSPHRASE": "a passphrase for the test"]
        #expect(try box.signet(arguments: ["vault", "init", "--scrypt-log-n", "10", "-q"], environment: environment).status == 0)
        let value = "x\u{1B}]0;PWNED\u{07}\r\u{9B}1m\u{85}\u{202E}\u{2028}"
        let set = try box.signet(arguments: ["vault", "set", "svc", "acct", "--attribute", "k=\(value)"], stdin: Data("secret\n".utf8), environment: environment)
        try #require(set.status == 0, "\(set)")
        let shown = try box.signet(arguments: ["vault", "show", "svc", "acct", "--json"], environment: environment)
        #expect(shown.status == 0, "\(shown)")
        TerminalText.expectClean(shown, "vault show --json")
        // The same value, once decoded.
        let decoded = try JSONSerialization.jsonObject(with: shown.stdout) as? [String: Any]
        #expect("\(decoded ?? [:])".contains("PWNED"), "\(shown.out)")
    }
}
