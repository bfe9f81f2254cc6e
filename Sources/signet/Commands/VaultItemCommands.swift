import ArgumentParser
import Foundation
import SignetCore
import SignetVault

/// SERVICE and ACCOUNT, the two arguments that name an item.
struct VaultItemName: ParsableArguments {
    @Argument(help: ArgumentHelp("The service, such as api.example.com.", valueName: "SERVICE"))
    var service: String

    @Argument(help: ArgumentHelp("The account within the service.", valueName: "ACCOUNT"))
    var account: String
}

/// `signet vault set SERVICE ACCOUNT`.
struct VaultSet: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set",
        abstract: "Store a password (or any secret) for SERVICE and ACCOUNT, replacing an existing one.",
        discussion: """
        The secret comes from --secret-file F, else standard input when it is not a terminal, \
        else a prompt (asked twice); one trailing newline is removed. Replacing keeps the \
        item's creation date, and its label, comment and attributes unless new ones are given \
        (--attribute adds to or replaces the existing attributes).
        """)

    @OptionGroup var name: VaultItemName

    @Option(name: .customLong("secret-file"), help: ArgumentHelp("Read the secret from F ('-': standard input).", valueName: "F"))
    var secretFile: String?

    @Option(help: ArgumentHelp("A human-readable name for the item.", valueName: "TEXT"))
    var label: String?

    @Option(help: ArgumentHelp("Free text about the item.", valueName: "TEXT"))
    var comment: String?

    @Option(name: .customLong("attribute"), help: ArgumentHelp("A NAME=VALUE attribute (repeatable).", valueName: "NAME=VALUE"))
    var attributes: [String] = []

    @Flag(name: .customLong("no-replace"), help: "Fail (exit 1) if the item exists instead of replacing it.")
    var noReplace = false

    @OptionGroup var options: VaultOptions
    @OptionGroup var quietOption: QuietOption

    func run() async throws {
        var pairs: [String: String] = [:]
        for text in attributes {
            guard let equals = text.firstIndex(of: "="), equals != text.startIndex else {
                throw VaultError.invalidArgument(detail: "--attribute '\(text)' is not NAME=VALUE")
            }
            pairs[String(text[..<equals])] = String(text[text.index(after: equals)...])
        }
        let vault = try await options.access.openUnlocked()
        let secret = try SecretInput.read(file: secretFile, what: "secret", confirm: true)
        let givesDetails = label != nil || comment != nil || !pairs.isEmpty
        func merged(_ existing: VaultItemDetails?) -> VaultItemDetails {
            var details = existing ?? VaultItemDetails()
            if let label { details.label = label.isEmpty ? nil : label }
            if let comment { details.comment = comment.isEmpty ? nil : comment }
            details.attributes.merge(pairs) { _, new in new }
            return details
        }
        if noReplace {
            try await vault.add(secret, service: name.service, account: name.account, details: merged(nil))
        } else if !givesDetails {
            // One transaction: the existing details are kept inside it.
            try await vault.set(secret, service: name.service, account: name.account)
        } else {
            let existing = try await vault.query(VaultQuery(service: name.service, account: name.account)).first
            try await vault.set(secret, service: name.service, account: name.account, details: merged(existing?.details))
        }
        Console.note("stored the secret of \(name.service) / \(name.account)", quiet: quietOption.quiet)
    }
}

/// `signet vault get SERVICE ACCOUNT`.
struct VaultGet: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Print the secret of SERVICE and ACCOUNT and a newline (exit 1 if there is none).",
        discussion: "Private keys are not printed: use 'signet vault export'.")

    @OptionGroup var name: VaultItemName
    @OptionGroup var options: VaultOptions

    func run() async throws {
        let vault = try await options.access.openUnlocked()
        let item = try await vault.item(service: name.service, account: name.account)
        guard item.kind == .password else {
            throw VaultError.invalidArgument(
                detail: "\(name.service) / \(name.account) is a private key: use 'signet vault export \(name.service) \(name.account)' (or --key vault:…)")
        }
        let secret = try await vault.secret(service: name.service, account: name.account)
        var output = secret.bytes
        defer { SecretBytes.zero(&output) }
        output.append(UInt8(ascii: "\n"))
        Console.write(bytes: output)
    }
}

/// `signet vault delete SERVICE ACCOUNT`.
struct VaultDelete: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Delete the item of SERVICE and ACCOUNT (exit 1 if there is none).",
        discussion: "Needs no passphrase; the freed space is overwritten.")

    @OptionGroup var name: VaultItemName
    @OptionGroup var options: VaultOptions
    @OptionGroup var quietOption: QuietOption

    func run() async throws {
        let vault = try await options.access.openLocked()
        try await vault.delete(service: name.service, account: name.account)
        Console.note("deleted \(name.service) / \(name.account)", quiet: quietOption.quiet)
    }
}

