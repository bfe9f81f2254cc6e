import Foundation

/// What an item's secret is.
public enum VaultItemKind: String, Sendable, Codable, CaseIterable {
    /// A password or any other secret bytes.
    case password
    /// A private key, stored as PKCS#8 DER and usable as the key source `vault:SERVICE/ACCOUNT`.
    case privateKey = "private-key"

    var displayName: String { self == .password ? "password" : "private key" }
}

/// An item's description, without its secret: what ``Vault/item(service:account:)`` and the
/// listing calls return.
///
/// Service, account, kind and the two dates are stored in the clear, so a vault can be listed
/// without unlocking it (as the macOS keychain shows item names while locked); label, comment
/// and attributes are encrypted with the secret's key.
public struct VaultItem: Sendable, Equatable {
    /// The service the secret belongs to, such as `api.example.com`.
    public var service: String
    /// The account within the service, such as `deploy-bot`.
    public var account: String
    /// What the secret is.
    public var kind: VaultItemKind
    /// When the item was first stored (kept by updates), to the millisecond.
    public var created: Date
    /// When the secret or its details last changed, to the millisecond.
    public var modified: Date
    /// Details; nil when the listing was made without unlocking the vault.
    public var details: VaultItemDetails?

    /// An item's description from its parts; `details` is nil when the vault was not unlocked.
    public init(service: String, account: String, kind: VaultItemKind, created: Date, modified: Date, details: VaultItemDetails?) {
        self.service = service
        self.account = account
        self.kind = kind
        self.created = created
        self.modified = modified
        self.details = details
    }
}

/// The encrypted, descriptive part of an item: a label, a comment and small attributes.
public struct VaultItemDetails: Sendable, Equatable, Codable {
    /// A human-readable name.
    public var label: String?
    /// Free text.
    public var comment: String?
    /// Small name/value pairs (a URL, a key id, an expiry), at most
    /// ``VaultLimits/maximumAttributes`` of them.
    public var attributes: [String: String]

    /// Details; checked against ``VaultLimits`` when they are stored.
    public init(label: String? = nil, comment: String? = nil, attributes: [String: String] = [:]) {
        self.label = label
        self.comment = comment
        self.attributes = attributes
    }
}

/// Which items ``Vault/query(_:)`` returns: every condition that is set must hold.
public struct VaultQuery: Sendable, Equatable {
    /// Only this service, when set.
    public var service: String?
    /// Only this account, when set.
    public var account: String?
    /// Only this kind, when set.
    public var kind: VaultItemKind?
    /// Only items whose attributes include every one of these pairs (needs the vault unlocked).
    public var attributes: [String: String]

    /// A query; conditions left nil (and no attributes) match every item.
    public init(service: String? = nil, account: String? = nil, kind: VaultItemKind? = nil, attributes: [String: String] = [:]) {
        self.service = service
        self.account = account
        self.kind = kind
        self.attributes = attributes
    }
}

/// The bounds every item is held to, so that one item cannot bloat the vault or a listing.
public enum VaultLimits {
    /// Service and account names: 1 to 256 bytes of UTF-8, no control characters and no
    /// bidirectional controls. Names are compared byte for byte (not Unicode-normalised).
    public static let maximumNameLength = 256
    /// A secret: at most 64 KiB (a private key's PKCS#8 DER is under 2.5 KiB).
    public static let maximumSecretLength = 64 << 10
    /// Label and comment: at most 1 KiB each.
    public static let maximumTextLength = 1024
    /// Attributes: at most 32, names up to 64 bytes and values up to 1 KiB.
    public static let maximumAttributes = 32
    /// An attribute name: 1 to 64 bytes of UTF-8, without `=`.
    public static let maximumAttributeNameLength = 64

    /// U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069.
    static let bidiControls: Set<UInt32> = [0x061C, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069]

    static func checkName(_ name: String, _ what: String) throws {
        let count = name.utf8.count
        guard count >= 1, count <= maximumNameLength else {
            throw VaultError.invalidArgument(detail: "the \(what) must be 1 to \(maximumNameLength) bytes long (it is \(count))")
        }
        guard !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw VaultError.invalidArgument(detail: "the \(what) '\(name.debugDescription.dropFirst().dropLast())' contains a control character")
        }
        // Bidirectional overrides and isolates make a listed name read as another one.
        guard !name.unicodeScalars.contains(where: { bidiControls.contains($0.value) }) else {
            throw VaultError.invalidArgument(
                detail: "the \(what) '\(name.debugDescription.dropFirst().dropLast())' contains a bidirectional control character")
        }
    }

    static func checkSecret(_ count: Int) throws {
        guard count >= 1 else { throw VaultError.invalidArgument(detail: "the secret is empty") }
        guard count <= maximumSecretLength else {
            throw VaultError.invalidArgument(detail: "the secret is \(count) bytes; the limit is \(maximumSecretLength / 1024) KiB")
        }
    }

    static func check(_ details: VaultItemDetails) throws {
        for (text, what) in [(details.label, "label"), (details.comment, "comment")] {
            if let text, text.utf8.count > maximumTextLength {
                throw VaultError.invalidArgument(detail: "the \(what) is longer than \(maximumTextLength) bytes")
            }
        }
        guard details.attributes.count <= maximumAttributes else {
            throw VaultError.invalidArgument(detail: "\(details.attributes.count) attributes; the limit is \(maximumAttributes)")
        }
        for (name, value) in details.attributes {
            guard (1...maximumAttributeNameLength).contains(name.utf8.count), !name.contains("=") else {
                throw VaultError.invalidArgument(
                    detail: "attribute name '\(name)' must be 1 to \(maximumAttributeNameLength) bytes without '='")
            }
            guard value.utf8.count <= maximumTextLength else {
                throw VaultError.invalidArgument(detail: "the value of attribute '\(name)' is longer than \(maximumTextLength) bytes")
            }
        }
    }
}
