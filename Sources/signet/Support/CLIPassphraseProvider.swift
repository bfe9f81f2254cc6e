import SignetCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Passphrases for the CLI — never a plain argument — from these sources, in this order:
/// `--passphrase-file F`, the `SIGNET_PASSPHRASE` environment variable, a prompt on the
/// controlling terminal (without echo; asked twice when a new passphrase is chosen).
struct CLIPassphraseProvider: PassphraseProvider {
    /// The longest passphrase file read (a passphrase, not a document).
    static let maximumFileSize = 64 << 10
    static let environmentVariable = "SIGNET_PASSPHRASE"

    var passphraseFile: String?
    /// Whether the environment variable is a source (not for a new passphrase replacing it).
    var useEnvironment = true
    /// The secret's name in prompts and messages, the variable it may come from, and the flag
    /// that names its file: a token PIN is the same kind of secret (``CLIPINProvider``).
    var what = "passphrase"
    var variable = CLIPassphraseProvider.environmentVariable
    var fileFlag = "--passphrase-file"
    /// Where else the secret may come from, named when none was given (a PIN: the URI).
    var otherSource: String?

    func passphrase(for source: String, confirm: Bool) throws -> SecretBytes {
        let secret = try obtain(for: source, confirm: confirm)
        if secret.isEmpty {
            throw SignetCoreError.invalidArgument(detail: "the \(what) for \(source) is empty")
        }
        return secret
    }

    private func obtain(for source: String, confirm: Bool) throws -> SecretBytes {
        if let passphraseFile {
            var bytes = try FileInput.readAll(path: passphraseFile, limit: Self.maximumFileSize)
            defer { SecretBytes.zero(&bytes) }
            // Like openssl's `file:` source: the first line, without its line ending.
            let line = bytes.prefix { $0 != UInt8(ascii: "\n") }
            let trimmed = line.last == UInt8(ascii: "\r") ? line.dropLast() : line
            return SecretBytes(trimmed)
        }
        if useEnvironment, let value = getenv(variable) {
            return SecretBytes(Array(String(cString: value).utf8))
        }
        // Prompt only when a person is watching: standard error is a terminal.
        let terminal = isatty(2) == 1 ? open("/dev/tty", O_RDWR | O_NOCTTY) : -1
        guard terminal >= 0 else {
            throw SignetCoreError.passphraseUnavailable(
                source: source,
                detail: useEnvironment
                    ? "a \(what) is needed and there is no terminal to ask on (use \(fileFlag) FILE"
                        + (otherSource.map { ", set \(variable), or \($0))" } ?? " or set \(variable))")
                    : "a \(what) is needed and there is no terminal to ask on (use --new-passphrase-file FILE)")
        }
        defer { close(terminal) }
        let prompt = what.prefix(1).uppercased() + what.dropFirst() + " for \(source): "
        return try TerminalPrompt.read(prompt: prompt, what: what, confirm: confirm, terminal: terminal)
    }
}

/// Reads a line from the terminal with echo off.
enum TerminalPrompt {
    static let maximumLength = 4096

    /// Asks once, or with `confirm` twice ("Repeat the WHAT: "), requiring the same answer.
    static func read(prompt: String, what: String, confirm: Bool, terminal: Int32) throws -> SecretBytes {
        let first = try read(prompt: prompt, terminal: terminal)
        guard confirm else { return first }
        let second = try read(prompt: "Repeat the \(what): ", terminal: terminal)
        guard ConstantTime.equals(first.bytes, second.bytes) else {
            throw SignetCoreError.invalidArgument(detail: "the two \(what)s differ")
        }
        return first
    }

    static func read(prompt: String, terminal: Int32) throws -> SecretBytes {
        _ = Array(prompt.utf8).withUnsafeBytes { systemWrite(terminal, $0.baseAddress, $0.count) }
        var saved = termios()
        let haveAttributes = tcgetattr(terminal, &saved) == 0
        if haveAttributes {
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO)
            SignalCleanup.terminalChanged(terminal, restoring: saved)
            tcsetattr(terminal, TCSAFLUSH, &quiet)
        }
        defer {
            if haveAttributes {
                tcsetattr(terminal, TCSAFLUSH, &saved)
                SignalCleanup.terminalRestored()
            }
            _ = Array("\n".utf8).withUnsafeBytes { systemWrite(terminal, $0.baseAddress, $0.count) }
        }
        var line = [UInt8]()
        line.reserveCapacity(128)
        defer { SecretBytes.zero(&line) }
        var byte: UInt8 = 0
        while true {
            let count = systemRead(terminal, &byte, 1)
            if count < 0, errno == EINTR { continue }
            if count <= 0 || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") { break }
            guard line.count < maximumLength else {
                throw SignetCoreError.invalidArgument(detail: "the passphrase is longer than \(maximumLength) bytes")
            }
            line.append(byte)
        }
        return SecretBytes(line)
    }
}
