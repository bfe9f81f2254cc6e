import Foundation
import SignetTestSupport
import Testing

extension Sandbox {
    /// `signet vault ARGUMENTS --vault PATH`, with the test passphrase in the environment unless
    /// `environment` says otherwise (`[:]`: no passphrase at all; standard input is never a terminal).
    func vaultVerb(_ path: String, _ arguments: String..., stdin: Data? = nil,
                   environment: [String: String] = VaultCommandTests.env) throws -> RunResult {
        try signet(arguments: ["vault"] + arguments + ["--vault", path], stdin: stdin, environment: environment)
    }
}

/// `signet vault` verb by verb: where the vault is, how secrets go in and come out, exit codes.
@Suite("signet vault command contract")
struct VaultCommandTests {
    static let passphrase = "correct horse battery staple"
    static let env = ["SIGNET_PASSPHRASE": passphrase]

    /// A sandbox holding a cheap (scrypt N = 2^10) passphrase vault at `v.db`.
    static func sandboxWithVault() throws -> (Sandbox, String) {
        let sandbox = try Sandbox()
        let vault = sandbox.path("v.db")
        let created = try sandbox.signet("vault", "init", "--vault", vault, "--scrypt-log-n", "10", environment: env)
        try #require(created.status == 0, "\(created)")
        return (sandbox, vault)
    }

