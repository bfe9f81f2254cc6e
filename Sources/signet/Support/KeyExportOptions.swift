import ArgumentParser
import SignetCore

/// What `key convert` and `vault export` share: the output's format, public or private, and
/// encryption (`-o` and `--force` are each command's output group). One passphrase rule for
/// both, as for every command: the *new* passphrase comes only from `--new-passphrase-file`
/// or a prompt — never from `--passphrase-file` or SIGNET_PASSPHRASE, which name the
/// *current* one.
struct KeyExportOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Private: pem (default), der, pkcs1, pkcs1-der, sec1, sec1-der, jwk, ios. Public: pem, der, pkcs1, pkcs1-der, openssh, jwk, ios.",
            valueName: "FORMAT"))
    var format: String = "pem"

    @Flag(help: "Write only the public key.")
    var `public` = false

    @Flag(help: "Encrypt the written private key (encrypted PKCS#8, pem or der) with a new passphrase.")
    var encrypt = false

    @Option(
        name: .customLong("new-passphrase-file"),
        help: ArgumentHelp("With --encrypt: read the new passphrase from the first line of FILE (else a prompt).", valueName: "FILE"))
    var newPassphraseFile: String?

    func validate() throws {
        if encrypt && `public` { throw ValidationError("--encrypt applies to private keys, not with --public") }
        if newPassphraseFile != nil && !encrypt { throw ValidationError("--new-passphrase-file applies only with --encrypt") }
    }

    /// Writes `key`'s public key in the chosen format.
    func writePublic(_ key: PublicKey, to output: some OutputTarget) throws {
        let format = try KeyFormatParsing.publicFormat(format)
        try output.write(try key.encoded(as: format), binary: format.isBinary, permissions: .standard)
    }

    /// Writes `key` in the chosen format, encrypted under a new passphrase with --encrypt, 0600.
    func writePrivate(_ key: PrivateKey, to output: some OutputTarget) throws {
        let format = try KeyFormatParsing.privateFormat(format)
        let passphrase = try encrypt
            ? CLIPassphraseProvider(passphraseFile: newPassphraseFile, useEnvironment: false).passphrase(for: output.destination ?? "-", confirm: true)
            : nil
        var encoded = try key.encoded(as: format, passphrase: passphrase)
        defer { SecretBytes.zero(&encoded) }
        try output.write(encoded, binary: format.isBinary, permissions: .privateToOwner)
    }
}

/// Parses `--format` values for the key commands with a message listing the choices.
enum KeyFormatParsing {
    static func privateFormat(_ name: String) throws -> PrivateKeyFormat {
        guard let format = PrivateKeyFormat(rawValue: name.lowercased()) else {
            throw SignetCoreError.invalidArgument(
                detail: "unknown private key format '\(name)' (choose \(PrivateKeyFormat.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        return format
    }

    static func publicFormat(_ name: String) throws -> PublicKeyFormat {
        guard let format = PublicKeyFormat(rawValue: name.lowercased()) else {
            throw SignetCoreError.invalidArgument(
                detail: "unknown public key format '\(name)' (choose \(PublicKeyFormat.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        return format
    }
}
