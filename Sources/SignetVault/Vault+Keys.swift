import Foundation
import SignetCore

extension Vault {
    /// Stores a private key (as PKCS#8 DER, sealed like any secret) under `service`/`account`.
    /// It is then usable wherever a key is accepted, as `vault:SERVICE/ACCOUNT`.
    ///
    /// - Parameter replace: replace an existing private key (its creation date is kept);
    ///   without it an existing item is ``VaultError/duplicateItem(service:account:)``.
    public func setPrivateKey(
        _ key: PrivateKey, service: String, account: String, details: VaultItemDetails? = nil, replace: Bool = false
    ) throws {
        var der: [UInt8]
        do {
            der = try key.encoded(as: .der)
        } catch {
            throw VaultError.invalidArgument(detail: "the key cannot be encoded as PKCS#8: \(error)")
        }
        let secret = SecretBytes(consuming: &der)
        try store(
            secret, kind: .privateKey, service: service, account: account, details: details ?? (replace ? nil : VaultItemDetails()),
            mode: replace ? .upsert : .insert)
    }

    /// The private key stored under `service`/`account`.
    /// - Parameter policy: what key sizes are accepted (a weak RSA key stored with
    ///   `--allow-weak` needs the same policy to come out again).
    public func privateKey(service: String, account: String, policy: KeyPolicy = .strict) throws -> PrivateKey {
        let item = try item(service: service, account: account)
        guard item.kind == .privateKey else {
            throw VaultError.wrongKind(service: service, account: account, expected: .privateKey, found: item.kind)
        }
        let secret = try secret(service: service, account: account)
        let source = VaultKeyReference(service: service, account: account).description
        do {
            guard case .privateKey(let key) = try secret.withUnsafeBytes({ bytes throws in
                try KeyDecoder.decode(Array(bytes), source: source, policy: policy)
            }) else {
                throw VaultError.corrupted(path: path, detail: "\(source) does not hold a private key")
            }
            return key
        } catch let error as VaultError {
            throw error
        } catch {
            throw VaultError.corrupted(path: path, detail: "\(error)")
        }
    }
}

/// A `vault:SERVICE/ACCOUNT` key reference. A `/` or `%` inside a name is written `%2F` or
/// `%25`, as in URIs, so that any service and account can be named.
public struct VaultKeyReference: Sendable, Equatable, CustomStringConvertible {
    /// The item's service, decoded.
    public var service: String
    /// The item's account within the service, decoded.
    public var account: String

    /// The key-source scheme, `vault`.
    public static let scheme = "vault"

    /// A reference to the private key stored under `service` and `account` (names as they are,
    /// not encoded).
    public init(service: String, account: String) {
        self.service = service
        self.account = account
    }

    /// Parses `vault:SERVICE/ACCOUNT`.
    public init(parsing text: String) throws {
        let prefix = Self.scheme + ":"
        guard text.hasPrefix(prefix) else {
            throw VaultError.invalidArgument(detail: "'\(text)' is not a vault key reference (vault:SERVICE/ACCOUNT)")
        }
        let parts = text.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let service = Self.decode(parts[0]), let account = Self.decode(parts[1]) else {
            throw VaultError.invalidArgument(
                detail: "'\(text)' is not of the form vault:SERVICE/ACCOUNT (write a '/' or '%' inside a name as %2F or %25)")
        }
        try VaultLimits.checkName(service, "service")
        try VaultLimits.checkName(account, "account")
        self.init(service: service, account: account)
    }

    /// The reference as a user types it, `vault:SERVICE/ACCOUNT`, with `/` and `%` inside names
    /// written `%2F` and `%25`.
    public var description: String { "\(Self.scheme):\(Self.encode(service))/\(Self.encode(account))" }

    private static func encode(_ name: String) -> String {
        name.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: "/", with: "%2F")
    }

    private static func decode(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var index = text.utf8.startIndex
        let utf8 = text.utf8
        while index < utf8.endIndex {
            let byte = utf8[index]
            if byte == UInt8(ascii: "%") {
                let first = utf8.index(after: index)
                guard first < utf8.endIndex, utf8.index(after: first) < utf8.endIndex,
                    let high = Hex.digitValue(utf8[first]), let low = Hex.digitValue(utf8[utf8.index(after: first)])
                else { return nil }
                bytes.append(high << 4 | low)
                index = utf8.index(first, offsetBy: 2)
            } else {
                bytes.append(byte)
                index = utf8.index(after: index)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }
}

/// Resolves `vault:SERVICE/ACCOUNT` key references for ``KeySourceResolver``: register one
/// and every command or API that takes a key accepts keys stored in the vault.
public struct VaultKeySource: KeySourceProvider {
    /// The scheme resolved: `vault`.
    public var scheme: String { VaultKeyReference.scheme }
    private let opener: VaultOpener

    /// - Parameter openVault: opens and unlocks the vault when a reference is first resolved
    ///   (so a command that uses no vault key never asks for the vault's passphrase); the
    ///   vault is then kept for later references.
    public init(openVault: @escaping @Sendable () async throws -> Vault) {
        opener = VaultOpener(open: openVault)
    }

    /// A software signer over the private key `reference` names, checked under the resolver's
    /// policy; nil `algorithm` picks the key's default.
    public func signer(reference: String, algorithm: SignatureAlgorithm?, resolver: KeySourceResolver) async throws -> any Signer {
        let key = try await privateKey(reference: reference, resolver: resolver)
        return try SoftwareSigner(key: key, algorithm: algorithm)
    }

    /// The public key of the private key `reference` names.
    public func publicKey(reference: String, resolver: KeySourceResolver) async throws -> PublicKey {
        try await privateKey(reference: reference, resolver: resolver).publicKey
    }

    private func privateKey(reference: String, resolver: KeySourceResolver) async throws -> PrivateKey {
        let parsed = try VaultKeyReference(parsing: reference)
        let vault = try await opener.vault()
        return try await vault.privateKey(service: parsed.service, account: parsed.account, policy: resolver.policy)
    }
}

/// Opens the vault once, on first use, for every copy of a ``VaultKeySource``.
private actor VaultOpener {
    private let open: @Sendable () async throws -> Vault
    private var opened: Vault?

    init(open: @escaping @Sendable () async throws -> Vault) { self.open = open }

    func vault() async throws -> Vault {
        if let opened { return opened }
        let vault = try await open()
        opened = vault
        return vault
    }
}
