import Foundation
import HTTPTypes
import SignetCore
import SignetHTTP
import SignetClient
import SignetServer
import SignetTestSupport
import Synchronization
import Testing

/// `signet serve` and `signet server …` as a user runs them: real processes over TLS, the admin
/// CLI, an independent python client, and crashes.
@Suite struct ServeProcessTests {
    @Test func adminCommandsOverPinnedTLS() async throws {
        let folder = try TemporaryFolder(prefix: "signet-serve")
        let keys = try ServerKeys.initialise(in: folder)
        let again = try SignetBinary.run(["server", "init", "--data", folder.file("data"), "--admin-key", keys.adminPath], in: folder.url)
        #expect(again.status == 1 && again.stderr.contains("already has an admin"), "\(again)")
        let server = try await ServeProcess.start(in: folder)
        defer { server.process.stop() }
        let admin = server.adminArguments + ["--admin-key", keys.adminPath]
        func signet(_ arguments: [String]) async throws -> RunResult { try await SignetBinary.runAsync(arguments, in: folder.url) }

        let added = try await signet(["server", "app", "add", "ios", "--key", keys.appPath] + admin)
        #expect(added.status == 0, "\(added)")
        #expect(added.out.contains(keys.app.publicKey.fingerprint.description))
        let hmac = try await signet(["server", "app", "add", "legacy", "--hmac"] + admin)
        #expect(hmac.status == 0 && hmac.out.contains("secret: ") && hmac.stderr.contains("shown only now"), "\(hmac)")
        let duplicate = try await signet(["server", "app", "add", "ios", "--key", keys.appPath] + admin)
        #expect(duplicate.status == 1 && duplicate.stderr.contains("409"), "\(duplicate)")

        let registered = try await server.api.send(
            .post, "/v1/users", json: UserAPI.Registration(email: "ann@example.com", password: "correct horse battery", displayName: "Ann"),
            signer: keys.appSigner)
        #expect(registered.status == 201)
        let users = try await signet(["server", "user", "list", "--json"] + admin)
        #expect(try JSONDecoder().decode([UserAPI.Profile].self, from: users.stdout).map(\.email) == ["ann@example.com"])
        let sessions = try await signet(["server", "session", "revoke", "ann@example.com"] + admin)
        #expect(sessions.status == 0 && sessions.stderr.contains("ended 0 sessions"), "\(sessions)")
        #expect(try await signet(["server", "user", "disable", "ann@example.com"] + admin).status == 0)

        #expect(try await signet(["server", "app", "revoke", "ios"] + admin).status == 0)
        let listed = try await signet(["server", "app", "list", "--json"] + admin)
        let apps = try JSONDecoder().decode([AdminAPI.Enrolled].self, from: listed.stdout)
        #expect(apps.first { $0.name == "ios" }?.revokedAt != nil)
        #expect(apps.allSatisfy { $0.secret == nil })
        let lastAdmin = try await signet(["server", "admin", "revoke", "admin"] + admin)
        #expect(lastAdmin.status == 1 && lastAdmin.stderr.contains("last admin"), "\(lastAdmin)")

        // The app's key is no admin key; a wrong pin is a failed check; a closed port is exit 4.
        let asApp = try await signet(["server", "app", "list"] + server.adminArguments + ["--admin-key", keys.appPath])
        #expect(asApp.status == 1, "\(asApp)")
        let otherPin = try SoftwareSigner(key: PrivateKey.generate(.p256)).publicKey.fingerprint.description
        let wrongPin = try await signet(["server", "app", "list", "--server", server.url, "--pin", otherPin, "--pin", server.pins[1].description, "--admin-key", keys.adminPath, "--server-key", server.responseKeyPath])
        #expect(wrongPin.status == 1 && wrongPin.stderr.contains("pin"), "\(wrongPin)")
        let closed = try await signet(["server", "app", "list", "--server", "https://127.0.0.1:\(try PostgreSQLServer.freePort())"] + admin.dropFirst(2))
        #expect(closed.status == 4, "\(closed)")

        // SIGTERM stops the server cleanly.
        #expect(server.process.stop(signal: SIGTERM) == 0, "\(server.process.output)")
    }

