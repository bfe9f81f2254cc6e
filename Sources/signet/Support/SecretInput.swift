import SignetCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A secret typed or piped in by the user (a password to hash, a secret to store): from a
/// file, from standard input when it is not a terminal, or from a prompt without echo.
/// Never from the command line, where `ps` and shell history would show it.
enum SecretInput {
    /// The longest secret read from a file or standard input.
    static let maximumSize = 64 << 10

    /// Reads the secret. `what` names it in prompts and messages ("password", "secret");
    /// `confirm` asks twice at a prompt.
    static func read(file: String?, what: String, confirm: Bool) throws -> SecretBytes {
        if let file {
            return try fromStream(path: file, what: what)
        }
        if isatty(0) != 1 {
            return try fromStream(path: "-", what: what)
        }
        let terminal = open("/dev/tty", O_RDWR | O_NOCTTY)
        guard terminal >= 0 else {
            throw SignetCoreError.passphraseUnavailable(
                source: "standard input", detail: "cannot open the terminal to ask for the \(what)")
        }
        defer { close(terminal) }
        return try TerminalPrompt.read(
            prompt: "\(what.prefix(1).uppercased() + what.dropFirst()): ", what: what, confirm: confirm, terminal: terminal)
    }

    /// The whole content of `path` (`-`: standard input) minus one trailing line ending.
    private static func fromStream(path: String, what: String) throws -> SecretBytes {
        var bytes: [UInt8]
        let tooLong = SignetCoreError.invalidArgument(
            detail: "the \(what) in \(path == "-" ? "standard input" : path) is longer than \(maximumSize / 1024) KiB")
        do {
            // Room for the line ending that is removed below.
            bytes = try FileInput.readAll(path: path, limit: maximumSize + 2)
        } catch SignetCoreError.tooLarge {
            throw tooLong
        }
        defer { SecretBytes.zero(&bytes) }
        var end = bytes.count
        if end > 0, bytes[end - 1] == UInt8(ascii: "\n") {
            end -= 1
            if end > 0, bytes[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        }
        guard end <= maximumSize else { throw tooLong }
        return SecretBytes(bytes[0..<end])
    }
}
