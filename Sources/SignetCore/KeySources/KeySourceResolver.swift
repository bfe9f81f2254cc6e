/// Supplies passphrases for encrypted keys. The CLI's implementation reads a file, the
/// environment or the terminal; a server's might read a secret store.
public protocol PassphraseProvider: Sendable {
    /// A passphrase to decrypt the key from `source`. With `confirm`, a new passphrase is being
    /// chosen and should be asked for twice where a person types it.
    func passphrase(for source: String, confirm: Bool) throws -> SecretBytes
}

/// A provider that has no passphrase to give: encrypted keys fail with a clear message.
public struct NoPassphrase: PassphraseProvider {
    /// A provider that refuses every request for a passphrase.
    public init() {}
    /// Always throws ``SignetCoreError/passphraseUnavailable(source:detail:)``: there is no
    /// passphrase to give.
    public func passphrase(for source: String, confirm: Bool) throws -> SecretBytes {
        throw SignetCoreError.passphraseUnavailable(source: source, detail: "the key is encrypted and no passphrase was given")
    }
}

/// Resolves key references that are not files, such as `pkcs11:…` (RFC 7512) or
/// `vault:SERVICE/ACCOUNT`. Modules that own such keys register one with the resolver.
public protocol KeySourceProvider: Sendable {
    /// The URI scheme handled, without the colon: `pkcs11`, `vault`.
    var scheme: String { get }
    /// A signer for the key named by `reference` (the whole string, scheme included).
    func signer(reference: String, algorithm: SignatureAlgorithm?, resolver: KeySourceResolver) async throws -> any Signer
    /// The public key named by `reference`.
    func publicKey(reference: String, resolver: KeySourceResolver) async throws -> PublicKey
}

/// Turns what a user types after `--key` into a signer or a public key, the same for every command.
///
/// A file path (any key format, detected from the content) or `-` for standard input is
/// handled here; a reference with a registered scheme (`pkcs11:`, `vault:`) goes to its
/// ``KeySourceProvider``. Callers never need to know which it was.
public struct KeySourceResolver: Sendable {
    /// How strictly keys are checked on import (whether RSA keys under 2048 bits are accepted);
    /// providers are handed it too.
    public var policy: KeyPolicy
    /// Where the passphrases of encrypted key files come from.
    public var passphrases: any PassphraseProvider
    private var providers: [String: any KeySourceProvider]

    /// Schemes that will have providers; named in the error when one is used before then.
    static let plannedSchemes = ["pkcs11", "vault"]

    /// A resolver that reads key files under `policy`, asks `passphrases` for the passphrase of an
    /// encrypted one (by default there is none, so such keys fail with a clear message), and hands
    /// references with a registered scheme to `providers` (of two for one scheme, the last wins).
    public init(policy: KeyPolicy = .strict, passphrases: any PassphraseProvider = NoPassphrase(), providers: [any KeySourceProvider] = []) {
        self.policy = policy
        self.passphrases = passphrases
        self.providers = Dictionary(providers.map { ($0.scheme, $0) }, uniquingKeysWith: { _, last in last })
    }

    /// Adds (or replaces) the provider for its scheme.
    public mutating func register(_ provider: any KeySourceProvider) {
        providers[provider.scheme] = provider
    }

    /// A signer for `source`; nil `algorithm` picks the key's default.
    public func signer(_ source: String, algorithm: SignatureAlgorithm? = nil) async throws -> any Signer {
        if let (provider, reference) = try provider(for: source) {
            return try await provider.signer(reference: reference, algorithm: algorithm, resolver: self)
        }
        return try SoftwareSigner(key: try privateKey(path: source), algorithm: algorithm)
    }

    /// The public key of `source`, which may hold a public or a private key.
    public func publicKey(_ source: String) async throws -> PublicKey {
        if let (provider, reference) = try provider(for: source) {
            return try await provider.publicKey(reference: reference, resolver: self)
        }
        return try publicKey(from: decodeFile(source), source: displayName(source))
    }

    /// The private key in the file at `path` (`-` for standard input), decrypting it with a
    /// passphrase from ``passphrases`` when it is encrypted.
    public func privateKey(path: String) throws -> PrivateKey {
        try privateKey(from: decodeFile(path), source: displayName(path))
    }

    /// The private key in already decoded content (read once, as standard input must be).
    public func privateKey(from decoded: DecodedKey, source: String) throws -> PrivateKey {
        switch decoded {
        case .privateKey(let key): return key
        case .publicKey: throw SignetCoreError.publicKeyWherePrivateNeeded(source: source)
        case .encryptedPrivateKey:
            let passphrase = try passphrases.passphrase(for: source, confirm: false)
            guard case .privateKey(let key) = try decoded.decrypt(passphrase: passphrase, source: source, policy: policy) else {
                throw SignetCoreError.malformed(source: source, detail: "decryption did not yield a private key")
            }
            return key
        }
    }

    /// The public key in already decoded content; an encrypted private key is decrypted.
    public func publicKey(from decoded: DecodedKey, source: String) throws -> PublicKey {
        if case .publicKey(let key) = decoded { return key }
        return try privateKey(from: decoded, source: source).publicKey
    }

    /// The decoded content of a key file, without decrypting it.
    public func decodeFile(_ path: String) throws -> DecodedKey {
        try KeyDecoder.decode(path: path, policy: policy)
    }

    /// The name of a key file in messages.
    public func displayName(_ path: String) -> String { path == "-" ? "standard input" : path }

    private func provider(for source: String) throws -> (any KeySourceProvider, String)? {
        guard let colon = source.firstIndex(of: ":") else { return nil }
        let scheme = String(source[..<colon])
        if let provider = providers[scheme] { return (provider, source) }
        if KeySourceResolver.plannedSchemes.contains(scheme) {
            // The scheme alone: the rest may hold a secret (a pkcs11: URI's pin-value).
            throw SignetCoreError.unsupported(
                source: "\(scheme):…",
                detail: "\(scheme): key sources are not available in this build (for a file whose name starts with \(scheme):, write ./ before it)")
        }
        return nil
    }
}