    /// With no --data the data folder is $XDG_DATA_HOME/signet/server; --plain-http serves HTTP
    /// (behind a TLS proxy) and announces no pin.
    @Test func defaultDataFolderAndPlainHTTP() async throws {
        let folder = try TemporaryFolder(prefix: "signet-serve")
        let server = try BackgroundProcess(
            SignetBinary.path, ["serve", "--plain-http", "--port", "0", "--scrypt-log-n", "14", "--log-level", "warning"],
            in: folder.url, log: folder.fileURL("serve.log"), environment: SignetBinary.isolatedEnvironment(in: folder.url))
        defer { server.stop() }
        let url = try #require(try await server.waitForLine("url"), "\(server.output)")
        #expect(url.hasPrefix("http://127.0.0.1:"))
        #expect(try await server.waitForLine("response-key") != nil)
        #expect(!server.output.contains("pin: "))
        let health = try Python.run(
            "import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1] + '/v1/health', timeout=float(sys.argv[2])).read().decode())",
            [url, String(TestTimeouts.hangGuardSeconds)])
        #expect(health.out == #"{"status":"ok"}"# + "\n", "\(health)")
        let data = folder.file("xdg-data/signet/server")
        for file in ["signet.sqlite", "server.vault", "server.vault.key", "tls-certificate.pem", "response-key.pem"] {
            #expect(FileManager.default.fileExists(atPath: data + "/" + file), "\(file)")
        }
        #expect(server.stop(signal: SIGTERM) == 0, "\(server.output)")
    }

    @Test func serveRefusesBadOptions() throws {
        let folder = try TemporaryFolder(prefix: "signet-serve")
        for arguments in [["--tls-cert", "c.pem"], ["--port", "70000"], ["--scrypt-log-n", "5"], ["--plain-http", "--tls-cert", "c", "--tls-key", "k"],
                          ["--public-url", "https://example.com/api"]] {
            let result = try SignetBinary.run(["serve", "--data", folder.file("data")] + arguments, in: folder.url)
            #expect(result.status == 2, "\(arguments): \(result)")
        }
        let missingKey = try SignetBinary.run(["server", "init", "--data", folder.file("data2"), "--admin-key", folder.file("nope.pem")], in: folder.url)
        #expect(missingKey.status == 4, "\(missingKey)")
    }

    @Test func anIndependentPythonClientEnrolsRegistersAndSignsIn() async throws {
        let folder = try TemporaryFolder(prefix: "signet-serve")
        let keys = try ServerKeys.initialise(in: folder)
        let server = try await ServeProcess.start(in: folder)
        defer { server.process.stop() }
        let check = try Python.run("import requests, http_message_signatures, cryptography")
        try #require(check.status == 0, "python needs requests, http-message-signatures and cryptography (Scripts/test installs them): \(check)")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Python/signet_client.py")
        // The client's timeout is a hang guard: a loaded machine answers late, never wrongly.
        let hangGuard = ["--timeout", String(TestTimeouts.hangGuardSeconds)]
        let common = ["--server", server.url, "--cafile", folder.file("data/tls-certificate.pem")] + hangGuard
            + server.pins.flatMap { ["--pin", $0.description] }
        let story = ["story", "--admin-key", keys.adminPath, "--app-key", keys.appPath, "--email", "Ada@Example.com",
                     "--password", "correct horse battery", "--name", "Ada Lovelace"]
        let result = try Python.runScript(script, common + story, in: folder.url)
        #expect(result.status == 0, "\(result)")
        #expect(result.out.split(separator: "\n").count == 6)
        // What the python client did is on the server: its app enrolled, its user registered.
        let admin = try server.adminClient(signer: keys.adminSigner)
        #expect(try await admin.list(role: .app).map(\.name) == ["python-client"])
        #expect(try await admin.users().map(\.email) == ["ada@example.com"])
        // A wrong pin stops it before anything is sent.
        let wrong = try Python.runScript(
            script, ["--server", server.url, "--cafile", folder.file("data/tls-certificate.pem"), "--pin", "sha256/" + String(repeating: "A", count: 43) + "="]
                + hangGuard + story.map { $0 == "Ada@Example.com" ? "eve@example.com" : $0 }, in: folder.url)
        #expect(wrong.status == 3 && wrong.stderr.contains("pin mismatch"), "\(wrong)")
    }

