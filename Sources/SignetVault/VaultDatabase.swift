import CSQLite
import SignetCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The vault's one row of key material and settings.
struct VaultHeader: Sendable {
    var method: VaultUnlockMethod
    /// `scrypt$ln=17,r=8,p=1`, or `none` for a key-file-only vault.
    var kdf: String
    var salt: [UInt8]
    var wrappedKey: [UInt8]

    var kdfParameters: VaultKDFParameters? { VaultKDFParameters(recorded: kdf) }
}

/// The SQLite file under a vault: its schema, its settings, and SQLite's errors turned into
/// ``VaultError``s. Owned by one ``Vault`` actor, which serialises every call.
final class VaultDatabase {
    let path: String
    let connection: SQLiteConnection

    /// `PRAGMA application_id`: "SGVL", so `file(1)`-like tools and we can tell a vault apart.
    static let applicationID: Int64 = 0x5347_564C
    static let schemaVersion: Int64 = 1
    /// How long a writer waits for another process's transaction before giving up.
    static let busyTimeout = Duration.seconds(10)

    static let schema = """
        CREATE TABLE vault(
            id INTEGER PRIMARY KEY CHECK (id = 1),
            unlock TEXT NOT NULL,
            kdf TEXT NOT NULL,
            salt BLOB NOT NULL,
            wrapped_key BLOB NOT NULL
        );
        CREATE TABLE items(
            service TEXT NOT NULL,
            account TEXT NOT NULL,
            kind TEXT NOT NULL,
            created INTEGER NOT NULL,
            modified INTEGER NOT NULL,
            details BLOB NOT NULL,
            secret BLOB NOT NULL,
            PRIMARY KEY (service, account)
        ) WITHOUT ROWID;
        """

    /// Opens the existing vault at `path` and checks that it is one.
    init(opening path: String) throws {
        self.path = path
        let resolved: String
        do {
            resolved = try VaultPath.resolve(path)
        } catch VaultError.io(_, let detail) where detail.hasPrefix("the folder") && detail.hasSuffix("No such file or directory") {
            throw VaultError.vaultMissing(path: path)
        }
        guard try VaultPath.existingFile(resolved, shownAs: path) else { throw VaultError.vaultMissing(path: path) }
        do {
            connection = try SQLiteConnection(path: resolved, create: false)
        } catch {
            throw Self.map(error, path: path)
        }
        Self.harden(connection)
        // Identify the file before changing anything in it (the switch to WAL is persistent).
        let identity = try run { () throws(SQLiteError) in
            (try connection.query("PRAGMA application_id").first?.first?.integer,
             try connection.query("PRAGMA user_version").first?.first?.integer)
        }
        guard identity.0 == Self.applicationID else {
            throw VaultError.notAVault(path: path, detail: "an SQLite database of another application")
        }
        guard identity.1 == Self.schemaVersion else {
            throw VaultError.notAVault(path: path, detail: "vault format \(identity.1 ?? 0); this signet reads format \(Self.schemaVersion)")
        }
        // Exactly our two tables: a planted view or trigger would run inside our queries.
        let objects = try run { () throws(SQLiteError) in
            try connection.query("SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY name")
        }
        guard objects.map({ $0.map { $0.text?.trimmingWhitespace ?? "" } }) == Self.expectedObjects else {
            throw VaultError.corrupted(path: path, detail: "its schema is not the vault's (extra or altered tables, views, indexes or triggers)")
        }
        try configure()
    }

    /// `sqlite_schema` rows (type, name, table, SQL) of a vault, from ``schema``.
    static let expectedObjects: [[String]] = schema.split(separator: ";").map { $0.trimmingWhitespace }
        .filter { !$0.isEmpty }
        .map { statement -> [String] in
            let name = String(statement.dropFirst("CREATE TABLE ".count).prefix { $0 != "(" })
            return ["table", name, name, statement]
        }
        .sorted { $0[1] < $1[1] }

    /// Limits that hold whatever the file says: no value over 1 MiB (a vault's largest is
    /// about 64 KiB), and SQLite's defensive mode (no writable schema, no raw page writes).
    static func harden(_ connection: SQLiteConnection) {
        sqlite3_limit(connection.rawHandle, SQLITE_LIMIT_LENGTH, 1 << 20)
        signet_sqlite3_set_defensive(connection.rawHandle)
        sqlite3_busy_timeout(connection.rawHandle, Int32(busyTimeout / .milliseconds(1)))
    }

    /// Waits at most `timeout` (whole milliseconds, at most 2³¹ − 1) for another process's lock.
    func setBusyTimeout(_ timeout: Duration) {
        sqlite3_busy_timeout(connection.rawHandle, Int32(min(max(timeout / .milliseconds(1), 0), Double(Int32.max))))
    }

    private init(path: String, connection: SQLiteConnection) throws {
        self.path = path
        self.connection = connection
        try configure()
    }

