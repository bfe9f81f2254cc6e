import ArgumentParser
import Foundation
import SignetAge
import SignetCore
import SignetVault
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
        abstract: "Generate an age key file (as age-keygen): X25519, or post-quantum with --pq.",
        discussion: """
        The file holds '# created:' and '# public key:' comments and the AGE-SECRET-KEY-1… \
        line, as age-keygen writes it; with --pq (age-keygen -pq) an MLKEM768-X25519 key, \
        AGE-SECRET-KEY-PQ-1… with an age1pq1… recipient, which resists quantum computers \
        (files for it cannot also be for classical recipients); -o FILE is written with mode 0600, never over an \
        existing file without --force. 'Public key: age1…' goes to standard error unless the \
        key itself goes to a terminal (where its comment shows it) or --quiet is given.
        """
    )

    @OptionGroup var output: OptionalOutputOptions<OutputHelpText>
    enum OutputHelpText: OutputHelp {
        static let help = ArgumentHelp("Where to write the key file (default: standard output).", valueName: "FILE")
    }

    @Flag(name: [.customLong("pq")], help: "Generate a post-quantum (MLKEM768-X25519) key instead of X25519.")
    var postQuantum = false

    @OptionGroup var quietOption: QuietOption

    func run() async throws {
        try output.refuseExisting()
        let contents: String
        let recipient: String
        if postQuantum {
            let identity = try MLKEM768X25519Identity.generate()
            contents = AgeKeyFile.keyFileContents(identity, created: Date())
            recipient = identity.recipientString
        } else {
            let identity = X25519Identity.generate()
            contents = AgeKeyFile.keyFileContents(identity, created: Date())
            recipient = identity.recipientString
        }
        var bytes = Array(contents.utf8)
        defer { SecretBytes.zero(&bytes) }
        try output.write(bytes, binary: false, permissions: .privateToOwner)
        let toTerminal = output.isStandardOutput && Console.stdoutIsTerminal
        if !toTerminal && !quietOption.quiet {
            Console.writeError("Public key: \(recipient)\n")
        }
    }
}

/// `signet age recipient` (age-keygen -y).
struct AgeRecipientCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recipient",
        abstract: "Print the recipient of each key in an identity file (as age-keygen -y).",
        discussion: """
        One line per AGE-SECRET-KEY-1… in the file (its age1… recipient); for an RSA or \
        Ed25519 private key (OpenSSH's own format, PEM or DER as Signet reads them, or \
        vault:SERVICE/ACCOUNT) its OpenSSH public key line, which 'signet encrypt -r' and age \
        take. A key file that is passphrase-encrypted \
        (age -p) is opened with the passphrase from --passphrase-file, SIGNET_PASSPHRASE or \
        a prompt.
        """
    )

    @OptionGroup var output: OptionalOutputOptions<OutputHelpText>
    enum OutputHelpText: OutputHelp {
        static let help = ArgumentHelp("Where to write the recipients (default: standard output).", valueName: "OUT")
    }

    @OptionGroup var passphraseOption: AgePassphraseOption

    @Argument(help: ArgumentHelp("The key file ('-' or none: standard input).", valueName: "IDENTITY"))
    var identity: String = "-"

    func validate() throws {
        if identity == "-" && passphraseOption.passphraseFile == "-" {
            throw ValidationError("standard input ('-') can be read only once")
        }
    }

    func run() async throws {
        try output.refuseExisting()
        let identities: [any AgeKeyPairIdentity]
        do {
            identities = try await AgeIdentityFile.load(identity, options: passphraseOption)
        } catch SignetCoreError.weakKey(let source, let bits) {
            // No --allow-weak here: age encrypts to no RSA key under 2048 bits.
            throw AgeError.invalidKey(
                source: source, detail: "an RSA key of \(bits) bits is too small: age encrypts to RSA keys of \(SSHRSARecipient.minimumBits) bits or more")
        }
        let text = identities.map { $0.recipientString + "\n" }.joined()
        try output.write(Array(text.utf8), binary: false, permissions: .standard)
    }
}

/// Reads `-i` identities: age key files, plain or encrypted with a passphrase as `age -p
/// key.txt` makes them (age reads both); RSA and Ed25519 private keys in any format Signet
/// reads (OpenSSH's, PEM, DER; encrypted PKCS#8 with the passphrase); `vault:SERVICE/ACCOUNT`.
enum AgeIdentityFile {
    /// The identities in the key file at `path` (`-`: standard input), or the vault key it names.
    static func load(_ path: String, options: AgePassphraseOption, policy: KeyPolicy = .strict) async throws -> [any AgeKeyPairIdentity] {
        let passphrases = options.provider
        if path.hasPrefix(VaultKeyReference.scheme + ":") {
            let reference = try VaultKeyReference(parsing: path)
            let key = try await options.vaultAccess.openUnlocked().privateKey(service: reference.service, account: reference.account, policy: policy)
            return [try AgeSSH.identity(privateKey: key, source: path)]
        }
        let source = StreamedOutput.displayName(input: path)
        // Room for an encrypted key file: header, tags and armor around the key file's bytes.
        var bytes = try FileInput.readAll(path: path, limit: 2 * AgeKeyFile.maximumSize + 4096)
        defer { SecretBytes.zero(&bytes) }
        if let key = try privateKey(bytes, source: source, passphrases: passphrases, policy: policy) {
            return [try AgeSSH.identity(privateKey: key, source: source)]
        }
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

    /// The private key in `bytes` when they are a key file of Signet's formats rather than an
    /// age key file (DER, or PEM other than an age file); an encrypted one is decrypted with
    /// the passphrase. Nil for age key files.
    private static func privateKey(_ bytes: [UInt8], source: String, passphrases: CLIPassphraseProvider, policy: KeyPolicy) throws -> PrivateKey? {
        let text = bytes.drop(while: { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D })
        let isPEMKey = text.starts(with: Array("-----BEGIN ".utf8)) && !isEncrypted(bytes)
        let isDER = bytes.first == 0x30
        guard isPEMKey || isDER else { return nil }
        var decoded = try KeyDecoder.decode(bytes, source: source, policy: policy)
        if decoded.needsPassphrase {
            let passphrase = try passphrases.passphrase(for: source, confirm: false)
            decoded = try decoded.decrypt(passphrase: passphrase, source: source, policy: policy)
        }
        switch decoded {
        case .privateKey(let key): return key
        case .publicKey: throw SignetCoreError.publicKeyWherePrivateNeeded(source: source)
        case .encryptedPrivateKey: return nil
        }
    }

    /// Whether `bytes` are an age file (binary, or armored after optional white space)
    /// rather than a key file.
    static func isEncrypted(_ bytes: [UInt8]) -> Bool {
        if bytes.starts(with: Array("age-encryption.org/v1\n".utf8)) { return true }
        let text = bytes.drop(while: { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D })
        return text.starts(with: Array("-----BEGIN AGE ENCRYPTED FILE-----".utf8))
    }

    /// Decrypts a passphrase-encrypted key file in memory, refusing more than a key file's size.
    private static func decrypt(_ encrypted: [UInt8], passphrase: SecretBytes, source: String) throws -> [UInt8] {
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

    func unwrap(stanzas: [AgeStanza], source: String) throws -> SecretBytes? {
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
