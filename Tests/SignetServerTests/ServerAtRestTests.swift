import Foundation
import HTTPTypes
import SignetCore
import SignetHTTP
import SignetServer
import SignetTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What the server leaves on disk (docs/server.md "The data folder"): files 0600 and folders 0700
/// whatever the umask, no data folder that others may write, the database URL out of the process
/// list, HMAC app secrets sealed in the database, and no upload left behind by a killed publish.
@Suite struct ServerAtRestTests {
    /// Every entry under `root`, `root` included, that is not a 0600 file or a 0700 folder.
    static func wrongModes(under root: String) -> [String] {
        var paths = [root]
        let walk = FileManager.default.enumerator(atPath: root)
        while let relative = walk?.nextObject() as? String { paths.append(root + "/" + relative) }
        return paths.compactMap { path in
            var info = stat()
            // An entry may go meanwhile (SQLite removes its -wal on the last close).
            guard lstat(path, &info) == 0 else { return nil }
            let mode = info.st_mode & 0o7777
            let wanted: mode_t = (info.st_mode & S_IFMT) == S_IFDIR ? 0o700 : 0o600
            return mode == wanted ? nil : "\(path): \(String(mode, radix: 8))"
        }
    }

    /// `signet serve --data folder/data` started by a shell that sets the umask to 022 first
    /// (as most logins do), running once it printed its URL.
    static func serveUnderWideUmask(in folder: TemporaryFolder, name: String) async throws -> BackgroundProcess {
        let arguments = ["-c", "umask 022 && exec \"$0\" \"$@\"", SignetBinary.path,
                         "serve", "--data", folder.file("data"), "--port", "0", "--scrypt-log-n", "14", "--log-level", "warning"]
        let process = try BackgroundProcess(
            "/bin/sh", arguments, in: folder.url, log: folder.fileURL("\(name).log"), environment: SignetBinary.isolatedEnvironment(in: folder.url))
        guard try await process.waitForLine("url") != nil else {
            process.stop(signal: SIGKILL)
            throw ServerTestError(description: "signet serve did not start:\n\(process.output)")
        }
        return process
    }

    /// An admin key file in `folder`.
    static func adminKey(in folder: TemporaryFolder) throws -> String {
        try folder.write("admin.pem", try PrivateKey.generate(.ed25519).encoded(as: .pem))
    }

    /// Every byte string a secret could be found as: itself and its base64.
    static func traces(of secret: [UInt8]) -> [[UInt8]] { [secret, Array(Base64.encode(secret).utf8)] }

