import Foundation
import Testing

/// `signet vault …` end to end: the contract the issue states, verb by verb.
@Suite("signet vault")
struct VaultCLITests {
    static let env = ["SIGNET_PASSPHRASE": "vault test passphrase"]

    /// A sandbox with a cheap vault at `v.db`.
    static func sandboxWithVault() throws -> (Sandbox, String) {
        let sandbox = try Sandbox()
        let vault = sandbox.path("v.db")
        let created = try sandbox.signet("vault", "init", "--vault", vault, "--scrypt-log-n", "10", "-q", environment: env)
        try #require(created.status == 0, "\(created)")
        return (sandbox, vault)
    }

    @Test("init: 0600, refuses an existing vault or file untouched (exit 1), default location")
    func initContract() throws {
        let (sandbox, vault) = try Self.sandboxWithVault()
        #expect(try sandbox.mode("v.db") == 0o600)
        let before = try sandbox.read("v.db")
        let again = try sandbox.signet("vault", "init", "--vault", vault, "--scrypt-log-n", "10", environment: Self.env)
        #expect(again.status == 1)
        #expect(again.stderr.contains("already exists"))
        #expect(try sandbox.read("v.db") == before)
        try sandbox.write("other.txt", "not a vault")
        #expect(try sandbox.signet("vault", "init", "--vault", sandbox.path("other.txt"), "--scrypt-log-n", "10", environment: Self.env).status == 1)
        #expect(try sandbox.readText("other.txt") == "not a vault")
        // Default: $XDG_DATA_HOME/signet/vault.db (the sandbox points XDG_DATA_HOME inside itself).
        #expect(try sandbox.signet("vault", "init", "--scrypt-log-n", "10", "-q", environment: Self.env).status == 0)
        #expect(sandbox.exists("xdg-data/signet/vault.db"))
        // $SIGNET_VAULT wins over the default.
        var withPath = Self.env
        withPath["SIGNET_VAULT"] = sandbox.path("env.db")
        #expect(try sandbox.signet("vault", "init", "--scrypt-log-n", "10", "-q", environment: withPath).status == 0)
        #expect(sandbox.exists("env.db"))
        #expect(try sandbox.signet("vault", "init", "--vault", sandbox.path("x.db"), "--scrypt-log-n", "9", environment: Self.env).status == 2)
        #expect(try sandbox.signet("vault", "init", "--vault", sandbox.path("y.db"), "--no-passphrase", environment: Self.env).status == 2)
    }

