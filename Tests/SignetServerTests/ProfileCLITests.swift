import Foundation
import SignetCore
import SignetTestSupport
import Testing

/// Connection profiles (issue 30): a named connection instead of 300-character command lines,
/// key references only, flags over the profile, and a file nobody else may have written.
@Suite struct ProfileCLITests {
    @Test func profilesCarryTheConnectionAndFlagsOverrideThem() async throws {
        let folder = try TemporaryFolder(prefix: "signet-profile")
        let keys = try ServerKeys.initialise(in: folder)
        let server = try await ServeProcess.start(in: folder)
        defer { server.process.stop() }
        let vault = ["SIGNET_PASSPHRASE": "vault passphrase for the test", "SIGNET_VAULT": folder.file("client.vault")]
        func signet(_ arguments: [String], environment: [String: String] = [:]) async throws -> RunResult {
            try await SignetBinary.runAsync(arguments, in: folder.url, environment: vault.merging(environment) { $1 })
        }
        #expect(try await signet(["vault", "init", "--scrypt-log-n", "10", "-q"]).status == 0)

        // Relative paths are stored absolute, so the profile works from any folder.
        let added = try await signet(
            ["server", "profile", "add", "ops"] + server.connectionArguments + ["--admin-key", "admin.pem", "--server-key", "data/response-key.pem"])
        #expect(added.status == 0, "\(added)")
        let config = folder.file("xdg-config/signet/profiles.json")
        var info = stat()
        #expect(stat(config, &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(stat(folder.file("xdg-config/signet"), &info) == 0 && info.st_mode & 0o777 == 0o700)
        let stored = try String(contentsOfFile: config, encoding: .utf8)
        #expect(!stored.contains("PRIVATE KEY") && stored.contains(keys.adminPath), "\(stored)")

        let listed = try await signet(["server", "app", "list", "--profile", "ops"])
        #expect(listed.status == 0, "\(listed)")
        let enrolled = try await signet(["server", "app", "add", "ios", "--key", keys.appPath, "--profile", "ops"])
        #expect(enrolled.status == 0, "\(enrolled)")

        // SIGNET_PROFILE selects it too; a flag overrides the profile's value: another
        // response key makes every answer a forgery.
        let other = try folder.write("other.pub", try PrivateKey.generate(.ed25519).publicKey.encoded(as: .pem))
        let fromEnvironment = try await signet(["server", "user", "list"], environment: ["SIGNET_PROFILE": "ops"])
        #expect(fromEnvironment.status == 0, "\(fromEnvironment)")
        let overridden = try await signet(["server", "app", "list", "--profile", "ops", "--server-key", other])
        #expect(overridden.status == 1 && overridden.stderr.contains("not signed by the server"), "\(overridden)")

        // The app side, made the default: used when no --profile and no --server are given.
        let app = try await signet(
            ["client", "profile", "add", "phone", "--default", "--app-key", keys.appPath, "--server-key", server.responseKeyPath]
                + server.connectionArguments)
        #expect(app.status == 0 && app.stderr.contains("(the default)"), "\(app)")
        let password = try folder.write("password.txt", Array("correct horse battery staple\n".utf8))
        let registered = try await signet(["client", "register", "--email", "ann@example.com", "--display-name", "Ann", "--password-file", password])
        #expect(registered.status == 0, "\(registered)")
        // With --server the default does not apply: the flags alone must be complete.
        let bare = try await signet(["client", "me", "--server", server.url])
        #expect(bare.status == 2 && bare.stderr.contains("give --app-key"), "\(bare)")

        let list = try await signet(["client", "profile", "list"])
        #expect(list.out == "ops\t\(server.url)\nphone\t\(server.url)\t(default)\n", "\(list)")
        let shown = try await signet(["client", "profile", "show", "phone"])
        #expect(shown.status == 0 && shown.out.contains("\"appKey\" : \"\(keys.appPath)\""), "\(shown)")
        #expect(try await signet(["client", "profile", "use", "ops"]).status == 0)
        #expect(try await signet(["client", "profile", "remove", "ops"]).status == 0)
        let gone = try await signet(["server", "app", "list", "--profile", "ops"])
        #expect(gone.status == 2 && gone.stderr.contains("there is no profile \"ops\" (stored: phone)"), "\(gone)")
        // The default went with it: nothing applies, and the command says what to give.
        let noDefault = try await signet(["server", "app", "list"])
        #expect(noDefault.status == 2 && noDefault.stderr.contains("give --server URL"), "\(noDefault)")
    }

