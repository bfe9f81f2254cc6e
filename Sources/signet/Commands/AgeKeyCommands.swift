import ArgumentParser
import Foundation
import SignetAge
import SignetCore
import Synchronization

/// `signet age keygen|recipient`: age's X25519 key files, as age-keygen makes and reads them.
struct AgeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "age",
        abstract: "age key files (as age-keygen): generate one, or print its recipients.",
        discussion: "Encrypt and decrypt with 'signet encrypt' and 'signet decrypt'.",
        subcommands: [AgeKeygen.self, AgeRecipientCommand.self]
    )
}

/// `signet age keygen` (age-keygen).
struct AgeKeygen: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keygen",
        abstract: "Generate an age X25519 key file (as age-keygen).",
        discussion: """
        The file holds '# created:' and '# public key:' comments and the AGE-SECRET-KEY-1… \
        line, as age-keygen writes it; -o FILE is written with mode 0600, never over an \
        existing file without --force. 'Public key: age1…' goes to standard error unless the \
        key itself goes to a terminal (where its comment shows it) or --quiet is given.
        """
    )

    @Option(name: .shortAndLong, help: ArgumentHelp("Where to write the key file (default: standard output).", valueName: "FILE"))
    var output: String?

    @Flag(help: "Replace an existing output file.")
    var force = false

    @OptionGroup var quietOption: QuietOption

    func run() async throws {
        try StreamedOutput.refuseExisting(output, force: force)
        let identity = X25519Identity.generate()
        var contents = Array(AgeKeyFile.keyFileContents(identity, created: Date()).utf8)
        defer { SecretBytes.zero(&contents) }
        try OutputDestination.write(contents, to: output, binary: false, permissions: .privateToOwner, force: force)
        let toTerminal = (output == nil || output == "-") && Console.stdoutIsTerminal
        if !toTerminal && !quietOption.quiet {
            Console.writeError("Public key: \(identity.recipient.string)\n")
        }
    }
}

/// `signet age recipient` (age-keygen -y).
struct AgeRecipientCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recipient",
        abstract: "Print the age1… recipient of each key in an age key file (as age-keygen -y).",
        discussion: """
        One line per AGE-SECRET-KEY-1… in the file. A key file that is passphrase-encrypted \
        (age -p) is opened with the passphrase from --passphrase-file, SIGNET_PASSPHRASE or \
        a prompt.
        """
    )

    @Option(name: .shortAndLong, help: ArgumentHelp("Where to write the recipients (default: standard output).", valueName: "OUT"))
    var output: String?

    @Flag(help: "Replace an existing output file.")
    var force = false

    @OptionGroup var passphraseOption: AgePassphraseOption

    @Argument(help: ArgumentHelp("The key file ('-' or none: standard input).", valueName: "IDENTITY"))
    var identity: String = "-"

    func validate() throws {
        if identity == "-" && passphraseOption.passphraseFile == "-" {
            throw ValidationError("standard input ('-') can be read only once")
        }
    }

    func run() async throws {
        try StreamedOutput.refuseExisting(output, force: force)
        let identities = try AgeIdentityFile.load(identity, passphrases: passphraseOption.provider)
        let text = identities.map { $0.recipient.string + "\n" }.joined()
        try OutputDestination.write(Array(text.utf8), to: output, binary: false, permissions: .standard, force: force)
    }
}

/// Reads `-i` key files: plain ones, and ones encrypted with a passphrase as `age -p key.txt`
/// makes them (age reads both).
enum AgeIdentityFile {
    /// The identities in the key file at `path` (`-`: standard input).
    static func load(_ path: String, passphrases: CLIPassphraseProvider) throws -> [X25519Identity] {
        let source = StreamedOutput.displayName(input: path)
        // Room for an encrypted key file: header, tags and armor around the key file's bytes.
        var bytes = try FileInput.readAll(path: path, limit: 2 * AgeKeyFile.maximumSize + 4096)
        defer { SecretBytes.zero(&bytes) }
        guard isEncrypted(bytes) else {
            guard bytes.count <= AgeKeyFile.maximumSize else {
                throw SignetCoreError.tooLarge(source: source, limit: AgeKeyFile.maximumSize)
            }
            return try AgeKeyFile.identities(in: bytes, source: source)
        }
        let passphrase = try passphrases.passphrase(for: source, confirm: false)
        var plain = try decrypt(bytes, passphrase: passphrase, source: source)
        defer { SecretBytes.zero(&plain) }
        return try AgeKeyFile.identities(in: plain, source: source)
    }

    /// Whether `bytes` are an age file (binary, or armored after optional white space)
    /// rather than a key file.
    static func isEncrypted(_ bytes: [UInt8]) -> Bool {
        if bytes.starts(with: Array("age-encryption.org/v1\n".utf8)) { return true }
        let text = bytes.drop(while: { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D })
        return text.starts(with: Array("-----BEGIN AGE ENCRYPTED FILE-----".utf8))
    }

    /// Decrypts a passphrase-encrypted key file in memory, refusing more than a key file's size.
    private static func decrypt(_ encrypted: [UInt8], passphrase: SecretBytes, source: String) throws(AgeError) -> [UInt8] {
        var offset = 0
        var plain = [UInt8]()
        let decryptor = AgeDecryptor(identities: [ScryptIdentity(passphrase: passphrase, maximumLogN: DecryptCommand.maximumScryptLogN)])
        do {
            try decryptor.decrypt(
                read: { buffer in
                    let count = min(buffer.count, encrypted.count - offset)
                    if count > 0 {
                        encrypted.withUnsafeBytes { all in
                            UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count])
                                .copyMemory(from: UnsafeRawBufferPointer(rebasing: all[offset..<(offset + count)]))
                        }
                    }
                    offset += count
                    return count
                },
                write: { chunk in
                    guard plain.count + chunk.count <= AgeKeyFile.maximumSize else {
                        throw AgeError.invalidKey(
                            source: source, detail: "the decrypted key file is larger than \(AgeKeyFile.maximumSize) bytes")
                    }
                    plain.append(contentsOf: chunk)
                },
                source: source)
        } catch {
            SecretBytes.zero(&plain)
            throw error
        }
        return plain
    }
}

/// The identity `signet decrypt` uses without `-i`: it asks for the passphrase only when the
/// header holds a scrypt stanza (as age decides by the stanza), so a file for X25519
/// recipients fails with "no identity matches" instead of a needless prompt.
final class OnDemandPassphraseIdentity: AgeIdentity {
    private let passphrases: CLIPassphraseProvider
    /// Why the passphrase could not be had: reported instead of the library's error.
    private let problem = Mutex<(any Error)?>(nil)

    init(passphrases: CLIPassphraseProvider) {
        self.passphrases = passphrases
    }

    /// The error obtaining the passphrase raised, if any.
    var failure: (any Error)? { problem.withLock { $0 } }

    func unwrap(stanzas: [AgeStanza], source: String) throws(AgeError) -> SecretBytes? {
        guard stanzas.contains(where: { $0.type == "scrypt" }) else { return nil }
        let passphrase: SecretBytes
        do {
            passphrase = try passphrases.passphrase(for: source, confirm: false)
        } catch {
            problem.withLock { $0 = error }
            throw AgeError.invalidArgument(detail: "\(error)")
        }
        return try ScryptIdentity(passphrase: passphrase, maximumLogN: DecryptCommand.maximumScryptLogN)
            .unwrap(stanzas: stanzas, source: source)
    }
}
