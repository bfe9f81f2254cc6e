import SignetAge
import SignetCore
import SignetVault
import SignetX509

/// `signet decrypt --legacy-rsa-pkcs1`: the seed tutorial's chunked RSA PKCS#1 v1.5 scheme,
/// read-only, with a warning.
extension DecryptCommand {
    func runLegacy() async throws {
        let policy = KeyPolicy(allowWeakRSA: allowWeak)
        let key = try await LegacyKeyLoader.privateKey(identities[0], options: passphraseOption, policy: policy)
        let source = try FileInput(path: input)
        let ciphertext = try source.readAll(limit: LegacyRSAPKCS1.maximumInputSize)
        if !quietOption.quiet {
            Console.writeError(
                "warning: the legacy RSA PKCS#1 v1.5 scheme is unsafe (no integrity, padding oracles); re-encrypt the data with 'signet encrypt'\n")
        }
        var plaintext = try LegacyRSAPKCS1.decrypt(ciphertext, privateKey: key, source: source.displayName)
        defer { SecretBytes.zero(&plaintext) }
        try output.write(plaintext, binary: false, permissions: .privateToOwner)
    }
}

/// The RSA private key of `--legacy-rsa-pkcs1 -i`: a key file in any format Signet reads
/// (encrypted PKCS#8 with the passphrase), a PKCS#12 file (`.p12`, with the passphrase), or
/// `vault:SERVICE/ACCOUNT`.
enum LegacyKeyLoader {
    static func privateKey(_ path: String, options: AgePassphraseOption, policy: KeyPolicy) async throws -> PrivateKey {
        if path.hasPrefix(VaultKeyReference.scheme + ":") {
            let reference = try VaultKeyReference(parsing: path)
            return try await options.vaultAccess.openUnlocked().privateKey(service: reference.service, account: reference.account, policy: policy)
        }
        let source = StreamedOutput.displayName(input: path)
        var bytes = try FileInput.readAll(path: path, limit: PKCS12.maximumSize)
        defer { SecretBytes.zero(&bytes) }
        let decoded: DecodedKey
        switch Result(catching: { () throws -> DecodedKey in try KeyDecoder.decode(bytes, source: source, policy: policy) }) {
        case .success(let key):
            decoded = key
        case .failure(SignetCoreError.malformed) where bytes.first == 0x30:
            // DER that is no key structure: a PKCS#12 file, as the tutorial kept its key.
            return try pkcs12Key(bytes, source: source, options: options, policy: policy)
        case .failure(let error):
            throw error
        }
        let resolver = KeySourceResolver(policy: policy, passphrases: options.provider)
        return try resolver.privateKey(from: decoded, source: source)
    }

    /// The private key of a PKCS#12 file, opened with the passphrase.
    private static func pkcs12Key(_ bytes: [UInt8], source: String, options: AgePassphraseOption, policy: KeyPolicy) throws -> PrivateKey {
        let passphrase = try options.provider.passphrase(for: source, confirm: false)
        let contents = try PKCS12.decode(bytes, passphrase: passphrase, source: source, policy: policy)
        guard let key = contents.privateKey else {
            throw X509Error.malformed(source: source, detail: "the PKCS#12 file holds no private key")
        }
        return key
    }
}