    /// Creates a vault at `path` holding `header`, atomically: it is built under a temporary
    /// name in the same folder and linked into place, so `path` is either absent or a whole
    /// vault, and an existing file is never touched.
    static func create(at path: String, header: VaultHeader) throws {
        let resolved = try VaultPath.resolve(path)
        var info = stat()
        if lstat(resolved, &info) == 0 { throw VaultError.vaultExists(path: path) }
        for suffix in ["-wal", "-shm", "-journal"] where lstat(resolved + suffix, &info) == 0 {
            // A stale journal would be replayed into the new file.
            throw VaultError.io(path: path, detail: "\(path)\(suffix) exists without its vault; remove it first")
        }
        // The database is built in a temporary file (SQLite writes it by path) and linked into
        // place only when complete, so a vault file is never half made.
        let file: AtomicFileWriter
        do { file = try AtomicFileWriter(path: resolved, permissions: .privateToOwner) } catch { throw VaultError.io(path: path, detail: String(describing: error)) }
        let temporary = file.temporaryPath
        do {
            let connection: SQLiteConnection
            do {
                connection = try SQLiteConnection(path: temporary, create: false)
            } catch {
                throw map(error, path: path)
            }
            harden(connection)
            let database = try VaultDatabase(path: path, connection: connection)
            try database.run { () throws(SQLiteError) in
                try connection.execute("PRAGMA application_id = \(applicationID); PRAGMA user_version = \(schemaVersion)")
                try connection.execute("BEGIN IMMEDIATE; \(schema)")
                try connection.query(
                    "INSERT INTO vault(id, unlock, kdf, salt, wrapped_key) VALUES (1, ?, ?, ?, ?)",
                    [.text(header.method.rawValue), .text(header.kdf), .blob(header.salt), .blob(header.wrappedKey)])
                try connection.execute("COMMIT")
            }
        }  // the connection closes here, checkpointing and removing the temporary's WAL
        do {
            try file.commit(overwrite: false)
        } catch SignetCoreError.outputExists {
            throw VaultError.vaultExists(path: path)
        } catch {
            throw VaultError.io(path: path, detail: String(describing: error))
        }
    }

    /// Per-connection settings: WAL with full sync (a committed write survives kill -9 and
    /// power loss), a busy timeout so concurrent processes queue instead of failing, deleted
    /// content overwritten, and no trust in functions named by the schema.
    private func configure() throws {
        try run { () throws(SQLiteError) in
            try connection.execute("PRAGMA trusted_schema = OFF; PRAGMA cell_size_check = ON")
            let mode = try connection.query("PRAGMA journal_mode = WAL").first?.first?.text
            guard mode?.lowercased() == "wal" else {
                throw SQLiteError(code: SQLITE_ERROR, message: "cannot switch to write-ahead logging (journal mode \(mode ?? "unknown"))")
            }
            try connection.execute("PRAGMA synchronous = FULL; PRAGMA secure_delete = ON")
        }
    }

    /// The header row.
    func header() throws -> VaultHeader {
        let rows = try run { () throws(SQLiteError) in
            try connection.query("SELECT unlock, kdf, salt, wrapped_key FROM vault WHERE id = 1")
        }
        guard let row = rows.first, row.count == 4, let unlock = row[0].text, let method = VaultUnlockMethod(rawValue: unlock),
            let kdf = row[1].text, let salt = row[2].blob, let wrapped = row[3].blob
        else {
            throw VaultError.corrupted(path: path, detail: "the key record is missing or malformed")
        }
        let header = VaultHeader(method: method, kdf: kdf, salt: salt, wrappedKey: wrapped)
        guard salt.count >= 16, method.needsPassphrase == (header.kdfParameters != nil) else {
            throw VaultError.corrupted(path: path, detail: "the key record's salt or scrypt parameters are malformed")
        }
        return header
    }

    /// Runs SQLite work, turning its errors into ``VaultError``s.
    func run<T>(_ body: () throws(SQLiteError) -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw Self.map(error, path: path)
        }
    }

    /// Runs `body` in one write transaction (BEGIN IMMEDIATE … COMMIT), rolled back on error.
    @discardableResult
    func write<T>(_ body: () throws -> T) throws -> T {
        try read { try connection.transaction(body) }
    }

    /// Runs `body`, which may throw SQLite's or the vault's errors, as a ``VaultError``.
    @discardableResult
    func read<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as VaultError {
            throw error
        } catch let error as SQLiteError {
            throw Self.map(error, path: path)
        } catch {
            throw VaultError.io(path: path, detail: "\(error)")
        }
    }

    static func map(_ error: any Error, path: String) -> VaultError {
        guard let error = error as? SQLiteError else { return error as? VaultError ?? .io(path: path, detail: "\(error)") }
        switch error.primaryCode {
        case SQLITE_BUSY, SQLITE_LOCKED: return .busy(path: path)
        case SQLITE_NOTADB: return .notAVault(path: path, detail: "not an SQLite database")
        case SQLITE_CORRUPT: return .corrupted(path: path, detail: String(describing: error))
        case SQLITE_TOOBIG: return .corrupted(path: path, detail: "a value is larger than any a vault holds")
        default: return .io(path: path, detail: String(describing: error))
        }
    }
}

extension StringProtocol {
    var trimmingWhitespace: String {
        String(drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}
