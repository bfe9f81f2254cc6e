import Foundation
import SignetCore

extension Vault {
    // MARK: Writing

    /// Stores `secret` as the password of `service`/`account`, replacing an existing
    /// password (whose creation date is kept) or adding a new item.
    ///
    /// - Parameter details: label, comment and attributes; nil keeps an existing item's.
    /// - Throws: ``VaultError/wrongKind(service:account:expected:found:)`` when the item is a
    ///   private key (delete it first), ``VaultError/locked(path:)``, and size errors.
    public func set(_ secret: SecretBytes, service: String, account: String, details: VaultItemDetails? = nil) throws {
        try store(secret, kind: .password, service: service, account: account, details: details, mode: .upsert)
    }

    /// Adds a new item; ``VaultError/duplicateItem(service:account:)`` if one exists.
    public func add(
        _ secret: SecretBytes, service: String, account: String, kind: VaultItemKind = .password, details: VaultItemDetails = VaultItemDetails()
    ) throws {
        try store(secret, kind: kind, service: service, account: account, details: details, mode: .insert)
    }

    /// Changes an existing item's secret and/or details, keeping its kind and creation date;
    /// nil leaves that part as it is. ``VaultError/itemNotFound(service:account:)`` if absent.
    public func update(service: String, account: String, secret: SecretBytes? = nil, details: VaultItemDetails? = nil) throws {
        try store(secret, kind: nil, service: service, account: account, details: details, mode: .update)
    }

    /// Removes an item; ``VaultError/itemNotFound(service:account:)`` if there is none.
    /// Needs no unlocking: deleting is not reading. SQLite's secure delete overwrites the
    /// freed bytes.
    public func delete(service: String, account: String) throws {
        try VaultLimits.checkName(service, "service")
        try VaultLimits.checkName(account, "account")
        try db.write {
            try db.connection.query("DELETE FROM items WHERE service = ? AND account = ?", [.text(service), .text(account)])
            if db.connection.changes == 0 { throw VaultError.itemNotFound(service: service, account: account) }
        }
    }

    /// Moves an item to another service and account, keeping its secret, details and dates.
    /// Its sealed fields are re-sealed, as they are bound to the names.
    public func rename(service: String, account: String, toService newService: String, account newAccount: String) throws {
        for (name, what) in [(service, "service"), (account, "account"), (newService, "new service"), (newAccount, "new account")] {
            try VaultLimits.checkName(name, what)
        }
        let cipher = try unlocked()
        try db.write {
            guard let row = try storedRow(service: service, account: account) else {
                throw VaultError.itemNotFound(service: service, account: account)
            }
            guard try storedRow(service: newService, account: newAccount) == nil else {
                throw VaultError.duplicateItem(service: newService, account: newAccount)
            }
            let secret = try openSecret(row, service: service, account: account, cipher: cipher)
            let details = try openDetails(row, service: service, account: account, cipher: cipher)
            try db.connection.query("DELETE FROM items WHERE service = ? AND account = ?", [.text(service), .text(account)])
            try insert(
                service: newService, account: newAccount, kind: row.kind, created: row.created, modified: row.modified,
                secret: secret, details: details, cipher: cipher)
        }
    }

    // MARK: Reading

    /// The secret of `service`/`account`, whatever its kind (a private key's is PKCS#8 DER).
    public func secret(service: String, account: String) throws -> SecretBytes {
        try VaultLimits.checkName(service, "service")
        try VaultLimits.checkName(account, "account")
        let cipher = try unlocked()
        guard let row = try db.read({ try storedRow(service: service, account: account) }) else {
            throw VaultError.itemNotFound(service: service, account: account)
        }
        return try openSecret(row, service: service, account: account, cipher: cipher)
    }

    /// The password of `service`/`account` as text (UTF-8; invalid sequences replaced).
    public func password(service: String, account: String) throws -> String {
        let secret = try secret(service: service, account: account)
        return secret.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }

    /// The item's description; its details only while the vault is unlocked.
    public func item(service: String, account: String) throws -> VaultItem {
        let items = try query(VaultQuery(service: service, account: account))
        guard let item = items.first else { throw VaultError.itemNotFound(service: service, account: account) }
        return item
    }

    /// Every item, ordered by service and account.
    public func allAccounts() throws -> [VaultItem] {
        try query(VaultQuery())
    }

    /// The items of one service, ordered by account.
    public func accounts(service: String) throws -> [VaultItem] {
        try query(VaultQuery(service: service))
    }