    /// Whether `haystack` contains `needle`.
    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard let first = needle.first, needle.count <= haystack.count else { return needle.isEmpty }
        for start in 0...(haystack.count - needle.count) where haystack[start] == first {
            if haystack[start..<(start + needle.count)].elementsEqual(needle) { return true }
        }
        return false
    }

    /// The bytes of an SQLite database and its write-ahead log, as a backup would copy them.
    static func databaseBytes(_ path: String) -> [UInt8] {
        [path, path + "-wal"].flatMap { (try? Array(Data(contentsOf: URL(fileURLWithPath: $0)))) ?? [] }
    }

    @Test func everythingTheServerMakesIsPrivateWhateverTheUmask() async throws {
        let folder = try TemporaryFolder(prefix: "signet-at-rest")
        let server = try await Self.serveUnderWideUmask(in: folder, name: "serve")
        defer { server.stop() }
        let data = folder.file("data")
        for name in ["signet.sqlite", "signet.sqlite-wal", "signet.sqlite-shm", "server.vault", "server.vault.key", "tls-certificate.pem",
                     "response-key.pem", "trust.json", "work"] {
            #expect(FileManager.default.fileExists(atPath: data + "/" + name), "\(name)")
        }
        #expect(Self.wrongModes(under: data) == [])
        #expect(server.stop(signal: SIGTERM) == 0, "\(server.output)")
    }

    /// "An existing data folder yields a world-readable database": a folder made by an older
    /// server, or opened up by hand, is narrowed at start.
    @Test func anExistingFolderIsNarrowedAtStart() async throws {
        let folder = try TemporaryFolder(prefix: "signet-at-rest")
        let first = try await Self.serveUnderWideUmask(in: folder, name: "first")
        #expect(first.stop(signal: SIGTERM) == 0, "\(first.output)")
        let data = folder.file("data")
        #expect(chmod(data, 0o755) == 0 && chmod(data + "/work", 0o755) == 0)
        for name in try FileManager.default.contentsOfDirectory(atPath: data) where name != "work" {
            #expect(chmod(data + "/" + name, 0o644) == 0, "\(name)")
        }
        #expect(!Self.wrongModes(under: data).isEmpty)

        let second = try await Self.serveUnderWideUmask(in: folder, name: "second")
        defer { second.stop() }
        #expect(Self.wrongModes(under: data) == [])
        #expect(second.stop(signal: SIGTERM) == 0, "\(second.output)")
    }

    @Test(arguments: [0o777, 0o775, 0o757])
    func aDataFolderOthersCanWriteIsRefused(mode: Int) throws {
        let folder = try TemporaryFolder(prefix: "signet-at-rest")
        let data = folder.file("data")
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: false)
        #expect(chmod(data, mode_t(mode)) == 0)
        let serve = try SignetBinary.run(["serve", "--data", data, "--port", "0", "--scrypt-log-n", "14"], in: folder.url)
        #expect(serve.status == 4, "\(serve)")
        #expect(serve.stderr.contains(data) && serve.stderr.contains("chmod 700"), "\(serve)")
        let initialise = try SignetBinary.run(["server", "init", "--data", data, "--admin-key", try Self.adminKey(in: folder)], in: folder.url)
        #expect(initialise.status == 4 && initialise.stderr.contains("can be written by its group or by others"), "\(initialise)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: data) == [], "the server wrote into a folder it refused")
    }

    @Test(.enabled(if: geteuid() == 0, "needs root to give the folder to another user"))
    func aDataFolderOfAnotherUserIsRefused() throws {
        let folder = try TemporaryFolder(prefix: "signet-at-rest")
        let data = folder.file("data")
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: false)
        #expect(chmod(data, 0o700) == 0 && chown(data, 65534, 65534) == 0)
        let serve = try SignetBinary.run(["serve", "--data", data, "--port", "0"], in: folder.url)
        #expect(serve.status == 4 && serve.stderr.contains("belongs to another user"), "\(serve)")
    }

    @Test func theDatabaseURLComesFromAPrivateFileOrTheEnvironment() async throws {
        let folder = try TemporaryFolder(prefix: "signet-at-rest")
        let admin = try Self.adminKey(in: folder)
        let elsewhere = folder.file("elsewhere.sqlite")
        let urlFile = try folder.write("database-url", "  \(elsewhere)  \nthe second line is not read\n")
        #expect(chmod(urlFile, 0o640) == 0)
        let refused = try SignetBinary.run(
            ["server", "init", "--data", folder.file("data"), "--database-url-file", urlFile, "--admin-key", admin], in: folder.url)
        #expect(refused.status == 4 && refused.stderr.contains(urlFile) && refused.stderr.contains("chmod 600"), "\(refused)")
        #expect(!FileManager.default.fileExists(atPath: elsewhere))

        #expect(chmod(urlFile, 0o600) == 0)
        let initialised = try SignetBinary.run(
            ["server", "init", "--data", folder.file("data"), "--database-url-file", urlFile, "--admin-key", admin], in: folder.url)
        #expect(initialised.status == 0, "\(initialised)")
        #expect(FileManager.default.fileExists(atPath: elsewhere) && !folder.exists("data/signet.sqlite"))
        #expect(try folder.permissions("elsewhere.sqlite") == 0o600)
        let server = try await ServeProcess.start(in: folder, extra: ["--database-url-file", urlFile])
        #expect(server.process.stop(signal: SIGTERM) == 0, "\(server.process.output)")

        let both = try SignetBinary.run(
            ["server", "init", "--data", folder.file("data"), "--database", elsewhere, "--database-url-file", urlFile, "--admin-key", admin],
            in: folder.url)
        #expect(both.status == 2, "\(both)")

        let fromEnvironment = folder.file("environment.sqlite")
        let environment = try SignetBinary.run(
            ["server", "init", "--data", folder.file("data2"), "--admin-key", admin], in: folder.url,
            environment: ["SIGNET_DATABASE_URL": fromEnvironment])
        #expect(environment.status == 0 && FileManager.default.fileExists(atPath: fromEnvironment), "\(environment)")
    }

    /// On PostgreSQL the URL file keeps the URL out of `/proc/PID/cmdline`; a node whose data
    /// folder holds another app-secret key than the database was sealed with is refused.
    @Test func aPostgreSQLURLFromAFileAndNodesThatMustShareTheirKey() async throws {
        let postgres = try await PostgreSQLServer.shared()
        let database = try postgres.makeDatabase()
        let folder = try TemporaryFolder(prefix: "signet-at-rest")
        let urlFile = try folder.write("database-url", database + "\n")
        #expect(chmod(urlFile, 0o600) == 0)
        let initialised = try SignetBinary.run(
            ["server", "init", "--data", folder.file("data"), "--database-url-file", urlFile, "--admin-key", try Self.adminKey(in: folder)],
            in: folder.url)
        #expect(initialised.status == 0, "\(initialised)")
        #expect(try postgres.query("SELECT name FROM principals WHERE role = 'admin'", database: database) == ["admin"])
        let server = try await ServeProcess.start(in: folder, extra: ["--database-url-file", urlFile])
        defer { server.process.stop() }
        let commandLine = FileHandle(forReadingAtPath: "/proc/\(server.process.process.processIdentifier)/cmdline")?.readDataToEndOfFile()
        let arguments = String(decoding: try #require(commandLine), as: UTF8.self)
        #expect(arguments.contains("--database-url-file") && !arguments.contains("postgres://"), "\(arguments)")

        let other = try SignetBinary.run(
            ["serve", "--data", folder.file("other-data"), "--port", "0", "--scrypt-log-n", "14", "--database-url-file", urlFile], in: folder.url)
        #expect(other.status == 4 && other.stderr.contains("another app-secret key"), "\(other)")
    }

    @Test func aPasswordOnTheCommandLineIsWarnedAbout() throws {
        let folder = try TemporaryFolder(prefix: "signet-at-rest")
        let port = try PostgreSQLServer.freePort()
        let withPassword = "postgres://signet:hunter2@127.0.0.1:\(port)/signet"
        let admin = try Self.adminKey(in: folder)
        for command in [["serve", "--port", "0"], ["server", "init", "--admin-key", admin]] {
            let warned = try SignetBinary.run(command + ["--data", folder.file("data"), "--database", withPassword], in: folder.url)
            #expect(warned.status != 0, "nothing listens on \(port): \(warned)")
            #expect(warned.stderr.contains("warning: the --database URL holds a password"), "\(warned)")
            #expect(warned.stderr.contains("--database-url-file") && warned.stderr.contains("SIGNET_DATABASE_URL"), "\(warned)")
            let quiet = try SignetBinary.run(
                command + ["--data", folder.file("data"), "--database", "postgres://signet@127.0.0.1:\(port)/signet"], in: folder.url)
            #expect(!quiet.stderr.contains("holds a password"), "\(quiet)")
        }
    }

    /// A backup of the database alone does not give an HMAC app's secret: it is sealed with the
    /// key in the data folder's vault, and requests the app signs still verify.
    @Test func hmacSecretsAreSealedInTheDatabase() async throws {
        let sqlite = try #require(ProcessRunner.which("sqlite3"), "sqlite3 is needed to read the raw rows")
        try await TestServer.with { server in
            let enrolled = try await server.adminClient.enrol(AdminAPI.Enrolment(name: "legacy", hmac: true), role: .app)
            let secret = try #require(enrolled.secret.flatMap { Base64.decode($0) })
            let path = server.folder.file("data/signet.sqlite")
            let row = try ProcessRunner.run(sqlite, [path, "SELECT secret FROM principals WHERE key_id = 'legacy'"]).out
                .trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(row.hasPrefix("v1:"), "\(row)")
            let sealed = try #require(Base64.decode(row.dropFirst(3)))
            for trace in Self.traces(of: secret) {
                #expect(!Self.contains(Array(row.utf8), trace) && !Self.contains(sealed, trace))
                #expect(!Self.contains(Self.databaseBytes(path), trace), "the secret is in the database file")
            }
            var signer = HTTPMessageSigner(key: .hmacSHA256(SecretBytes(secret)), keyID: enrolled.keyId)
            signer.includeAlgorithm = true
            let registered = try await server.api.send(
                .post, "/v1/users", json: UserAPI.Registration(email: "h@example.com", password: "0123456789", displayName: "H"), signer: signer)
            #expect(registered.status == 201, "\(registered.text)")
        }
    }

    /// A secret stored in the clear by an older server is sealed at the next start, in place,
    /// leaving no copy in the file; the app signs on as before.
    @Test func aSecretStoredInTheClearIsSealedAtStart() async throws {
        let sqlite = try #require(ProcessRunner.which("sqlite3"), "sqlite3 is needed to write and read the raw rows")
        let folder = try TemporaryFolder(prefix: "signet-at-rest")
        _ = try ServerKeys.initialise(in: folder)
        let path = folder.file("data/signet.sqlite")
        let secret = RandomBytes.make(32)
        let inserted = try ProcessRunner.run(sqlite, [path, """
            INSERT INTO principals (key_id, role, name, algorithm, public_key, secret, created_at, revoked_at)
            VALUES ('old-hmac', 'app', 'old-hmac', 'hmac-sha256', NULL, '\(Base64.encode(secret))', 0, NULL)
            """])
        #expect(inserted.status == 0, "\(inserted)")

        let server = try await ServeProcess.start(in: folder)
        defer { server.process.stop() }
        let row = try ProcessRunner.run(sqlite, [path, "SELECT secret FROM principals WHERE key_id = 'old-hmac'"]).out
        #expect(row.hasPrefix("v1:"), "\(row)")
        var signer = HTTPMessageSigner(key: .hmacSHA256(SecretBytes(secret)), keyID: "old-hmac")
        signer.includeAlgorithm = true
        let registered = try await server.api.send(
            .post, "/v1/users", json: UserAPI.Registration(email: "o@example.com", password: "0123456789", displayName: "O"), signer: signer)
        #expect(registered.status == 201, "\(registered.text)")
        #expect(server.process.stop(signal: SIGTERM) == 0, "\(server.process.output)")
        for trace in Self.traces(of: secret) {
            #expect(!Self.contains(Self.databaseBytes(path), trace), "a copy of the plain secret is left in the database file")
        }
    }

    /// A node started with another data folder than the one the database's secrets were sealed
    /// with is refused, on SQLite as on PostgreSQL.
    @Test func anotherAppSecretKeyIsRefused() throws {
        let folder = try TemporaryFolder(prefix: "signet-at-rest")
        let database = folder.file("shared.sqlite")
        let initialised = try SignetBinary.run(
            ["server", "init", "--data", folder.file("a"), "--database", database, "--admin-key", try Self.adminKey(in: folder)], in: folder.url)
        #expect(initialised.status == 0, "\(initialised)")
        let other = try SignetBinary.run(
            ["serve", "--data", folder.file("b"), "--database", database, "--port", "0", "--scrypt-log-n", "14"], in: folder.url)
        #expect(other.status == 4 && other.stderr.contains("another app-secret key"), "\(other)")
    }

    /// The work folder of a server killed mid-publish (its lock no longer held) is removed at
    /// the next start; one whose lock a live process holds is kept, and so is what is not a
    /// server's work folder.
    @Test func workFoldersOfGoneServersAreRemovedAtStart() async throws {
        let folder = try TemporaryFolder(prefix: "signet-at-rest")
        let work = folder.file("data/work")
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        #expect(chmod(folder.file("data"), 0o700) == 0)
        let dead = try folder.write("data/work/node-999999-dead01/signet-publish-abc123/upload", TestBytes.random(count: 4096, seed: 1))
        try folder.write("data/work/node-999999-dead01/.lock", [UInt8]())
        try folder.write("data/work/node-999998-nolock/upload", [UInt8](repeating: 1, count: 16))
        let liveLock = try folder.write("data/work/node-1-live01/.lock", [UInt8]())
        try folder.write("data/work/keep-me", "not a work folder")
        let held = open(liveLock, O_RDWR | O_CLOEXEC)
        #expect(held >= 0 && flock(held, LOCK_EX | LOCK_NB) == 0)

        let server = try await ServeProcess.start(in: folder)
        defer { server.process.stop() }
        #expect(!FileManager.default.fileExists(atPath: dead))
        let names = Set(try FileManager.default.contentsOfDirectory(atPath: work))
        #expect(!names.contains("node-999999-dead01") && !names.contains("node-999998-nolock"), "\(names)")
        #expect(names.contains("node-1-live01") && names.contains("keep-me"), "\(names)")
        let own = names.filter { $0.hasPrefix("node-\(server.process.process.processIdentifier)-") }
        #expect(own.count == 1, "\(names)")
        #expect(server.process.stop(signal: SIGTERM) == 0, "\(server.process.output)")

        // Its holder gone, the live one's folder goes too, and so does the stopped server's.
        close(held)
        let again = try await ServeProcess.start(in: folder, name: "again")
        defer { again.process.stop() }
        let after = Set(try FileManager.default.contentsOfDirectory(atPath: work))
        #expect(after.count == 2 && after.contains("keep-me") && after.isDisjoint(with: own.union(["node-1-live01"])), "\(after)")
    }
}
