import ArgumentParser
import SignetCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `signet hmac`: HMAC-SHA256/512 of a file, or a constant-time check of a given tag.
struct HMACCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hmac",
        abstract: "Compute or verify an HMAC-SHA256/512 tag of a file.",
        discussion: """
        The key is the exact bytes of --key-file (no newline is stripped), or the UTF-8 bytes \
        of the SIGNET_HMAC_KEY environment variable. Keys never go on the command line. \
        The tag is printed in hex (or base64 with --base64). With --verify TAG (hex or \
        base64), the computed tag is compared in constant time: exit 0 if equal, 1 if not.
        """
    )

    @Option(name: .shortAndLong, help: ArgumentHelp("The MAC.", valueName: "ALG"))
    var algorithm: MessageAuthenticator.Algorithm = .hmacSHA256

    @Option(name: .customLong("key-file"), help: ArgumentHelp("File whose bytes are the key.", valueName: "K"))
    var keyFile: String?

    @Flag(help: "Print the tag in base64 instead of hex.")
    var base64 = false

    @Option(help: ArgumentHelp("Check this tag (hex or base64) instead of printing one.", valueName: "TAG"))
    var verify: String?

    @OptionGroup var output: QuietOption

    @Argument(help: ArgumentHelp("The file ('-' or none: standard input).", valueName: "FILE"))
    var file: String = "-"

    func validate() throws {
        if keyFile == "-" && file == "-" {
            throw ValidationError("the key and the message cannot both come from standard input")
        }
        if verify != nil && base64 { throw ValidationError("--base64 chooses the printed form; it does not apply with --verify") }
    }

    func run() async throws {
        let expected = try verify.map { try Self.decodeTag($0, length: algorithm.tagByteCount) }
        let key = try HMACKeyInput.load(file: keyFile, option: "--key-file")
        let bar = ProgressBar.make(label: "hmac", total: FileSize.of(file), quiet: output.quiet)
        defer { bar?.finish() }
        let tag = try MessageAuthenticator.authenticate(path: file, algorithm: algorithm, key: key, progress: bar?.callback)
        bar?.finish()
        let subject = file == "-" ? "standard input" : file
        if let expected {
            try MessageAuthenticator.verify(tag: tag, expected: expected, subject: subject)
            Console.note("\(subject): HMAC OK", quiet: output.quiet)
        } else {
            Console.write((base64 ? Base64.encode(tag) : Hex.encode(tag)) + "\n")
        }
    }

    /// Decodes an expected tag written in hex or base64 (standard or URL-safe).
    static func decodeTag(_ text: String, length: Int) throws -> [UInt8] {
        let trimmed = String(text.filter { !$0.isWhitespace })
        if trimmed.count == length * 2, let bytes = Hex.decode(trimmed) { return bytes }
        if let bytes = Base64.decode(trimmed) ?? Base64.decodeURL(trimmed), bytes.count == length { return bytes }
        throw SignetCoreError.invalidArgument(
            detail: "--verify: the tag must be \(length * 2) hex digits or the base64 of \(length) bytes")
    }
}