    /// The items matching `query`, ordered by service and account. Details are decrypted
    /// while the vault is unlocked; matching on attributes needs it unlocked.
    public func query(_ query: VaultQuery) throws -> [VaultItem] {
        if let service = query.service { try VaultLimits.checkName(service, "service") }
        if let account = query.account { try VaultLimits.checkName(account, "account") }
        if !query.attributes.isEmpty, isLocked { throw VaultError.locked(path: path) }
        var conditions: [String] = []
        var arguments: [SQLiteValue] = []
        for (column, value) in [("service", query.service), ("account", query.account), ("kind", query.kind?.rawValue)] {
            if let value {
                conditions.append("\(column) = ?")
                arguments.append(.text(value))
            }
        }
        let filter = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        let sql = "SELECT service, account, kind, created, modified, details, secret FROM items\(filter) ORDER BY service, account"
        let rows = try db.run { () throws(SQLiteError) in try db.connection.query(sql, arguments) }
        let cipher = isLocked ? nil : try unlocked()
        var items: [VaultItem] = []
        for columns in rows {
            let item = try Self.decodeItem(columns, cipher: cipher, path: path).item
            if !query.attributes.isEmpty, let details = item.details {
                guard query.attributes.allSatisfy({ details.attributes[$0.key] == $0.value }) else { continue }
            }
            items.append(item)
        }
        return items
    }

    /// Decodes one row of `items` (service, account, kind, created, modified, details,
    /// secret): its column types and names, and its details when a `cipher` is given.
    static func decodeItem(_ columns: [SQLiteValue], cipher: VaultCipher?, path: String) throws -> (item: VaultItem, row: StoredRow) {
        guard columns.count == 7, let service = columns[0].text, let account = columns[1].text, let row = try StoredRow(columns[2...], path: path) else {
            throw VaultError.corrupted(path: path, detail: "an item row has columns of the wrong type")
        }
        // Names reach terminals: ones we would never have written (escape sequences …) are damage.
        do {
            try VaultLimits.checkName(service, "service")
            try VaultLimits.checkName(account, "account")
        } catch {
            throw VaultError.corrupted(path: path, detail: "an item has a name signet would not store (\(error))")
        }
        let details = try cipher.map { cipher throws in
            try Self.openDetails(row, service: service, account: account, cipher: cipher, path: path)
        }
        let item = VaultItem(
            service: service, account: account, kind: row.kind, created: Self.date(row.created), modified: Self.date(row.modified),
            details: details)
        return (item, row)
    }

    // MARK: Internals

    enum WriteMode { case insert, upsert, update }

    /// The one write path: checks, seals and stores in one transaction.
    func store(
        _ secret: SecretBytes?, kind: VaultItemKind?, service: String, account: String, details: VaultItemDetails?, mode: WriteMode
    ) throws {
        try VaultLimits.checkName(service, "service")
        try VaultLimits.checkName(account, "account")
        if let secret { try VaultLimits.checkSecret(secret.count) }
        if let details { try VaultLimits.check(details) }
        let cipher = try unlocked()
        try db.write {
            let existing = try storedRow(service: service, account: account)
            if existing == nil, mode == .update { throw VaultError.itemNotFound(service: service, account: account) }
            if existing != nil, mode == .insert { throw VaultError.duplicateItem(service: service, account: account) }
            let newKind = kind ?? existing?.kind ?? .password
            if let existing, existing.kind != newKind {
                throw VaultError.wrongKind(service: service, account: account, expected: newKind, found: existing.kind)
            }
            let now = Self.now()
            let created = existing?.created ?? now
            // Open only what is kept: an item whose sealed parts are damaged can still be replaced.
            let keptSecret = try secret == nil
                ? existing.map { row throws in try openSecret(row, service: service, account: account, cipher: cipher) } : nil
            let keptDetails = try details == nil
                ? existing.map { row throws in try openDetails(row, service: service, account: account, cipher: cipher) } : nil
            guard let value = secret ?? keptSecret else { throw VaultError.invalidArgument(detail: "no secret to store") }
            if newKind == .privateKey, secret != nil { try Self.checkPrivateKey(value, service: service, account: account) }
            if existing != nil {
                try db.connection.query("DELETE FROM items WHERE service = ? AND account = ?", [.text(service), .text(account)])
            }
            try insert(
                service: service, account: account, kind: newKind, created: created, modified: max(now, created),
                secret: value, details: details ?? keptDetails ?? VaultItemDetails(), cipher: cipher)
        }
    }