/// `signet vault rename SERVICE ACCOUNT NEW_SERVICE NEW_ACCOUNT`.
struct VaultRename: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rename",
        abstract: "Move an item to another service and account, keeping its secret, details and dates.")

    @OptionGroup var name: VaultItemName

    @Argument(help: ArgumentHelp("The new service.", valueName: "NEW_SERVICE"))
    var newService: String

    @Argument(help: ArgumentHelp("The new account.", valueName: "NEW_ACCOUNT"))
    var newAccount: String

    @OptionGroup var options: VaultOptions
    @OptionGroup var quietOption: QuietOption

    func run() async throws {
        let vault = try await options.access.openUnlocked()
        try await vault.rename(service: name.service, account: name.account, toService: newService, account: newAccount)
        Console.note("renamed \(name.service) / \(name.account) to \(newService) / \(newAccount)", quiet: quietOption.quiet)
    }
}

/// `signet vault list`.
struct VaultList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the items (service, account, kind, dates); needs no passphrase.",
        discussion: "Labels, comments and attributes are encrypted: 'signet vault show' prints them.")

    @Option(help: ArgumentHelp("Only the items of this service.", valueName: "SERVICE"))
    var service: String?

    @Flag(help: "Print a JSON array instead of a table.")
    var json = false

    @OptionGroup var options: VaultOptions

    func run() async throws {
        let vault = try await options.access.openLocked()
        let items: [VaultItem]
        if let service {
            items = try await vault.accounts(service: service)
        } else {
            items = try await vault.allAccounts()
        }
        if json {
            Console.write(try VaultJSON.encode(items.map(VaultJSON.Item.init)) + "\n")
            return
        }
        guard !items.isEmpty else {
            Console.note(service.map { "no items for the service \($0)" } ?? "the vault is empty", quiet: false)
            return
        }
        let rows = [["SERVICE", "ACCOUNT", "KIND", "MODIFIED"]]
            + items.map { [PrintableText.terminalSafe($0.service), PrintableText.terminalSafe($0.account), $0.kind.rawValue, VaultJSON.timestamp($0.modified)] }
        let widths = (0..<3).map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            let padded = (0..<3).map { row[$0].padding(toLength: widths[$0], withPad: " ", startingAt: 0) }
            Console.write((padded + [row[3]]).joined(separator: "  ") + "\n")
        }
    }
}

/// `signet vault show SERVICE ACCOUNT`.
struct VaultShow: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Print an item's kind, dates, label, comment and attributes (not its secret).")

    @OptionGroup var name: VaultItemName

    @Flag(help: "Print a JSON object.")
    var json = false

    @OptionGroup var options: VaultOptions

    func run() async throws {
        let vault = try await options.access.openUnlocked()
        let item = try await vault.item(service: name.service, account: name.account)
        var shown = VaultJSON.Item(item)
        if item.kind == .privateKey {
            let key = try await vault.privateKey(service: item.service, account: item.account, policy: KeyPolicy(allowWeakRSA: true))
            shown.key = "\(key.kind)"
            shown.fingerprint = key.publicKey.fingerprint.description
            shown.reference = VaultKeyReference(service: item.service, account: item.account).description
        }
        if json {
            Console.write(try VaultJSON.encode(shown) + "\n")
            return
        }
        var lines = [("service", shown.service), ("account", shown.account), ("kind", shown.kind), ("created", shown.created), ("modified", shown.modified)]
        for (field, value) in [("key", shown.key), ("fingerprint", shown.fingerprint), ("reference", shown.reference), ("label", shown.label), ("comment", shown.comment)] {
            if let value { lines.append((field, value)) }
        }
        for (attribute, value) in (shown.attributes ?? [:]).sorted(by: { $0.key < $1.key }) {
            lines.append(("attribute", "\(attribute)=\(value)"))
        }
        for (field, value) in lines {
            Console.write("\(field):".padding(toLength: 13, withPad: " ", startingAt: 0) + PrintableText.terminalSafe(value) + "\n")
        }
    }
}

/// The JSON shapes `list --json` and `show --json` print.
enum VaultJSON {
    struct Item: Encodable {
        var service: String
        var account: String
        var kind: String
        var created: String
        var modified: String
        var label: String?
        var comment: String?
        var attributes: [String: String]?
        var key: String?
        var fingerprint: String?
        var reference: String?

        init(_ item: VaultItem) {
            service = item.service
            account = item.account
            kind = item.kind.rawValue
            created = VaultJSON.timestamp(item.created)
            modified = VaultJSON.timestamp(item.modified)
            label = item.details?.label
            comment = item.details?.comment
            attributes = item.details?.attributes
        }
    }

    static func encode<T: Encodable>(_ value: T) throws -> String { try Console.json(value) }

    /// ISO 8601 in UTC with milliseconds: `2026-11-22T13:42:07.123Z`.
    static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt))
    }
}
