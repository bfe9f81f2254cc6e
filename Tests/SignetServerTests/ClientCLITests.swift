import Foundation
import SignetCore
import SignetServer
import SignetTestSupport
import Testing

/// `signet client` against `signet serve`: an app key made in the vault and enrolled by the
/// admin, then register, sign in (the token in the vault), me, sign out.
@Suite struct ClientCLITests {
    @Test func enrolRegisterSignInMeSignOut() async throws {
        let folder = try TemporaryFolder(prefix: "signet-client")
        let keys = try ServerKeys.initialise(in: folder)
        let server = try await ServeProcess.start(in: folder)
        defer { server.process.stop() }
        let environment = ["SIGNET_PASSPHRASE": "vault passphrase for the test", "SIGNET_VAULT": folder.file("client.vault")]
        func signet(_ arguments: [String]) async throws -> RunResult {
            try await SignetBinary.runAsync(arguments, in: folder.url, environment: environment)
        }
        #expect(try await signet(["vault", "init", "--scrypt-log-n", "10", "-q"]).status == 0)
        let enrolled = try await signet(["client", "enrol", "phone"])
        #expect(enrolled.status == 0, "\(enrolled)")
        #expect(enrolled.stderr.contains("vault:signet-app/phone"))
        try folder.write("phone.pub", enrolled.stdout)
        let added = try await signet(["server", "app", "add", "phone", "--key", folder.file("phone.pub")] + server.adminArguments + ["--admin-key", keys.adminPath])
        #expect(added.status == 0, "\(added)")

        let connection = server.connectionArguments + ["--app-key", "vault:signet-app/phone", "--server-key", folder.file("data/response-key.pem")]
        try folder.write("password.txt", "correct horse battery\n")
        let registered = try await signet(["client", "register", "--email", "Zoe@Example.com", "--display-name", "Zoe", "--password-file", folder.file("password.txt")] + connection)
        #expect(registered.status == 0 && registered.out.contains("zoe@example.com"), "\(registered)")
        let signedIn = try await signet(["client", "signin", "--email", "zoe@example.com", "--password-file", folder.file("password.txt")] + connection)
        #expect(signedIn.status == 0, "\(signedIn)")
        let me = try await signet(["client", "me"] + connection)
        #expect(me.status == 0 && me.out.contains("\"displayName\" : \"Zoe\""), "\(me)")
        // The token is in the vault, not in any file of the folder.
        let listed = try await signet(["vault", "list"])
        #expect(listed.out.contains("zoe@example.com"), "\(listed)")
        #expect(try await signet(["client", "signout"] + connection).status == 0)
        let after = try await signet(["client", "me"] + connection)
        #expect(after.status == 1 && after.stderr.contains("no user is signed in"), "\(after)")
        // A wrong password and a server key that is not the server's are refusals (exit 1).
        try folder.write("wrong.txt", "not the password\n")
        let wrong = try await signet(["client", "signin", "--email", "zoe@example.com", "--password-file", folder.file("wrong.txt")] + connection)
        #expect(wrong.status == 1 && wrong.stderr.contains("wrong e-mail address or password"), "\(wrong)")
        let otherKey = try folder.write("other.pub", try PrivateKey.generate(.ed25519).publicKey.encoded(as: .pem))
        let forged = try await signet(["client", "signin", "--email", "zoe@example.com", "--password-file", folder.file("password.txt")]
            + server.connectionArguments + ["--app-key", "vault:signet-app/phone", "--server-key", otherKey])
        #expect(forged.status == 1 && forged.stderr.contains("not signed by the server"), "\(forged)")
    }
}

/// `--timeout` and `$SIGNET_TIMEOUT`: a value that is no number of seconds is a usage error,
/// named, before anything is opened or sent.
@Suite struct ClientTimeoutOptionTests {
    @Test func badTimeoutsAreUsageErrors() throws {
        let folder = try TemporaryFolder(prefix: "signet-timeout")
        defer { folder.remove() }
        let key = folder.file("app.pem")
        #expect(try SignetBinary.run(["key", "generate", "-t", "ed25519", "-o", key], in: folder.url).status == 0)
        let base = ["client", "me", "--server", "https://127.0.0.1:9", "--app-key", key,
                    "--pin", "sha256/Wj3QnzveoPXZEBzDKnKvld1d6dlI6FIfpa93zrbqmEo=", "--pin", "sha256/sZXev5iRmi0/kWYEyVhCzzDx11q0qE1S6pOJFkoRQNo="]
        let zero = try SignetBinary.run(base + ["--timeout", "0"], in: folder.url)
        #expect(zero.status == 2 && zero.stderr.contains("--timeout 0"), "\(zero)")
        let variable = try SignetBinary.run(base, in: folder.url, environment: ["SIGNET_TIMEOUT": "soon"])
        #expect(variable.status == 2 && variable.stderr.contains("$SIGNET_TIMEOUT is \"soon\""), "\(variable)")
        let admin = try SignetBinary.run(["server", "app", "list", "--server", "https://127.0.0.1:9", "--admin-key", key, "--server-key", key, "--timeout", "-5"]
            + Array(base.suffix(4)), in: folder.url)
        #expect(admin.status == 2, "\(admin)")
    }
}

/// The README's first command: `Scripts/demo` runs the whole story on loopback, against the
/// binary under test, and leaves nothing running.
@Suite struct QuickStartDemoTests {
    @Test func theDemoRunsTheSystemStory() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let folder = try TemporaryFolder(prefix: "signet-demo")
        let result = try await ProcessRunner.runAsync(
            "/bin/bash", [root.appendingPathComponent("Scripts/demo").path], in: folder.url,
            environment: SignetBinary.isolatedEnvironment(
                in: folder.url,
                // A sign-in waits for the server's scrypt, queued behind the rest of the suite's: a hang guard, not the default 30 s.
                adding: ["SIGNET_BIN": SignetBinary.path, "TMPDIR": folder.path, "SIGNET_TIMEOUT": String(TestTimeouts.hangGuardSeconds)]))
        #expect(result.status == 0, "\(result)")
        #expect(result.out.contains("The Signet system ran end to end"))
        // A man in the middle, an unknown app, a forged answer, a tampered resource, a bundle signed by a stranger, a signed-out session.
        #expect(result.out.components(separatedBy: "(refused: exit 1)").count == 7, "\(result.out)")
        #expect(result.out.contains("app-config\t1\tupdated") && result.out.contains("app-config\t1\tunchanged"), "\(result.out)")
        // Its scratch folder is gone and its server stopped.
        #expect(try folder.contents().isEmpty)
        let running = try ProcessRunner.run("/usr/bin/pgrep", ["-f", "serve --data server --port 0"])
        #expect(running.out.isEmpty)
    }
}
