import ArgumentParser
import SignetCore
import SignetPKCS11
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `--module` and `--pin-file`, for `pkcs11:` keys (RFC 7512): accepted by every command that
/// takes a key, and by `signet token`.
struct PKCS11Options: ParsableArguments {
    static let moduleVariable = "SIGNET_PKCS11_MODULE"

    @Option(name: .customLong("module"), help: ArgumentHelp(
        "The PKCS#11 module for pkcs11: keys whose URI names none (else $SIGNET_PKCS11_MODULE, else p11-kit's proxy).",
        valueName: "PATH"))
    var module: String?

    @Option(name: .customLong("pin-file"), help: ArgumentHelp(
        "Read the token PIN from the first line of FILE (a URI's pin-source comes first; else SIGNET_PKCS11_PIN, else a prompt).",
        valueName: "FILE"))
    var pinFile: String?

    /// `--module`, else `SIGNET_PKCS11_MODULE`.
    var modulePath: String? {
        if let module { return module }
        guard let value = getenv(Self.moduleVariable) else { return nil }
        let path = String(cString: value)
        return path.isEmpty ? nil : path
    }

    /// The PIN sources, in order.
    var pins: CLIPINProvider { CLIPINProvider(pinFile: pinFile) }

    /// The key source `pkcs11:` references resolve through.
    var keySource: PKCS11KeySource { PKCS11KeySource(modulePath: modulePath, pins: pins, allowsPINValueInURIs: false) }
}

/// Token PINs for the CLI: `--pin-file`, `SIGNET_PKCS11_PIN`, or a prompt on the terminal
/// (without echo) — the passphrase sources, for a PIN. A URI's `pin-source` comes first (the
/// key source reads it); its `pin-value` is refused, as a PIN on the command line.
struct CLIPINProvider: PKCS11PINProvider {
    static let environmentVariable = "SIGNET_PKCS11_PIN"

    var pinFile: String?

    func pin(for token: String) throws -> SecretBytes {
        let sources = CLIPassphraseProvider(
            passphraseFile: pinFile, what: "PIN", variable: Self.environmentVariable, fileFlag: "--pin-file",
            otherSource: "add pin-source to the URI")
        return try sources.passphrase(for: "token " + PrintableText.escaped(token, limit: 64, marksCut: true), confirm: false)
    }
}
