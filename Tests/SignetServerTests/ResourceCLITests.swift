import Foundation
import SignetBundle
import SignetCore
import SignetServer
import SignetTestSupport
import Testing

/// `signet server resource|trust` and `signet client fetch` against a real `signet serve`: the
/// operator's and the app's side from a shell, with the exit codes scripts rely on.
@Suite struct ResourceCLITests {
    @Test func publishFetchRotateFromTheShell() async throws {
        let folder = try TemporaryFolder(prefix: "signet-resource-cli")
        let keys = try ServerKeys.initialise(in: folder)
        let server = try await ServeProcess.start(in: folder)
        defer { _ = server.process.stop() }
        try await keys.enrolApp(on: server)
        #expect(folder.exists("data/trust.json"), "serve writes the trust root apps ship")
        let admin = server.adminArguments + ["--admin-key", keys.adminPath]
        let app = server.connectionArguments + ["--app-key", keys.appPath, "--server-key", folder.file("data/response-key.pem")]
        let fetch = ["client", "fetch", "config", folder.file("dest"), "--trust", folder.file("data/trust.json"), "--state", folder.file("state")] + app
        func signet(_ arguments: [String], environment: [String: String] = [:]) async throws -> RunResult {
            try await SignetBinary.runAsync(arguments, in: folder.url, environment: environment)
        }

        let v1 = try ResourceFixtures.tar(["settings.json": Array(#"{"theme":"dark"}"#.utf8)], in: folder, name: "v1")
        _ = try folder.write("v1.tar", v1)
        let published = try await signet(["server", "resource", "publish", "config", folder.file("v1.tar")] + admin)
        #expect(published.status == 0, "\(published)")
        #expect(published.out.hasPrefix("config\t1\t"), "\(published.out)")
        let fetched = try await signet(fetch)
        #expect(fetched.status == 0, "\(fetched)")
        #expect(fetched.out == "config\t1\tupdated\n")
        #expect(try folder.readText("dest/settings.json") == #"{"theme":"dark"}"#)
        let again = try await signet(fetch)
        #expect(again.out == "config\t1\tunchanged\n", "\(again)")
        let listed = try await signet(["server", "resource", "list", "--json"] + admin)
        #expect(listed.status == 0 && listed.out.contains("\"signedBy\" : \"server\""), "\(listed)")

        // A hostile tar (a symbolic link) is refused by the server: exit 1, nothing stored.
        try FileManager.default.createDirectory(atPath: folder.file("evil"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: folder.file("evil/passwd"), withDestinationPath: "/etc/passwd")
        let tarred = try ProcessRunner.run("/usr/bin/env", ["tar", "-C", folder.file("evil"), "-cf", folder.file("evil.tar"), "."])
        #expect(tarred.status == 0)
        let hostile = try await signet(["server", "resource", "publish", "config", folder.file("evil.tar")] + admin)
        #expect(hostile.status == 1, "\(hostile)")
        #expect(hostile.stderr.contains("symbolic link"), "\(hostile.stderr)")
        #expect(try await signet(["server", "resource", "list"] + admin).out.split(separator: "\n").count == 1)

        // The operator rotates the trust root with the server's own key (in its vault) to a new
        // offline key; publishes signed by that key only; the app walks to the new root.
        let offline = try PrivateKey.generate(.ed25519)
        let offlinePath = try folder.write("offline.pem", try offline.encoded(as: .pem))
        let offlinePublic = try folder.write("offline.pub", try offline.publicKey.encoded(as: .pem))
        let vault = ["SIGNET_VAULT": folder.file("data/server.vault"), "SIGNET_VAULT_KEY_FILE": folder.file("data/server.vault.key")]
        let rotated = try await signet([
            "bundle", "trust", "rotate", "--trust", folder.file("data/trust.json"), "--key", offlinePublic,
            "--sign", "vault:signet-server/response-signing", "-o", folder.file("trust-2.json"),
        ], environment: vault)
        #expect(rotated.status == 0, "\(rotated)")
        let sent = try await signet(["server", "trust", "rotate", folder.file("trust-2.json")] + admin)
        #expect(sent.status == 0, "\(sent)")
        let resent = try await signet(["server", "trust", "rotate", folder.file("data/trust.json")] + admin)
        #expect(resent.status == 1, "an older root is refused: \(resent)")
        // The server's own key is no longer in the root: a tar publish is refused (409 → exit 1).
        let refusedTar = try await signet(["server", "resource", "publish", "config", folder.file("v1.tar")] + admin)
        #expect(refusedTar.status == 1 && refusedTar.stderr.contains("signed offline"), "\(refusedTar)")
        _ = try folder.write("v2/settings.json", Array(#"{"theme":"light"}"#.utf8))
        let bundled = try await signet([
            "bundle", "create", "--name", "config", "--version", "2", "--key", offlinePath, "-o", folder.file("v2.bundle"), folder.file("v2"),
        ])
        #expect(bundled.status == 0, "\(bundled)")
        #expect(try await signet(["server", "resource", "publish", "config", folder.file("v2.bundle")] + admin).status == 0)
        let walked = try await signet(fetch)
        #expect(walked.out == "config\t2\tupdated\n", "\(walked)")
        #expect(try folder.readText("dest/settings.json") == #"{"theme":"light"}"#)
        #expect(try TrustRoot.load(path: folder.file("state/.trust.json")).version == 2)

        // Usage and environment errors: no trust file (exit 4), a name that is not one (2).
        let noTrust = try await signet(["client", "fetch", "config", folder.file("dest"), "--trust", folder.file("missing.json")] + app)
        #expect(noTrust.status != 0 && noTrust.status != 1, "\(noTrust)")
        let badName = try await signet(["client", "fetch", "../config", folder.file("dest"), "--trust", folder.file("data/trust.json"), "--state", folder.file("state")] + app)
        #expect(badName.status == 2, "\(badName)")
        #expect(try folder.readText("dest/settings.json") == #"{"theme":"light"}"#)
    }
}