    @Test("set and get: stdin with one newline stripped, exactly the secret and a newline out")
    func setGet() throws {
        let (sandbox, vault) = try Self.sandboxWithVault()
        #expect(try sandbox.signet("vault", "set", "api", "bot", "--vault", vault, stdin: Data("pw\n".utf8), environment: Self.env).status == 0)
        let got = try sandbox.signet("vault", "get", "api", "bot", "--vault", vault, environment: Self.env)
        #expect(got.status == 0)
        #expect(got.stdout == Data("pw\n".utf8))
        #expect(try sandbox.signet("vault", "set", "api", "two", "--vault", vault, stdin: Data("pw\n\n".utf8), environment: Self.env).status == 0)
        #expect(try sandbox.signet("vault", "get", "api", "two", "--vault", vault, environment: Self.env).stdout == Data("pw\n\n".utf8))
        let file = try sandbox.write("secret.txt", "from a file")
        #expect(try sandbox.signet("vault", "set", "api", "file", "--secret-file", file, "--vault", vault, environment: Self.env).status == 0)
        #expect(try sandbox.signet("vault", "get", "api", "file", "--vault", vault, environment: Self.env).out == "from a file\n")
        // --vault before the verb too.
        #expect(try sandbox.signet("vault", "--vault", vault, "get", "api", "file", environment: Self.env).out == "from a file\n")
        let missing = try sandbox.signet("vault", "get", "api", "nobody", "--vault", vault, environment: Self.env)
        #expect(missing.status == 1)
        #expect(missing.stdout.isEmpty)
        #expect(try sandbox.signet("vault", "set", "api", "empty", "--vault", vault, stdin: Data("\n".utf8), environment: Self.env).status == 2)
        #expect(try sandbox.signet("vault", "set", "api", "big", "--vault", vault, stdin: Data(count: 65537), environment: Self.env).status == 2)
        // Exactly 64 KiB is accepted, also with the line ending that is stripped.
        let atLimit = Data(repeating: 0x61, count: 65536) + Data("\r\n".utf8)
        #expect(try sandbox.signet("vault", "set", "api", "max", "--vault", vault, stdin: atLimit, environment: Self.env).status == 0)
        #expect(try sandbox.signet("vault", "get", "api", "max", "--vault", vault, environment: Self.env).stdout.count == 65537)
        #expect(try sandbox.signet(
            "vault", "set", String(repeating: "s", count: 257), "a", "--vault", vault, stdin: Data("x".utf8), environment: Self.env).status == 2)
        // The secret is never an argument.
        #expect(try sandbox.signet("vault", "set", "api", "bot", "s3cret", "--vault", vault, environment: Self.env).status == 2)
    }

    @Test("replace keeps the creation date; --no-replace refuses; details show in show --json")
    func replaceAndDetails() throws {
        let (sandbox, vault) = try Self.sandboxWithVault()
        #expect(try sandbox.signet(
            "vault", "set", "svc", "acct", "--label", "CI token", "--comment", "rotates monthly", "--attribute", "url=https://x.example",
            "--vault", vault, stdin: Data("one".utf8), environment: Self.env).status == 0)
        Thread.sleep(forTimeInterval: 0.01)
        #expect(try sandbox.signet("vault", "set", "svc", "acct", "--vault", vault, stdin: Data("two".utf8), environment: Self.env).status == 0)
        #expect(try sandbox.signet("vault", "get", "svc", "acct", "--vault", vault, environment: Self.env).out == "two\n")
        let shown = try sandbox.signet("vault", "show", "svc", "acct", "--json", "--vault", vault, environment: Self.env)
        let object = try #require(try JSONSerialization.jsonObject(with: shown.stdout) as? [String: Any])
        #expect(object["label"] as? String == "CI token")
        #expect(object["comment"] as? String == "rotates monthly")
        #expect((object["attributes"] as? [String: String])?["url"] == "https://x.example")
        let created = try #require(object["created"] as? String)
        let modified = try #require(object["modified"] as? String)
        #expect(created < modified)
        let refused = try sandbox.signet("vault", "set", "svc", "acct", "--no-replace", "--vault", vault, stdin: Data("3".utf8), environment: Self.env)
        #expect(refused.status == 1)
        #expect(try sandbox.signet("vault", "set", "svc", "b", "--attribute", "bad", "--vault", vault, stdin: Data("3".utf8), environment: Self.env).status == 2)
    }

    @Test("list, list --service, list --json need no passphrase; delete and rename")
    func listDeleteRename() throws {
        let (sandbox, vault) = try Self.sandboxWithVault()
        for (service, account) in [("b.example", "x"), ("a.example", "y"), ("a.example", "x")] {
            #expect(try sandbox.signet("vault", "set", service, account, "--vault", vault, stdin: Data("s".utf8), environment: Self.env).status == 0)
        }
        let table = try sandbox.signet("vault", "list", "--vault", vault)
        #expect(table.status == 0, "\(table)")
        let rows = table.out.split(separator: "\n").dropFirst().map { $0.split(separator: " ").prefix(2).joined(separator: "/") }
        #expect(rows == ["a.example/x", "a.example/y", "b.example/x"])
        let json = try sandbox.signet("vault", "list", "--json", "--service", "a.example", "--vault", vault)
        let items = try #require(try JSONSerialization.jsonObject(with: json.stdout) as? [[String: Any]])
        #expect(items.map { $0["account"] as? String } == ["x", "y"])
        #expect(items.allSatisfy { $0["kind"] as? String == "password" && $0["created"] is String && $0["label"] == nil })
        #expect(try sandbox.signet("vault", "delete", "a.example", "y", "--vault", vault).status == 0)
        #expect(try sandbox.signet("vault", "delete", "a.example", "y", "--vault", vault).status == 1)
        #expect(try sandbox.signet("vault", "rename", "a.example", "x", "c.example", "z", "--vault", vault, environment: Self.env).status == 0)
        #expect(try sandbox.signet("vault", "get", "a.example", "x", "--vault", vault, environment: Self.env).status == 1)
        #expect(try sandbox.signet("vault", "get", "c.example", "z", "--vault", vault, environment: Self.env).out == "s\n")
        #expect(try sandbox.signet("vault", "rename", "c.example", "z", "b.example", "x", "--vault", vault, environment: Self.env).status == 1)
        let empty = try Sandbox()
        let emptyVault = empty.path("e.db")
        #expect(try empty.signet("vault", "init", "--vault", emptyVault, "--scrypt-log-n", "10", environment: Self.env).status == 0)
        let none = try empty.signet("vault", "list", "--vault", emptyVault)
        #expect(none.status == 0 && none.stdout.isEmpty)
    }

    @Test("wrong, missing and unasked-for credentials; a missing vault")
    func credentials() throws {
        let (sandbox, vault) = try Self.sandboxWithVault()
        #expect(try sandbox.signet("vault", "set", "s", "a", "--vault", vault, stdin: Data("x".utf8), environment: Self.env).status == 0)
        let wrong = try sandbox.signet("vault", "get", "s", "a", "--vault", vault, environment: ["SIGNET_PASSPHRASE": "nope"])
        #expect(wrong.status == 1)
        #expect(wrong.stderr.contains("wrong passphrase"))
        let none = try sandbox.signet("vault", "get", "s", "a", "--vault", vault)
        #expect(none.status == 4)
        let missing = try sandbox.signet("vault", "list", "--vault", sandbox.path("absent.db"))
        #expect(missing.status == 4)
        #expect(missing.stderr.contains("no vault there"))
        let keyFile = try sandbox.write("k", String(repeating: "k", count: 32))
        #expect(try sandbox.signet("vault", "get", "s", "a", "--vault", vault, "--vault-key-file", keyFile, environment: Self.env).status == 4)
    }

    @Test("key-file vaults: init creates the key file; get needs it; passphrase+keyfile needs both")
    func keyFiles() throws {
        let sandbox = try Sandbox()
        let vault = sandbox.path("k.db")
        let key = sandbox.path("vault.key")
        #expect(try sandbox.signet("vault", "init", "--vault", vault, "--vault-key-file", key, "--no-passphrase").status == 0)
        #expect(try sandbox.read("vault.key").count == 32)
        #expect(try sandbox.mode("vault.key") == 0o600)
        #expect(try sandbox.signet("vault", "set", "s", "a", "--vault", vault, "--vault-key-file", key, stdin: Data("x".utf8)).status == 0)
        let without = try sandbox.signet("vault", "get", "s", "a", "--vault", vault)
        #expect(without.status == 4)
        #expect(without.stderr.contains("--vault-key-file"))
        #expect(try sandbox.signet("vault", "get", "s", "a", "--vault", vault, environment: ["SIGNET_VAULT_KEY_FILE": key]).out == "x\n")
        let both = sandbox.path("both.db")
        #expect(try sandbox.signet("vault", "init", "--vault", both, "--vault-key-file", key, "--scrypt-log-n", "10", environment: Self.env).status == 0)
        #expect(try sandbox.signet("vault", "set", "s", "a", "--vault", both, "--vault-key-file", key, stdin: Data("y".utf8), environment: Self.env).status == 0)
        #expect(try sandbox.signet("vault", "get", "s", "a", "--vault", both, environment: Self.env).status == 4)
        #expect(try sandbox.signet("vault", "get", "s", "a", "--vault", both, "--vault-key-file", key).status == 4)
        #expect(try sandbox.signet("vault", "get", "s", "a", "--vault", both, "--vault-key-file", key, environment: Self.env).out == "y\n")
    }

    @Test("passwd: the new passphrase works, the old one no longer; SIGNET_PASSPHRASE is never the new one")
    func passwd() throws {
        let (sandbox, vault) = try Self.sandboxWithVault()
        #expect(try sandbox.signet("vault", "set", "s", "a", "--vault", vault, stdin: Data("kept".utf8), environment: Self.env).status == 0)
        let noNew = try sandbox.signet("vault", "passwd", "--vault", vault, "--scrypt-log-n", "10", environment: Self.env)
        #expect(noNew.status == 4, "\(noNew)")
        let newFile = try sandbox.write("new.txt", "the new passphrase\n")
        #expect(try sandbox.signet(
            "vault", "passwd", "--vault", vault, "--new-passphrase-file", newFile, "--scrypt-log-n", "10", environment: Self.env).status == 0)
        #expect(try sandbox.signet("vault", "get", "s", "a", "--vault", vault, environment: Self.env).status == 1)
        let now = try sandbox.signet("vault", "get", "s", "a", "--vault", vault, environment: ["SIGNET_PASSPHRASE": "the new passphrase"])
        #expect(now.out == "kept\n")
    }
}
