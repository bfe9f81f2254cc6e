import Foundation
import SignetCore
import SignetTestSupport
import Testing
@testable import SignetVault

/// Helpers shared by the vault tests: catching ``VaultError``s, making vaults cheaply, and
/// reading or altering a vault file underneath the library with a raw SQLite connection.
enum VaultTest {
    // MARK: Errors

    /// Runs `body`, requires it to throw a ``VaultError`` and returns that error.
    static func thrown<R>(
        sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> R
    ) throws -> VaultError {
        try SignetTestSupport.thrown(VaultError.self, sourceLocation: sourceLocation, body)
    }

    /// Runs `body`, requires it to throw a ``VaultError`` and returns that error.
    static func thrownAsync<R>(
        sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> R
    ) async throws -> VaultError {
        try await SignetTestSupport.thrownAsync(VaultError.self, sourceLocation: sourceLocation, body)
    }

    /// Checks the case of `error` and that its description mentions every fragment.
    static func check(
        _ error: VaultError, is expected: SignetErrorCode<VaultError>, mentioning fragments: String...,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        expectError(error, is: expected, mentioning: fragments, sourceLocation: sourceLocation)
    }

    // MARK: Vaults

    /// A new passphrase vault (or one with `credentials`) at `path`, with the cheap test KDF.
    static func newVault(at path: String, credentials: VaultCredentials = passphrase()) throws -> Vault {
        try Vault.create(at: path, credentials: credentials, kdf: testKDF)
    }

    /// `count` random bytes.
    static func randomBytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255) }
    }

    /// A key file's content: 32 random bytes unless told otherwise.
    static func keyFile(_ count: Int = 32) -> SecretBytes { SecretBytes(randomBytes(count)) }

    /// "service/account" for each item, for compact comparisons.
    static func names(_ items: [VaultItem]) -> [String] { items.map { "\($0.service)/\($0.account)" } }

    // MARK: Files

    /// The bytes of the file at `path`.
    static func contents(_ path: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Writes `bytes` to `path`.
    static func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// The permission bits of `path`, or nil when it cannot be read.
    static func permissions(_ path: String) -> Int? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else { return nil }
        return (attributes[.posixPermissions] as? NSNumber).map { $0.intValue & 0o777 }
    }

    static func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    // MARK: Underneath the library

    /// A raw SQLite connection to the existing file at `path`.
    static func raw(_ path: String) throws -> SQLiteConnection {
        try SQLiteConnection(path: path, create: false)
    }

    /// The sealed `secret` column of every item, keyed by "service/account".
    static func sealedSecrets(_ path: String) throws -> [String: [UInt8]] {
        let connection = try raw(path)
        var result: [String: [UInt8]] = [:]
        for row in try connection.query("SELECT service, account, secret FROM items") {
            let name = "\(row[0].text ?? "?")/\(row[1].text ?? "?")"
            result[name] = row[2].blob
        }
        return result
    }

    /// One column of one item row, as stored.
    static func column(
        _ column: String, of path: String, service: String, account: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> SQLiteValue {
        let rows = try raw(path).query(
            "SELECT \(column) FROM items WHERE service = ? AND account = ?", [.text(service), .text(account)])
        return try #require(rows.first?.first, "no row for \(service)/\(account)", sourceLocation: sourceLocation)
    }

    /// Runs one statement on the vault file behind the library's back; returns the changed rows.
    @discardableResult
    static func tamper(_ path: String, _ sql: String, _ arguments: [SQLiteValue] = []) throws -> Int {
        let connection = try raw(path)
        try connection.query(sql, arguments)
        return connection.changes
    }

    /// Flips the lowest bit of byte `index` (negative: from the end) of an item's blob column.
    static func flipByte(
        _ path: String, column: String = "secret", service: String, account: String, at index: Int,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        var blob = try #require(
            try Self.column(column, of: path, service: service, account: account, sourceLocation: sourceLocation).blob,
            "\(column) is not a blob", sourceLocation: sourceLocation)
        let position = index < 0 ? blob.count + index : index
        blob[position] ^= 0x01
        let changed = try tamper(
            path, "UPDATE items SET \(column) = ? WHERE service = ? AND account = ?", [.blob(blob), .text(service), .text(account)])
        #expect(changed == 1, sourceLocation: sourceLocation)
    }
}

