import CSQLiteBench
import Foundation
import SignetCore
import SignetVault

/// `signet-bench vault DIR COUNT`: in `DIR`, COUNT durable `Vault.set` calls (one transaction
/// each) and COUNT `Vault.secret` calls, against the same number of single-row INSERT and
/// SELECT statements on a plain SQLite file with the same settings (WAL, synchronous=FULL,
/// one transaction per write) and rows of the same size. Also the time to open (unlock) a
/// vault at the default scrypt cost, and to hash a password with PasswordHasher's defaults.
///
/// Prints one line: "vault SETS_PER_S GETS_PER_S SQLITE_INSERTS_PER_S SQLITE_SELECTS_PER_S
/// OPEN_MS SCRYPT_HASH_MS PBKDF2_HASH_MS".
func vaultBench(folder: String, count: Int) async throws {
    let passphrase = SecretBytes(Array("benchmark passphrase".utf8))
    let path = folder + "/bench-vault.db"
    let secret = SecretBytes([UInt8](repeating: 0x42, count: 32))
    let vault = try await Vault.create(at: path, credentials: VaultCredentials(passphrase: passphrase))

    let clock = ContinuousClock()
    var start = clock.now
    for index in 0..<count {
        try await vault.set(secret, service: "bench.example.com", account: "account-\(index)")
    }
    let sets = Double(count) / (clock.now - start).seconds
    start = clock.now
    for index in 0..<count {
        _ = try await vault.secret(service: "bench.example.com", account: "account-\((index * 7919) % count)")
    }
    let gets = Double(count) / (clock.now - start).seconds

    let baseline = try sqliteBaseline(path: folder + "/plain.db", count: count)

    let open = try bestMilliseconds(runs: 3) {
        _ = try Vault(path: path, credentials: VaultCredentials(passphrase: passphrase))
    }
    let hasher = PasswordHasher()
    let scrypt = try bestMilliseconds(runs: 3) { _ = try hasher.hash(passphrase) }
    let pbkdf2 = try bestMilliseconds(runs: 3) { _ = try PasswordHasher(algorithm: .defaultPBKDF2).hash(passphrase) }
    print(
        "vault", String(format: "%.1f %.1f %.1f %.1f %.1f %.1f %.1f", sets, gets, baseline.inserts, baseline.selects, open, scrypt, pbkdf2))
}

/// Plain SQLite: the same settings and row sizes as the vault, no encryption, no checks.
private func sqliteBaseline(path: String, count: Int) throws -> (inserts: Double, selects: Double) {
    var db: OpaquePointer?
    guard sqlite3_open(path, &db) == SQLITE_OK, let db else { throw BenchError("cannot create \(path)") }
    defer { sqlite3_close(db) }
    func exec(_ sql: String) throws {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { throw BenchError(String(cString: sqlite3_errmsg(db))) }
    }
    try exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL")
    try exec("""
        CREATE TABLE items(service TEXT NOT NULL, account TEXT NOT NULL, kind TEXT NOT NULL, created INTEGER NOT NULL,
            modified INTEGER NOT NULL, details BLOB NOT NULL, secret BLOB NOT NULL, PRIMARY KEY (service, account)) WITHOUT ROWID
        """)
    let transient = unsafeBitCast(Int(-1), to: sqlite3_destructor_type.self)
    let details = [UInt8](repeating: 1, count: 30 + 28)  // sealed "{"attributes":{}}"-sized JSON
    let sealed = [UInt8](repeating: 2, count: 32 + 28)   // a sealed 32-byte secret

    func prepare(_ sql: String) throws -> OpaquePointer {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw BenchError(String(cString: sqlite3_errmsg(db)))
        }
        return statement
    }
    let insert = try prepare("INSERT OR REPLACE INTO items VALUES (?, ?, 'password', ?, ?, ?, ?)")
    defer { sqlite3_finalize(insert) }
    let inserts = try rate(count: count) { index in
        sqlite3_reset(insert)
        sqlite3_bind_text(insert, 1, "bench.example.com", -1, transient)
        sqlite3_bind_text(insert, 2, "account-\(index)", -1, transient)
        sqlite3_bind_int64(insert, 3, Int64(index))
        sqlite3_bind_int64(insert, 4, Int64(index))
        _ = details.withUnsafeBytes { sqlite3_bind_blob(insert, 5, $0.baseAddress, Int32($0.count), transient) }
        _ = sealed.withUnsafeBytes { sqlite3_bind_blob(insert, 6, $0.baseAddress, Int32($0.count), transient) }
        guard sqlite3_step(insert) == SQLITE_DONE else { throw BenchError(String(cString: sqlite3_errmsg(db))) }
    }
    let select = try prepare("SELECT kind, created, modified, details, secret FROM items WHERE service = ? AND account = ?")
    defer { sqlite3_finalize(select) }
    let selects = try rate(count: count) { index in
        sqlite3_reset(select)
        sqlite3_bind_text(select, 1, "bench.example.com", -1, transient)
        sqlite3_bind_text(select, 2, "account-\((index * 7919) % count)", -1, transient)
        guard sqlite3_step(select) == SQLITE_ROW else { throw BenchError("baseline row \(index) missing") }
        _ = sqlite3_column_blob(select, 4)
    }
    return (inserts, selects)
}
