import Foundation
import Logging
import SignetServer
import SignetTestSupport
import Testing

/// A database file every request would fail on is refused when the server starts, naming the
/// file and the cause (it used to start, answer health, and fail every write with 503 "retry
/// later"): a symbolic link, something that is not a file, a file that is not an SQLite
/// database, one the server's user may only read. Nothing of the file is changed. From the
/// attack round on the server's SQLite driver.
@Suite(.timeLimit(.minutes(5))) struct ServerDatabaseStartTests {
    static let logger: Logger = {
        var logger = Logger(label: "signet.database-start-test")
        logger.logLevel = .critical
        return logger
    }()

    /// The detail of the configuration error opening `path` gives.
    static func refusal(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
        let opened = Result { () throws in try ServerDatabase(location: .sqlite(path: path), logger: logger) }
        switch opened {
        case .success(let database):
            await database.shutdown()
            Issue.record("\(path) was opened", sourceLocation: sourceLocation)
            return ""
        case .failure(ServerError.configuration(let detail)):
            #expect(detail.hasPrefix(path + ": "), "the message names the file: \(detail)", sourceLocation: sourceLocation)
            return detail
        case .failure(let error):
            Issue.record("not a configuration error: \(error)", sourceLocation: sourceLocation)
            return ""
        }
    }

    @Test func aSymbolicLinkIsRefusedAndItsTargetLeftAlone() async throws {
        let folder = try TemporaryFolder(prefix: "signet-database-start")
        let target = try folder.write("real.sqlite", "not touched")
        let link = folder.file("signet.sqlite")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        #expect(try await Self.refusal(link).contains("is a symbolic link"))
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "not touched")
        let dangling = folder.file("dangling.sqlite")
        try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: folder.file("missing.sqlite"))
        #expect(try await Self.refusal(dangling).contains("is a symbolic link"))
        #expect(!FileManager.default.fileExists(atPath: folder.file("missing.sqlite")), "the link's target was created")
        for name in ["real.sqlite-wal", "real.sqlite-shm", "signet.sqlite-wal", "signet.sqlite-shm"] {
            #expect(!FileManager.default.fileExists(atPath: folder.file(name)), "\(name) was made")
        }
    }

    @Test func aFolderOrADeviceIsRefused() async throws {
        let folder = try TemporaryFolder(prefix: "signet-database-start")
        let directory = folder.file("signet.sqlite")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        #expect(try await Self.refusal(directory).contains("is not a regular file"))
        #expect(try await Self.refusal("/dev/null").contains("is not a regular file"))
    }

    @Test func aFileThatIsNotAnSQLiteDatabaseIsRefusedUnchanged() async throws {
        let folder = try TemporaryFolder(prefix: "signet-database-start")
        let bytes = TestBytes.random(count: 8192, seed: 41)
        let path = folder.file("signet.sqlite")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        #expect(try await Self.refusal(path).contains("is not an SQLite database, or it is damaged"))
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))) == bytes)
    }

    @Test func theCommandLineSaysWhyAndExitsNonZero() throws {
        let folder = try TemporaryFolder(prefix: "signet-database-start")
        let path = folder.file("garbage.sqlite")
        let bytes = TestBytes.random(count: 8192, seed: 42)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let result = try SignetBinary.run(
            ["serve", "--data", folder.file("data"), "--database", path, "--port", "0", "--plain-http", "--scrypt-log-n", "14"], in: folder.url)
        #expect(result.status == 4, "\(result)")
        #expect(result.stderr.contains("\(path): is not an SQLite database, or it is damaged"), "\(result.stderr)")
        #expect(!result.stderr.contains("retry later"), "\(result.stderr)")
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))) == bytes)
    }

    /// Needs two users: a database the server's user cannot write belongs to another (its
    /// owner's own copy is narrowed to 0600, and so writable, at start). Runs as root, starting
    /// the server as `nobody` with setpriv.
    @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")))
    func aDatabaseTheServerMayOnlyReadIsRefused() async throws {
        let folder = try TemporaryFolder(prefix: "signet-database-start")
        #expect(chmod(folder.path, 0o755) == 0)
        let data = folder.file("data")
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: false)
        let path = data + "/signet.sqlite"
        let database = try ServerDatabase(location: .sqlite(path: path), logger: Self.logger)
        try await database.withConnection { sql in try await sql.raw("CREATE TABLE kept (x INTEGER)").run() }
        await database.shutdown()
        for companion in [path + "-wal", path + "-shm"] { try? FileManager.default.removeItem(atPath: companion) }
        #expect(chmod(path, 0o644) == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(chown(data, 65534, 65534) == 0)
        let result = try ProcessRunner.run(
            "/usr/bin/setpriv",
            ["--reuid=65534", "--regid=65534", "--clear-groups", SignetBinary.path,
             "serve", "--data", data, "--port", "0", "--plain-http", "--scrypt-log-n", "14"],
            in: URL(fileURLWithPath: data), environment: SignetBinary.isolatedEnvironment(in: URL(fileURLWithPath: data), adding: ["HOME": data]))
        #expect(result.status == 4, "\(result)")
        #expect(result.stderr.contains("\(path): this user may only read it"), "\(result.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }
}
