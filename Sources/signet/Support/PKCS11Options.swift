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
    var keySource: PKCS11KeySource { PKCS11KeySource(modulePath: modulePath, pins: pins) }
}

/// Token PINs for the CLI: `--pin-file`, `SIGNET_PKCS11_PIN`, or a prompt on the terminal
/// (without echo); never from the command line. A URI's `pin-source` comes first (the key
/// source reads it).
struct CLIPINProvider: PKCS11PINProvider {
    static let environmentVariable = "SIGNET_PKCS11_PIN"

    var pinFile: String?

    func pin(for token: String) throws -> SecretBytes {
        let pin: SecretBytes
        if let pinFile {
            var bytes = try FileInput.readAll(path: pinFile, limit: 4096)
            defer { SecretBytes.zero(&bytes) }
            let line = bytes.prefix { $0 != UInt8(ascii: "\n") }
            pin = SecretBytes(line.last == UInt8(ascii: "\r") ? line.dropLast() : line)
        } else if let value = getenv(Self.environmentVariable) {
            pin = SecretBytes(Array(String(cString: value).utf8))
        } else {
            let terminal = isatty(2) == 1 ? open("/dev/tty", O_RDWR | O_NOCTTY) : -1
            guard terminal >= 0 else {
                throw SignetCoreError.passphraseUnavailable(
                    source: "token \(token)",
                    detail: "a PIN is needed and there is no terminal to ask on (use --pin-file FILE, set \(Self.environmentVariable), or add pin-source to the URI)")
            }
            defer { close(terminal) }
            let shown = PrintableText.escaped(token, limit: 64, marksCut: true)
            pin = try TerminalPrompt.read(prompt: "PIN for token \(shown): ", what: "PIN", confirm: false, terminal: terminal)
        }
        guard !pin.isEmpty else {
            throw SignetCoreError.invalidArgument(detail: "the PIN for token \(token) is empty")
        }
        return pin
    }
}