    @Test func whatAProfileRefusesToKeep() async throws {
        let folder = try TemporaryFolder(prefix: "signet-profile-refusals")
        func signet(_ arguments: [String]) throws -> RunResult { try SignetBinary.run(arguments, in: folder.url) }
        let connection = ["--server", "https://127.0.0.1:8443", "--pin", "sha256/" + String(repeating: "A", count: 43) + "="]
        let cases: [([String], String)] = [
            (["add", ".hidden"] + connection + ["--app-key", "vault:a/b"], "the profile name"),
            (["add", "x"] + connection + ["--app-key", "pkcs11:token=t;object=k?pin-value=1234"], "does not keep a PIN"),
            (["add", "x"] + connection + ["--app-key", "missing.pem"], "missing.pem: cannot be read"),
            (["add", "x", "--server", "http://127.0.0.1:8443", "--app-key", "vault:a/b"], "must be an https URL"),
            (["add", "x", "--server", "https://127.0.0.1:8443", "--pin", "nonsense", "--app-key", "vault:a/b"], "is not a pin"),
            (["add", "x", "--server", "https://127.0.0.1:8443"], "give the server's trust"),
        ]
        for (arguments, expected) in cases {
            let result = try signet(["client", "profile"] + arguments)
            #expect(result.status == 2 && result.stderr.contains(expected), "\(arguments): \(result)")
            #expect(!result.stderr.contains("1234"), "the PIN was printed: \(result)")
        }
        #expect(!FileManager.default.fileExists(atPath: folder.file("xdg-config/signet/profiles.json")), "a refused profile was stored")

        // Stored once, not replaced without --force.
        #expect(try signet(["client", "profile", "add", "x"] + connection + ["--app-key", "vault:a/b"]).status == 0)
        let again = try signet(["client", "profile", "add", "x"] + connection + ["--app-key", "vault:c/d"])
        #expect(again.status == 2 && again.stderr.contains("--force"), "\(again)")

        // A file others could have written is not trusted (it decides which server and keys are).
        let path = folder.file("xdg-config/signet/profiles.json")
        #expect(chmod(path, 0o664) == 0)
        let loose = try signet(["client", "profile", "list"])
        #expect(loose.status == 4 && loose.stderr.contains("could have been changed by another user"), "\(loose)")
        #expect(chmod(path, 0o600) == 0)
        // A damaged file is named, and left as it was.
        try Data("{\"version\": 1, \"profiles\": [".utf8).write(to: URL(fileURLWithPath: path))
        let damaged = try signet(["client", "profile", "add", "y"] + connection + ["--app-key", "vault:a/b"])
        #expect(damaged.status == 4 && damaged.stderr.contains("is not a profiles file"), "\(damaged)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data("{\"version\": 1, \"profiles\": [".utf8))
    }

    /// A profiles file edited by hand, or a folder others may write: refused, names escaped.
    @Test func whatAProfileFileMayNotHold() throws {
        let folder = try TemporaryFolder(prefix: "signet-profile-file")
        func signet(_ arguments: [String], environment: [String: String] = [:]) throws -> RunResult {
            try SignetBinary.run(arguments, in: folder.url, environment: environment)
        }
        let config = folder.file("xdg-config/signet")
        try FileManager.default.createDirectory(atPath: config, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let path = config + "/profiles.json"
        let hostile = "x\u{1B}]0;PWNED\u{07}\u{202E}"
        let file = #"{"version":1,"profiles":{"NAME":{"server":"https://127.0.0.1:8443","pins":["sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="]}}}"#
        for name in [hostile, "../../etc", ""] {
            let json = file.replacingOccurrences(of: "NAME", with: name.unicodeScalars.map { $0.value < 0x20 || $0.value > 0x7E ? String(format: "\\u%04x", $0.value) : String($0) }.joined())
            try Data(json.utf8).write(to: URL(fileURLWithPath: path))
            chmod(path, 0o600)
            let listed = try signet(["client", "profile", "list"])
            #expect(listed.status == 4 && listed.stderr.contains("which is not a profile name"), "\(name.debugDescription): \(listed)")
            TerminalText.expectClean(listed, "profile list")
        }
        for name in ["../../etc", hostile] {
            let used = try signet(["client", "profile", "use", name])
            #expect(used.status == 2, "\(used)")
            TerminalText.expectClean(used, "profile use")
        }
        // $SIGNET_PROFILE does not apply to a command given --server (it would sign with that
        // profile's keys for another server).
        try Data(file.replacingOccurrences(of: "NAME", with: "prod").utf8).write(to: URL(fileURLWithPath: path))
        let elsewhere = try signet(["client", "me", "--server", "https://127.0.0.1:1"], environment: ["SIGNET_PROFILE": "prod"])
        #expect(elsewhere.status == 2 && elsewhere.stderr.contains("give --app-key") && !elsewhere.stderr.contains("prod"), "\(elsewhere)")
        // A folder others may write in (a file could be swapped under the check).
        #expect(chmod(config, 0o777) == 0)
        let loose = try signet(["client", "profile", "list"])
        #expect(loose.status == 4 && loose.stderr.contains("must be its owner's alone"), "\(loose)")
        #expect(chmod(config, 0o700) == 0)
        // A symbolic link in its place is refused.
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: folder.file("elsewhere.json"))
        let linked = try signet(["client", "profile", "list"])
        #expect(linked.status == 4 && linked.stderr.contains("symbolic link"), "\(linked)")
    }
}
