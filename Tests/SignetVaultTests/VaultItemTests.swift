import Foundation
import SignetCore
import SignetTestSupport
import Testing
@testable import SignetVault

/// Creating a vault, and storing, reading, listing, renaming and deleting items.
@Suite struct VaultItemTests {
    // MARK: Creating

    @Test("create makes a 0600 file, leaves no temporary behind, and returns the vault unlocked")
    func createMode() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/test.vault"
        let vault = try VaultTest.newVault(at: path)
        #expect(VaultTest.permissions(path) == 0o600)
        let locked = await vault.isLocked
        #expect(!locked)
        #expect(vault.path == path)
        let method = await vault.unlockMethod
        #expect(method == .passphrase)

        try await vault.set(secret("x"), service: "s", account: "a")
        // SQLite gives its -wal and -shm files the mode of the database file.
        for suffix in ["-wal", "-shm"] where VaultTest.exists(path + suffix) {
            #expect(VaultTest.permissions(path + suffix) == 0o600, "\(suffix)")
        }
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix(".") }
        #expect(leftovers.isEmpty, "temporary files left: \(leftovers)")
    }

    @Test("create on an existing file refuses and leaves it byte for byte")
    func createOverFile() throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/test.vault"
        let original = Array("precious data, not a vault\n".utf8) + [0, 1, 2, 255]
        try VaultTest.write(original, to: path)

        let error = try VaultTest.thrown { try VaultTest.newVault(at: path) }
        #expect(error == .vaultExists(path: path))
        #expect(error.category == .checkFailed)
        #expect(try VaultTest.contents(path) == original)
        #expect(!VaultTest.exists(path + "-wal"))
    }

    @Test("create on an existing vault refuses; the vault keeps its passphrase and items")
    func createOverVault() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/test.vault"
        let first = try VaultTest.newVault(at: path)
        try await first.set(secret("kept"), service: "s", account: "a")

        let error = try VaultTest.thrown { try VaultTest.newVault(at: path, credentials: passphrase("another one")) }
        #expect(error == .vaultExists(path: path))
        let reopened = try Vault(path: path, credentials: passphrase())
        let kept = try await reopened.password(service: "s", account: "a")
        #expect(kept == "kept")
    }

    @Test("create on a directory or a dangling symbolic link refuses")
    func createOverOtherThings() throws {
        let folder = try TemporaryFolder()
        let directory = folder.path + "/dir"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        let overDirectory = try VaultTest.thrown { try VaultTest.newVault(at: directory) }
        #expect(overDirectory == .vaultExists(path: directory))

        let link = folder.path + "/link.vault"
        let target = folder.path + "/nowhere.vault"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let overLink = try VaultTest.thrown { try VaultTest.newVault(at: link) }
        #expect(overLink == .vaultExists(path: link))
        #expect(!VaultTest.exists(target), "the link's target must not be created")
    }

    @Test("create refuses when a journal file exists without its vault", arguments: ["-wal", "-shm", "-journal"])
    func createWithStaleJournal(suffix: String) throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/test.vault"
        let stale = Array("stale \(suffix) content".utf8)
        try VaultTest.write(stale, to: path + suffix)

        let error = try VaultTest.thrown { try VaultTest.newVault(at: path) }
        VaultTest.check(error, is: "io", mentioning: path + suffix)
        #expect(!VaultTest.exists(path), "no vault may be created next to a stale journal")
        #expect(try VaultTest.contents(path + suffix) == stale)
    }

    // MARK: Writing and reading

    @Test("set then get")
    func roundTrip() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/test.vault"
        let vault = try VaultTest.newVault(at: path)
        let before = Date()
        try await vault.set(secret("s3cret"), service: "api.example.com", account: "bot")
        let after = Date()

        let got = try await vault.secret(service: "api.example.com", account: "bot")
        #expect(got.bytes == Array("s3cret".utf8))
        let item = try await vault.item(service: "api.example.com", account: "bot")
        #expect(item.service == "api.example.com" && item.account == "bot")
        #expect(item.kind == .password)
        #expect(item.details == VaultItemDetails())
        #expect(item.created == item.modified)
        // Stored in whole seconds: between the second before the call and the end of it.
        #expect(item.created >= before.addingTimeInterval(-1) && item.created <= after, "created \(item.created), call \(before)…\(after)")

        // And from a second opening of the file.
        let reopened = try Vault(path: path, credentials: passphrase())
        let again = try await reopened.password(service: "api.example.com", account: "bot")
        #expect(again == "s3cret")
    }

    @Test("set replaces a password, keeps the creation date and details, and advances modified")
    func setReplaces() async throws {
        let folder = try TemporaryFolder()
        let vault = try VaultTest.newVault(at: folder.path + "/test.vault")
        let details = VaultItemDetails(label: "Deploy bot", comment: "rotated monthly", attributes: ["url": "https://example.com"])
        try await vault.set(secret("one"), service: "s", account: "a", details: details)
        let first = try await vault.item(service: "s", account: "a")
        try await Task.sleep(for: .milliseconds(10))

        try await vault.set(secret("two"), service: "s", account: "a")
        let second = try await vault.item(service: "s", account: "a")
        #expect(second.created == first.created)
        #expect(second.modified > first.modified)
        #expect(second.details == details, "nil details keep the existing ones")
        #expect(try await vault.password(service: "s", account: "a") == "two")

        try await vault.set(secret("three"), service: "s", account: "a", details: VaultItemDetails(label: "new"))
        let third = try await vault.item(service: "s", account: "a")
        #expect(third.details == VaultItemDetails(label: "new"), "given details replace the old ones")
        #expect(third.created == first.created)
        #expect(try await vault.allAccounts().count == 1)
    }

    @Test("add refuses an existing item")
    func addDuplicate() async throws {
        let folder = try TemporaryFolder()
        let vault = try VaultTest.newVault(at: folder.path + "/test.vault")
        try await vault.add(secret("first"), service: "s", account: "a")
        let error = try await VaultTest.thrownAsync { try await vault.add(secret("second"), service: "s", account: "a") }
        #expect(error == .duplicateItem(service: "s", account: "a"))
        #expect(error.category == .checkFailed)
        #expect(try await vault.password(service: "s", account: "a") == "first")
    }

    @Test("update changes the secret or the details and keeps the other")
    func update() async throws {
        let folder = try TemporaryFolder()
        let vault = try VaultTest.newVault(at: folder.path + "/test.vault")
        let missing = try await VaultTest.thrownAsync { try await vault.update(service: "s", account: "a", secret: secret("x")) }
        #expect(missing == .itemNotFound(service: "s", account: "a"))
        #expect(try await vault.allAccounts().isEmpty, "update must not create an item")

        let details = VaultItemDetails(label: "L", comment: "C", attributes: ["k": "v"])
        try await vault.add(secret("old"), service: "s", account: "a", details: details)
        let created = try await vault.item(service: "s", account: "a").created
        try await Task.sleep(for: .milliseconds(10))

        try await vault.update(service: "s", account: "a", secret: secret("new"))
        #expect(try await vault.password(service: "s", account: "a") == "new")
        let afterSecret = try await vault.item(service: "s", account: "a")
        #expect(afterSecret.details == details)
        #expect(afterSecret.created == created)
        #expect(afterSecret.modified > created)

        let newDetails = VaultItemDetails(label: "L2")
        try await vault.update(service: "s", account: "a", details: newDetails)
        #expect(try await vault.password(service: "s", account: "a") == "new")
        let afterDetails = try await vault.item(service: "s", account: "a")
        #expect(afterDetails.details == newDetails)
        #expect(afterDetails.created == created)
    }

    @Test("delete removes an item; deleting a missing item is an error")
    func delete() async throws {
        let folder = try TemporaryFolder()
        let vault = try VaultTest.newVault(at: folder.path + "/test.vault")
        try await vault.set(secret("x"), service: "s", account: "a")
        try await vault.set(secret("y"), service: "s", account: "b")
        try await vault.delete(service: "s", account: "a")

        let gone = try await VaultTest.thrownAsync { try await vault.secret(service: "s", account: "a") }
        #expect(gone == .itemNotFound(service: "s", account: "a"))
        let itemGone = try await VaultTest.thrownAsync { try await vault.item(service: "s", account: "a") }
        #expect(itemGone == .itemNotFound(service: "s", account: "a"))
        let again = try await VaultTest.thrownAsync { try await vault.delete(service: "s", account: "a") }
        #expect(again == .itemNotFound(service: "s", account: "a"))
        #expect(try await vault.password(service: "s", account: "b") == "y", "the other item stays")
    }

    // MARK: Listing

    @Test("allAccounts is ordered by service then account; accounts(service:) lists one service")
    func listing() async throws {
        let folder = try TemporaryFolder()
        let vault = try VaultTest.newVault(at: folder.path + "/test.vault")
        for (service, account) in [("b", "x"), ("a", "z"), ("c", "a"), ("a", "y"), ("b", "a")] {
            try await vault.set(secret("\(service)-\(account)"), service: service, account: account)
        }
        let all = try await vault.allAccounts()
        #expect(VaultTest.names(all) == ["a/y", "a/z", "b/a", "b/x", "c/a"])
        #expect(all.allSatisfy { $0.details != nil && $0.kind == .password })

        let serviceB = try await vault.accounts(service: "b")
        #expect(VaultTest.names(serviceB) == ["b/a", "b/x"])
        #expect(try await vault.accounts(service: "nothing").isEmpty)
    }

    @Test("query by kind, names and attributes; attributes need the vault unlocked")
    func query() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/test.vault"
        let vault = try VaultTest.newVault(at: path)
        try await vault.set(
            secret("1"), service: "web", account: "alice", details: VaultItemDetails(attributes: ["env": "prod", "team": "red"]))
        try await vault.set(secret("2"), service: "web", account: "bob", details: VaultItemDetails(attributes: ["env": "dev", "team": "red"]))
        try await vault.set(secret("3"), service: "db", account: "carol", details: VaultItemDetails(attributes: ["env": "prod"]))
        try await vault.setPrivateKey(
            try PrivateKey.generate(.p256), service: "keys", account: "signing", details: VaultItemDetails(attributes: ["env": "prod"]))

        let keys = try await vault.query(VaultQuery(kind: .privateKey))
        #expect(VaultTest.names(keys) == ["keys/signing"])
        let passwords = try await vault.query(VaultQuery(kind: .password))
        #expect(VaultTest.names(passwords) == ["db/carol", "web/alice", "web/bob"])
        let prod = try await vault.query(VaultQuery(attributes: ["env": "prod"]))
        #expect(VaultTest.names(prod) == ["db/carol", "keys/signing", "web/alice"])
        let prodRed = try await vault.query(VaultQuery(attributes: ["env": "prod", "team": "red"]))
        #expect(VaultTest.names(prodRed) == ["web/alice"])
        let webRed = try await vault.query(VaultQuery(service: "web", attributes: ["team": "red"]))
        #expect(VaultTest.names(webRed) == ["web/alice", "web/bob"])
        let prodPasswords = try await vault.query(VaultQuery(kind: .password, attributes: ["env": "prod"]))
        #expect(VaultTest.names(prodPasswords) == ["db/carol", "web/alice"])
        let one = try await vault.query(VaultQuery(service: "web", account: "bob"))
        #expect(VaultTest.names(one) == ["web/bob"])
        #expect(try await vault.query(VaultQuery(attributes: ["env": "staging"])).isEmpty)
        #expect(try await vault.query(VaultQuery(attributes: ["env": "PROD"])).isEmpty, "values match exactly")

        await vault.lock()
        let locked = try await VaultTest.thrownAsync { try await vault.query(VaultQuery(attributes: ["env": "prod"])) }
        #expect(locked == .locked(path: path))
        let lockedKeys = try await vault.query(VaultQuery(kind: .privateKey))
        #expect(VaultTest.names(lockedKeys) == ["keys/signing"], "names and kinds are listed while locked")
        #expect(lockedKeys.allSatisfy { $0.details == nil })
    }

    // MARK: Renaming

    @Test("rename keeps secret, details and dates, and refuses an existing target")
    func rename() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/test.vault"
        let vault = try VaultTest.newVault(at: path)
        let details = VaultItemDetails(label: "label", comment: "comment", attributes: ["a": "1"])
        try await vault.set(secret("moved"), service: "old", account: "acct", details: details)
        try await vault.set(secret("other"), service: "taken", account: "acct")
        let before = try await vault.item(service: "old", account: "acct")
        try await Task.sleep(for: .milliseconds(10))

        try await vault.rename(service: "old", account: "acct", toService: "new", account: "acct2")
        let after = try await vault.item(service: "new", account: "acct2")
        #expect(after.details == details)
        #expect(after.created == before.created)
        #expect(after.modified == before.modified)
        #expect(after.kind == .password)
        #expect(try await vault.password(service: "new", account: "acct2") == "moved")
        let oldGone = try await VaultTest.thrownAsync { try await vault.secret(service: "old", account: "acct") }
        #expect(oldGone == .itemNotFound(service: "old", account: "acct"))

        let clash = try await VaultTest.thrownAsync {
            try await vault.rename(service: "new", account: "acct2", toService: "taken", account: "acct")
        }
        #expect(clash == .duplicateItem(service: "taken", account: "acct"))
        #expect(try await vault.password(service: "new", account: "acct2") == "moved", "a refused rename changes nothing")
        #expect(try await vault.password(service: "taken", account: "acct") == "other")

        let missing = try await VaultTest.thrownAsync {
            try await vault.rename(service: "none", account: "none", toService: "x", account: "y")
        }
        #expect(missing == .itemNotFound(service: "none", account: "none"))
        let remaining = try await vault.allAccounts()
        #expect(VaultTest.names(remaining) == ["new/acct2", "taken/acct"])

        await vault.lock()
        let locked = try await VaultTest.thrownAsync {
            try await vault.rename(service: "new", account: "acct2", toService: "x", account: "y")
        }
        #expect(locked == .locked(path: path))
    }

    @Test("rename keeps a private key usable")
    func renamePrivateKey() async throws {
        let folder = try TemporaryFolder()
        let vault = try VaultTest.newVault(at: folder.path + "/test.vault")
        let key = try PrivateKey.generate(.ed25519)
        try await vault.setPrivateKey(key, service: "keys", account: "old")
        try await vault.rename(service: "keys", account: "old", toService: "keys", account: "new")
        let back = try await vault.privateKey(service: "keys", account: "new")
        #expect(back.publicKey == key.publicKey)
        #expect(try await vault.item(service: "keys", account: "new").kind == .privateKey)
    }
}