    private func insert(
        service: String, account: String, kind: VaultItemKind, created: Int64, modified: Int64,
        secret: SecretBytes, details: VaultItemDetails, cipher: VaultCipher
    ) throws {
        let sealedSecret = try cipher.seal(secret, context: VaultCipher.itemContext("secret", kind: kind, service: service, account: account))
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = try encoder.encode(details)
        let sealedDetails = try cipher.seal(
            json, context: VaultCipher.itemContext("details", kind: kind, service: service, account: account, extra: ["\(created)", "\(modified)"]))
        try db.connection.query(
            "INSERT INTO items(service, account, kind, created, modified, details, secret) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [.text(service), .text(account), .text(kind.rawValue), .integer(created), .integer(modified), .blob(sealedDetails), .blob(sealedSecret)])
    }

    /// The row of `service`/`account`, if any. Throws SQLite's or the vault's errors.
    func storedRow(service: String, account: String) throws -> StoredRow? {
        let rows = try db.connection.query(
            "SELECT kind, created, modified, details, secret FROM items WHERE service = ? AND account = ?", [.text(service), .text(account)])
        guard let columns = rows.first else { return nil }
        guard let row = try StoredRow(columns[...], path: path) else {
            throw VaultError.corrupted(path: path, detail: "the item '\(service)'/'\(account)' has columns of the wrong type")
        }
        return row
    }

    func openSecret(_ row: StoredRow, service: String, account: String, cipher: VaultCipher) throws -> SecretBytes {
        try Self.openSecret(row, service: service, account: account, cipher: cipher, path: path)
    }

    func openDetails(_ row: StoredRow, service: String, account: String, cipher: VaultCipher) throws -> VaultItemDetails {
        try Self.openDetails(row, service: service, account: account, cipher: cipher, path: path)
    }

    static func openSecret(_ row: StoredRow, service: String, account: String, cipher: VaultCipher, path: String) throws -> SecretBytes {
        guard let secret = cipher.open(row.secret, context: VaultCipher.itemContext("secret", kind: row.kind, service: service, account: account))
        else {
            throw VaultError.corrupted(
                path: path, detail: "the secret of '\(service)'/'\(account)' does not authenticate (altered, or moved from another item)")
        }
        return secret
    }

    static func openDetails(_ row: StoredRow, service: String, account: String, cipher: VaultCipher, path: String) throws -> VaultItemDetails {
        let context = VaultCipher.itemContext(
            "details", kind: row.kind, service: service, account: account, extra: ["\(row.created)", "\(row.modified)"])
        guard let json = cipher.open(row.details, context: context) else {
            throw VaultError.corrupted(
                path: path, detail: "the details of '\(service)'/'\(account)' do not authenticate (altered, or moved from another item)")
        }
        guard let details = try? json.withUnsafeBytes({ try JSONDecoder().decode(VaultItemDetails.self, from: Data($0)) }) else {
            throw VaultError.corrupted(path: path, detail: "the details of '\(service)'/'\(account)' are not valid JSON")
        }
        return details
    }

    /// A private-key item's secret must be a private key SignetCore reads (PKCS#8 DER when
    /// stored through ``setPrivateKey(_:service:account:details:replace:)``).
    static func checkPrivateKey(_ secret: SecretBytes, service: String, account: String) throws {
        let decoded = secret.withUnsafeBytes { bytes in
            try? KeyDecoder.decode(Array(bytes), source: "\(service)/\(account)", policy: KeyPolicy(allowWeakRSA: true))
        }
        guard case .privateKey = decoded else {
            throw VaultError.invalidArgument(detail: "the secret for \(service) / \(account) is not an unencrypted private key")
        }
    }

    static func now() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }
    static func date(_ milliseconds: Int64) -> Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }
}

/// An item row's columns after service and account.
struct StoredRow: Equatable {
    var kind: VaultItemKind
    var created: Int64
    var modified: Int64
    var details: [UInt8]
    var secret: [UInt8]

    /// Reads kind, created, modified, details, secret; nil for wrong types, an error for an
    /// unknown kind.
    init?(_ columns: ArraySlice<SQLiteValue>, path: String) throws {
        let values = Array(columns)
        guard values.count == 5, let kindText = values[0].text, let created = values[1].integer, let modified = values[2].integer,
            let details = values[3].blob, let secret = values[4].blob
        else { return nil }
        guard let kind = VaultItemKind(rawValue: kindText) else {
            throw VaultError.corrupted(path: path, detail: "an item of unknown kind \(kindText.prefix(40).debugDescription)")
        }
        self.init(kind: kind, created: created, modified: modified, details: details, secret: secret)
    }

    init(kind: VaultItemKind, created: Int64, modified: Int64, details: [UInt8], secret: [UInt8]) {
        self.kind = kind
        self.created = created
        self.modified = modified
        self.details = details
        self.secret = secret
    }
}