    /// `list --json`, parsed.
    static func listed(_ sandbox: Sandbox, _ vault: String, _ extra: String...) throws -> [[String: Any]] {
        let result = try sandbox.signet(arguments: ["vault", "list", "--json", "--vault", vault] + extra, environment: [:])
        try #require(result.status == 0, "\(result)")
        return try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [[String: Any]], "\(result)")
    }

    // MARK: - init and the vault's location

    @Test("init creates the vault 0600 at --vault PATH")
    func initCreatesPrivateFile() throws {
        let (sandbox, _) = try Self.sandboxWithVault()
        #expect(sandbox.exists("v.db"))
        #expect(try sandbox.mode("v.db") == 0o600)
        #expect(!sandbox.exists("xdg-data/signet/vault.db"))
    }

    @Test("without --vault or SIGNET_VAULT the vault is $XDG_DATA_HOME/signet/vault.db; SIGNET_VAULT is honoured")
    func defaultAndEnvironmentLocation() throws {
        let sandbox = try Sandbox()
        let created = try sandbox.signet("vault", "init", "--scrypt-log-n", "10", environment: Self.env)
        #expect(created.status == 0, "\(created)")
        #expect(sandbox.exists("xdg-data/signet/vault.db"))
        #expect(try sandbox.mode("xdg-data/signet/vault.db") == 0o600)
        #expect(try sandbox.mode("xdg-data/signet") == 0o700)
        #expect(try sandbox.signet("vault", "set", "s", "a", stdin: Data("default".utf8), environment: Self.env).status == 0)
        #expect(try sandbox.vaultVerb(sandbox.path("xdg-data/signet/vault.db"), "get", "s", "a").out == "default\n")

        var withPath = Self.env
        withPath["SIGNET_VAULT"] = sandbox.path("env.db")
        #expect(try sandbox.signet("vault", "init", "--scrypt-log-n", "10", environment: withPath).status == 0)
        #expect(sandbox.exists("env.db"))
        #expect(try sandbox.signet("vault", "set", "s", "a", stdin: Data("env".utf8), environment: withPath).status == 0)
        #expect(try sandbox.signet("vault", "get", "s", "a", environment: withPath).out == "env\n")
        #expect(try sandbox.vaultVerb(sandbox.path("env.db"), "get", "s", "a").out == "env\n")
        // The default vault was not touched by the SIGNET_VAULT commands.
        #expect(try sandbox.signet("vault", "get", "s", "a", environment: Self.env).out == "default\n")
        // --vault wins over SIGNET_VAULT.
        #expect(try sandbox.signet("vault", "get", "s", "a", "--vault", sandbox.path("xdg-data/signet/vault.db"), environment: withPath).out
            == "default\n")
    }

    @Test("--vault PATH is accepted before the verb and after it")
    func vaultOptionPlacement() throws {
        let (sandbox, vault) = try Self.sandboxWithVault()
        // No default vault exists: an ignored --vault would exit 4.
        #expect(try sandbox.signet("vault", "--vault", vault, "set", "s", "a", stdin: Data("x".utf8), environment: Self.env).status == 0)
        #expect(try sandbox.signet("vault", "--vault", vault, "get", "s", "a", environment: Self.env).out == "x\n")
        #expect(try sandbox.signet("vault", "get", "s", "a", "--vault", vault, environment: Self.env).out == "x\n")
        let before = try sandbox.signet("vault", "--vault", vault, "list")
        #expect(before.status == 0, "\(before)")
        #expect(before.out.hasPrefix("SERVICE"))
        #expect(before.out.split(separator: "\n").count == 2)
        let after = try sandbox.signet("vault", "list", "--vault", vault)
        #expect(after.status == 0 && after.out == before.out, "\(after)")
        #expect(!sandbox.exists("xdg-data/signet/vault.db"))
    }

    @Test("init refuses an existing vault or file (exit 1, byte-identical), a cost below 10 and --no-passphrase alone (exit 2)")
    func initRefusals() throws {
        let (sandbox, vault) = try Self.sandboxWithVault()
        #expect(try sandbox.vaultVerb(vault, "set", "s", "a", stdin: Data("kept".utf8)).status == 0)
        let before = try sandbox.read("v.db")
        let again = try sandbox.vaultVerb(vault, "init", "--scrypt-log-n", "10", environment: ["SIGNET_PASSPHRASE": "another"])
        #expect(again.status == 1, "\(again)")
        #expect(again.stderr.contains("already exists"))
        #expect(try sandbox.read("v.db") == before)
        #expect(try sandbox.vaultVerb(vault, "get", "s", "a").out == "kept\n")

        try sandbox.write("notes.txt", "not a vault\n")
        let file = try sandbox.vaultVerb(sandbox.path("notes.txt"), "init", "--scrypt-log-n", "10")
        #expect(file.status == 1, "\(file)")
        #expect(try sandbox.readText("notes.txt") == "not a vault\n")

        let cheap = try sandbox.vaultVerb(sandbox.path("cheap.db"), "init", "--scrypt-log-n", "9")
        #expect(cheap.status == 2, "\(cheap)")
        #expect(cheap.stderr.contains("--scrypt-log-n"))
        #expect(!sandbox.exists("cheap.db"))
        let noUnlock = try sandbox.vaultVerb(sandbox.path("none.db"), "init", "--no-passphrase", "--scrypt-log-n", "10")
        #expect(noUnlock.status == 2, "\(noUnlock)")
        #expect(noUnlock.stderr.contains("--vault-key-file"))
        #expect(!sandbox.exists("none.db"))
    }

    // MARK: - set and get

    @Test("set from standard input strips exactly one trailing newline",
          arguments: [("pw\n", "pw\n"), ("pw\n\n", "pw\n\n"), ("pw", "pw\n"), (" pw \n", " pw \n")])
    func stdinNewline(input: String, printed: String) throws {
        let (sandbox, vault) = try Self.sandboxWithVault()
        let stored = try sandbox.vaultVerb(vault, "set", "svc", "acct", stdin: Data(input.utf8))
        #expect(stored.status == 0, "\(stored)")
        #expect(stored.stdout.isEmpty)
        let got = try sandbox.vaultVerb(vault, "get", "svc", "acct")
        #expect(got.status == 0, "\(got)")
        #expect(got.stdout == Data(printed.utf8))
    }

    @Test("set --secret-file; get prints exactly the secret and a newline; a missing item exits 1")
    func secretFileAndGet() throws {
        let (sandbox, vault) = try Self.sandboxWithVault()
        let secret = "p@ss wörd\twith spaces"
        try sandbox.write("secret.txt", secret + "\n")
        #expect(try sandbox.vaultVerb(vault, "set", "svc", "acct", "--secret-file", "secret.txt").status == 0)
        let got = try sandbox.vaultVerb(vault, "get", "svc", "acct")
        #expect(got.status == 0, "\(got)")
        #expect(got.stdout == Data((secret + "\n").utf8))
        #expect(!got.stderr.contains(secret))

        let missing = try sandbox.vaultVerb(vault, "get", "svc", "nobody")
        #expect(missing.status == 1, "\(missing)")
        #expect(missing.stdout.isEmpty)
        #expect(missing.stderr.contains("no item"))
        #expect(try sandbox.vaultVerb(vault, "get", "other", "acct").status == 1)
    }

    @Test("set replaces the secret and keeps the creation date; --no-replace exits 1")
    func replace() throws {
        let (sandbox, vault) = try Self.sandboxWithVault()
        #expect(try sandbox.vaultVerb(vault, "set", "svc", "acct", "--label", "kept label", stdin: Data("one".utf8)).status == 0)
        let first = try #require(try Self.listed(sandbox, vault).first)
        Thread.sleep(forTimeInterval: 0.02)
        let replaced = try sandbox.vaultVerb(vault, "set", "svc", "acct", stdin: Data("two".utf8))
        #expect(replaced.status == 0, "\(replaced)")
        #expect(try sandbox.vaultVerb(vault, "get", "svc", "acct").out == "two\n")
        let items = try Self.listed(sandbox, vault)
        #expect(items.count == 1)
        let created = try #require(items.first?["created"] as? String)
        let modified = try #require(items.first?["modified"] as? String)
        #expect(created == first["created"] as? String)
        #expect(modified >= created)
        #expect(modified > (first["modified"] as? String ?? ""))
        // The label survives a replace that gives no new one.
        let shown = try sandbox.vaultVerb(vault, "show", "svc", "acct", "--json")
        let object = try #require(try JSONSerialization.jsonObject(with: shown.stdout) as? [String: Any], "\(shown)")
        #expect(object["label"] as? String == "kept label")

        let refused = try sandbox.vaultVerb(vault, "set", "svc", "acct", "--no-replace", stdin: Data("three".utf8))
        #expect(refused.status == 1, "\(refused)")
        #expect(try sandbox.vaultVerb(vault, "get", "svc", "acct").out == "two\n")
        #expect(try sandbox.vaultVerb(vault, "set", "svc", "new", "--no-replace", stdin: Data("n".utf8)).status == 0)
    }

    @Test("empty, oversized and misnamed secrets are usage errors (exit 2) and store nothing")
    func usageErrors() throws {
        let (sandbox, vault) = try Self.sandboxWithVault()
        #expect(try sandbox.vaultVerb(vault, "set", "s", "empty", stdin: Data()).status == 2)
        #expect(try sandbox.vaultVerb(vault, "set", "s", "newline", stdin: Data("\n".utf8)).status == 2)
        let big = Data(repeating: UInt8(ascii: "a"), count: 64 * 1024 + 1)
        let tooBig = try sandbox.vaultVerb(vault, "set", "s", "big", stdin: big)
        #expect(tooBig.status == 2, "\(tooBig)")
        #expect(tooBig.stderr.contains("64 KiB"))
        try sandbox.write("big.txt", big)
        #expect(try sandbox.vaultVerb(vault, "set", "s", "bigfile", "--secret-file", "big.txt").status == 2)
        let longService = try sandbox.vaultVerb(vault, "set", String(repeating: "s", count: 257), "a", stdin: Data("x".utf8))
        #expect(longService.status == 2, "\(longService)")
        #expect(try sandbox.vaultVerb(vault, "set", "s", String(repeating: "a", count: 257), stdin: Data("x".utf8)).status == 2)
        #expect(try Self.listed(sandbox, vault).isEmpty)
        // The limits themselves are accepted.
        let limit = Data(repeating: UInt8(ascii: "b"), count: 64 * 1024)
        #expect(try sandbox.vaultVerb(vault, "set", String(repeating: "s", count: 256), "a", stdin: limit).status == 0)
        #expect(try sandbox.vaultVerb(vault, "get", String(repeating: "s", count: 256), "a").stdout == limit + Data("\n".utf8))
    }

    @Test("--label, --comment and --attribute show up in show --json; --attribute without '=' exits 2")
    func details() throws {
        let (sandbox, vault) = try Self.sandboxWithVault()
        let stored = try sandbox.vaultVerb(
            vault, "set", "svc", "acct", "--label", "CI token", "--comment", "rotates monthly",
            "--attribute", "url=https://x.example/?a=b", "--attribute", "team=infra", stdin: Data("s".utf8))
        #expect(stored.status == 0, "\(stored)")
        let shown = try sandbox.vaultVerb(vault, "show", "svc", "acct", "--json")
        #expect(shown.status == 0, "\(shown)")
        let object = try #require(try JSONSerialization.jsonObject(with: shown.stdout) as? [String: Any], "\(shown)")
        #expect(object["service"] as? String == "svc")
        #expect(object["account"] as? String == "acct")
        #expect(object["kind"] as? String == "password")
        #expect(object["label"] as? String == "CI token")
        #expect(object["comment"] as? String == "rotates monthly")
        #expect(object["attributes"] as? [String: String] == ["url": "https://x.example/?a=b", "team": "infra"])
        #expect(!shown.out.contains("\"s\""))  // the secret is not shown

        for bad in ["bad", "=value"] {
            let refused = try sandbox.vaultVerb(vault, "set", "svc", "other", "--attribute", bad, stdin: Data("s".utf8))
            #expect(refused.status == 2, "\(bad): \(refused)")
            #expect(refused.stderr.contains("NAME=VALUE"))
        }
        #expect(try sandbox.vaultVerb(vault, "get", "svc", "other").status == 1)
    }

    // MARK: - delete, list, rename

    @Test("delete needs no passphrase; the item is gone; deleting a missing item exits 1")
    func delete() throws {
        let (sandbox, vault) = try Self.sandboxWithVault()
        #expect(try sandbox.vaultVerb(vault, "set", "s", "a", stdin: Data("x".utf8)).status == 0)
        #expect(try sandbox.vaultVerb(vault, "set", "s", "b", stdin: Data("y".utf8)).status == 0)
        let deleted = try sandbox.vaultVerb(vault, "delete", "s", "a", environment: [:])
        #expect(deleted.status == 0, "\(deleted)")
        #expect(try sandbox.vaultVerb(vault, "get", "s", "a").status == 1)
        #expect(try sandbox.vaultVerb(vault, "get", "s", "b").out == "y\n")
        let again = try sandbox.vaultVerb(vault, "delete", "s", "a", environment: [:])
        #expect(again.status == 1, "\(again)")
        #expect(again.stderr.contains("no item"))
    }

    @Test("list, list --json and list --service need no passphrase; an empty vault lists nothing")
    func list() throws {
        let (sandbox, vault) = try Self.sandboxWithVault()
        let empty = try sandbox.vaultVerb(vault, "list", environment: [:])
        #expect(empty.status == 0, "\(empty)")
        #expect(empty.stdout.isEmpty)
        #expect(try Self.listed(sandbox, vault).isEmpty)
        for (service, account) in [("b.example", "x"), ("a.example", "y"), ("a.example", "x")] {
            #expect(try sandbox.vaultVerb(vault, "set", service, account, stdin: Data("s".utf8)).status == 0)
        }
        let table = try sandbox.vaultVerb(vault, "list", environment: [:])
        #expect(table.status == 0, "\(table)")
        let lines = table.out.split(separator: "\n")
        #expect(lines.first?.split(separator: " ") == ["SERVICE", "ACCOUNT", "KIND", "MODIFIED"])
        let rows = lines.dropFirst().map { $0.split(separator: " ").prefix(3).joined(separator: " ") }
        #expect(rows == ["a.example x password", "a.example y password", "b.example x password"])

        let items = try Self.listed(sandbox, vault)
        #expect(items.count == 3)
        for item in items {
            #expect(item["kind"] as? String == "password")
            #expect(item["service"] is String && item["account"] is String)
            #expect(item["created"] is String && item["modified"] is String)
        }
        #expect(items.map { "\($0["service"] as? String ?? "")/\($0["account"] as? String ?? "")" }
            == ["a.example/x", "a.example/y", "b.example/x"])
        let filtered = try Self.listed(sandbox, vault, "--service", "a.example")
        #expect(filtered.map { $0["account"] as? String } == ["x", "y"])
        #expect(filtered.allSatisfy { $0["service"] as? String == "a.example" })
        #expect(try Self.listed(sandbox, vault, "--service", "nothing").isEmpty)
        let filteredTable = try sandbox.vaultVerb(vault, "list", "--service", "b.example", environment: [:])
        #expect(filteredTable.out.split(separator: "\n").count == 2, "\(filteredTable)")
    }

    @Test("rename moves the item; renaming onto an existing item exits 1")
    func rename() throws {
        let (sandbox, vault) = try Self.sandboxWithVault()
        #expect(try sandbox.vaultVerb(vault, "set", "old", "a", stdin: Data("moved".utf8)).status == 0)
        #expect(try sandbox.vaultVerb(vault, "set", "taken", "b", stdin: Data("stays".utf8)).status == 0)
        let renamed = try sandbox.vaultVerb(vault, "rename", "old", "a", "new", "c")
        #expect(renamed.status == 0, "\(renamed)")
        #expect(try sandbox.vaultVerb(vault, "get", "old", "a").status == 1)
        #expect(try sandbox.vaultVerb(vault, "get", "new", "c").out == "moved\n")
        let clash = try sandbox.vaultVerb(vault, "rename", "new", "c", "taken", "b")
        #expect(clash.status == 1, "\(clash)")
        #expect(try sandbox.vaultVerb(vault, "get", "taken", "b").out == "stays\n")
        #expect(try sandbox.vaultVerb(vault, "get", "new", "c").out == "moved\n")
        #expect(try sandbox.vaultVerb(vault, "rename", "nobody", "x", "y", "z").status == 1)
    }

    // MARK: - credentials

    @Test("wrong passphrase exits 1; no passphrase and no terminal exits 4; a missing vault exits 4")
    func credentials() throws {
        let (sandbox, vault) = try Self.sandboxWithVault()
        #expect(try sandbox.vaultVerb(vault, "set", "s", "a", stdin: Data("x".utf8)).status == 0)
        let wrong = try sandbox.vaultVerb(vault, "get", "s", "a", environment: ["SIGNET_PASSPHRASE": "not it"])
        #expect(wrong.status == 1, "\(wrong)")
        #expect(wrong.stderr.contains("wrong passphrase"))
        #expect(wrong.stdout.isEmpty)
        let none = try sandbox.vaultVerb(vault, "get", "s", "a", environment: [:])
        #expect(none.status == 4, "\(none)")
        #expect(none.stdout.isEmpty)
        #expect(try sandbox.vaultVerb(vault, "set", "s", "b", stdin: Data("y".utf8), environment: [:]).status == 4)
        try sandbox.write("pass.txt", Self.passphrase + "\n")
        #expect(try sandbox.vaultVerb(vault, "get", "s", "a", "--passphrase-file", "pass.txt", environment: [:]).out == "x\n")

        let missing = try sandbox.vaultVerb(sandbox.path("absent.db"), "get", "s", "a")
        #expect(missing.status == 4, "\(missing)")
        #expect(missing.stderr.contains("no vault there"))
        #expect(try sandbox.vaultVerb(sandbox.path("absent.db"), "list", environment: [:]).status == 4)
        #expect(!sandbox.exists("absent.db"))
    }

    @Test("key-file vaults: init writes a 32-byte 0600 key file; the key file is required, from the option or the environment")
    func keyFiles() throws {
        let sandbox = try Sandbox()
        let vault = sandbox.path("k.db")
        let created = try sandbox.vaultVerb(vault, "init", "--vault-key-file", "vault.key", "--no-passphrase", environment: [:])
        #expect(created.status == 0, "\(created)")
        #expect(try sandbox.read("vault.key").count == 32)
        #expect(try sandbox.mode("vault.key") == 0o600)
        #expect(try sandbox.mode("k.db") == 0o600)
        #expect(try sandbox.vaultVerb(vault, "set", "s", "a", "--vault-key-file", "vault.key", stdin: Data("x".utf8), environment: [:]).status == 0)
        let without = try sandbox.vaultVerb(vault, "get", "s", "a", environment: [:])
        #expect(without.status == 4, "\(without)")
        #expect(without.stderr.contains("--vault-key-file"))
        #expect(try sandbox.vaultVerb(vault, "get", "s", "a", "--vault-key-file", "vault.key", environment: [:]).out == "x\n")
        #expect(try sandbox.vaultVerb(vault, "get", "s", "a", environment: ["SIGNET_VAULT_KEY_FILE": sandbox.path("vault.key")]).out == "x\n")
        try sandbox.write("other.key", Data(repeating: 7, count: 32))
        #expect(try sandbox.vaultVerb(vault, "get", "s", "a", "--vault-key-file", "other.key", environment: [:]).status == 1)

        let both = sandbox.path("both.db")
        #expect(try sandbox.vaultVerb(both, "init", "--vault-key-file", "vault.key", "--scrypt-log-n", "10").status == 0)
        #expect(try sandbox.vaultVerb(both, "set", "s", "a", "--vault-key-file", "vault.key", stdin: Data("y".utf8)).status == 0)
        #expect(try sandbox.vaultVerb(both, "get", "s", "a").status == 4)
        #expect(try sandbox.vaultVerb(both, "get", "s", "a", "--vault-key-file", "vault.key", environment: [:]).status == 4)
        #expect(try sandbox.vaultVerb(both, "get", "s", "a", "--vault-key-file", "vault.key").out == "y\n")
        #expect(try sandbox.vaultVerb(both, "get", "s", "a", "--vault-key-file", "other.key").status == 1)
    }

    @Test("passwd: the new passphrase from --new-passphrase-file replaces the old; SIGNET_PASSPHRASE is never the new one")
    func passwd() throws {
        let (sandbox, vault) = try Self.sandboxWithVault()
        #expect(try sandbox.vaultVerb(vault, "set", "s", "a", stdin: Data("kept".utf8)).status == 0)
        let noNew = try sandbox.vaultVerb(vault, "passwd", "--scrypt-log-n", "10")
        #expect(noNew.status == 4, "\(noNew)")
        #expect(noNew.stderr.contains("--new-passphrase-file"))
        #expect(try sandbox.vaultVerb(vault, "get", "s", "a").out == "kept\n")  // unchanged

        try sandbox.write("new.txt", "the new passphrase\n")
        let changed = try sandbox.vaultVerb(vault, "passwd", "--new-passphrase-file", "new.txt", "--scrypt-log-n", "10")
        #expect(changed.status == 0, "\(changed)")
        let old = try sandbox.vaultVerb(vault, "get", "s", "a")
        #expect(old.status == 1, "\(old)")
        #expect(old.stderr.contains("wrong passphrase"))
        #expect(try sandbox.vaultVerb(vault, "get", "s", "a", environment: ["SIGNET_PASSPHRASE": "the new passphrase"]).out == "kept\n")
        #expect(try sandbox.vaultVerb(vault, "get", "s", "a", "--passphrase-file", "new.txt", environment: [:]).out == "kept\n")
    }
}