    /// `kill -9` during a registration load: after a restart every acknowledged registration is
    /// there, complete, and the database is intact.
    @Test(arguments: [false, true])
    func killNineDuringRegistrations(onPostgreSQL: Bool) async throws {
        let postgres = onPostgreSQL ? try await PostgreSQLServer.shared() : nil
        let database = try postgres?.makeDatabase()
        let folder = try TemporaryFolder(prefix: "signet-crash")
        let keys = try ServerKeys.initialise(in: folder, database: database)
        // Each registration comes "from" its own client address (X-Forwarded-For, trusted from
        // loopback), so that the per-address registration limit leaves the load alone.
        let server = try await ServeProcess.start(in: folder, database: database, extra: ["--trusted-proxy", "127.0.0.1"])
        try await keys.enrolApp(on: server)
        let api = try server.api
        let signer = keys.appSigner
        let count = AcknowledgedCount()
        let acknowledged = try await withThrowingTaskGroup(of: [String].self) { group in
            for worker in 0..<6 {
                group.addTask {
                    var done: [String] = []
                    for index in 0..<200 {
                        let email = "user-\(worker)-\(index)@example.com"
                        guard let response = try? await api.send(
                            .post, "/v1/users", json: UserAPI.Registration(email: email, password: "password-\(index)", displayName: "U \(index)"),
                            signer: signer, headers: [HTTPField.Name("X-Forwarded-For")!: "10.9.\(worker).\(index)"])
                        else { break }
                        if response.status == 201 {
                            done.append(email)
                            count.value.add(1, ordering: .relaxed)
                        }
                    }
                    return done
                }
            }
            group.addTask {
                // Killed in the middle of the load: once 20 registrations were acknowledged.
                // No short deadline: in a loaded suite the workers may be starved for minutes, and
                // killing before 20 acknowledgements would test nothing.
                let deadline = ContinuousClock.now + .seconds(900)
                while count.value.load(ordering: .relaxed) < 20, server.process.process.isRunning, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(10))
                }
                server.process.stop(signal: SIGKILL)
                return []
            }
            return try await group.reduce(into: [String]()) { $0 += $1 }
        }
        #expect(acknowledged.count >= 20, "too few registrations before the kill to mean anything")

        let restarted = try await ServeProcess.start(in: folder, database: database, name: "restarted")
        defer { restarted.process.stop() }
        let client = try restarted.adminClient(signer: keys.adminSigner)
        let stored = try await client.users()
        let emails = Set(stored.map(\.email))
        #expect(Set(acknowledged).isSubset(of: emails), "lost: \(Set(acknowledged).subtracting(emails))")
        #expect(stored.allSatisfy { $0.displayName.hasPrefix("U ") && !$0.id.isEmpty })
        if let postgres, let database {
            #expect(try postgres.query("SELECT COUNT(*) FROM users WHERE password_hash NOT LIKE '$scrypt$%'", database: database) == ["0"])
        } else {
            let sqlite = try #require(ProcessRunner.which("sqlite3"))
            let path = folder.file("data/signet.sqlite")
            #expect(try ProcessRunner.run(sqlite, [path, "PRAGMA integrity_check"]).out == "ok\n")
            #expect(try ProcessRunner.run(sqlite, [path, "SELECT COUNT(*) FROM users WHERE password_hash NOT LIKE '$scrypt$%'"]).out == "0\n")
        }
        // Each acknowledged user can sign in with the password it registered with.
        if let first = acknowledged.first, let index = first.split(separator: "-").last?.split(separator: "@").first {
            let signIn = try await restarted.api.send(
                .post, "/v1/sessions", json: UserAPI.SignIn(email: first, password: "password-\(index)"), signer: keys.appSigner)
            #expect(signIn.status == 201, "\(signIn.text)")
        }
    }
}

/// How many registrations the server acknowledged so far, across the load's workers.
final class AcknowledgedCount: Sendable {
    let value = Atomic<Int>(0)
}
