import Foundation
import SignetCore
import SignetTestSupport
import Testing
@testable import SignetVault

/// The vault file altered underneath the library with a raw SQLite connection: every change to
/// a sealed value, or to the clear columns it is bound to, must be reported as damage (or, for
/// the key record, as a failure to unlock), never read back as if nothing had happened.
@Suite struct VaultTamperTests {
    /// A vault at `folder/test.vault` holding two passwords, `web/alice` and `web/bob`.
    private func makeVault(_ folder: String) async throws -> (path: String, vault: Vault) {
        let path = folder + "/test.vault"
        let vault = try VaultTest.newVault(at: path)
        try await vault.set(secret("alice's secret"), service: "web", account: "alice", details: VaultItemDetails(label: "Alice"))
        try await vault.set(secret("bob's secret"), service: "web", account: "bob", details: VaultItemDetails(label: "Bob"))
        return (path, vault)
    }

    // MARK: Items

    @Test("a flipped byte in a sealed secret", arguments: [0, 11, 12, 20, -16, -1])
    func flippedSecret(index: Int) async throws {
        let folder = try TemporaryFolder()
        let (path, vault) = try await makeVault(folder.path)
        try VaultTest.flipByte(path, service: "web", account: "alice", at: index)

        let error = try await VaultTest.thrownAsync { try await vault.secret(service: "web", account: "alice") }
        VaultTest.check(error, is: "corrupted", mentioning: path, "'web'/'alice'")
        #expect(error.category == .malformedInput)
        let password = try await VaultTest.thrownAsync { try await vault.password(service: "web", account: "alice") }
        #expect(password.code == "corrupted")
        // The damage stays with that one secret.
        #expect(try await vault.password(service: "web", account: "bob") == "bob's secret")
        #expect(try await vault.item(service: "web", account: "alice").details?.label == "Alice")

        // Deleting needs no decryption, so a damaged item can be removed and stored anew.
        try await vault.delete(service: "web", account: "alice")
        try await vault.set(secret("fresh"), service: "web", account: "alice")
        #expect(try await vault.password(service: "web", account: "alice") == "fresh")
    }

    @Test("a sealed secret cut short")
    func truncatedSecret() async throws {
        let folder = try TemporaryFolder()
        let (path, vault) = try await makeVault(folder.path)
        let sealed = try #require(try VaultTest.column("secret", of: path, service: "web", account: "alice").blob)
        #expect(sealed.count == 12 + "alice's secret".utf8.count + 16, "nonce, ciphertext, tag")
        for length in [0, 27, 28, 40] {
            try VaultTest.tamper(
                path, "UPDATE items SET secret = ? WHERE account = 'alice'", [.blob(Array(sealed.prefix(length)))])
            let error = try await VaultTest.thrownAsync { try await vault.secret(service: "web", account: "alice") }
            #expect(error.code == "corrupted", "\(length) bytes: \(error)")
        }
    }

    @Test("secrets swapped between two items")
    func swappedSecrets() async throws {
        let folder = try TemporaryFolder()
        let (path, vault) = try await makeVault(folder.path)
        let alice = try VaultTest.column("secret", of: path, service: "web", account: "alice")
        let bob = try VaultTest.column("secret", of: path, service: "web", account: "bob")
        try VaultTest.tamper(path, "UPDATE items SET secret = ? WHERE service = 'web' AND account = 'alice'", [bob])
        try VaultTest.tamper(path, "UPDATE items SET secret = ? WHERE service = 'web' AND account = 'bob'", [alice])

        let aliceError = try await VaultTest.thrownAsync { try await vault.secret(service: "web", account: "alice") }
        VaultTest.check(aliceError, is: "corrupted", mentioning: "'web'/'alice'")
        let bobError = try await VaultTest.thrownAsync { try await vault.secret(service: "web", account: "bob") }
        VaultTest.check(bobError, is: "corrupted", mentioning: "'web'/'bob'")
    }

    @Test("details swapped between two items")
    func swappedDetails() async throws {
        let folder = try TemporaryFolder()
        let (path, vault) = try await makeVault(folder.path)
        let alice = try VaultTest.column("details", of: path, service: "web", account: "alice")
        try VaultTest.tamper(path, "UPDATE items SET details = ? WHERE service = 'web' AND account = 'bob'", [alice])
        let error = try await VaultTest.thrownAsync { try await vault.item(service: "web", account: "bob") }
        VaultTest.check(error, is: "corrupted", mentioning: "'web'/'bob'")
        let secretInDetails = try VaultTest.column("secret", of: path, service: "web", account: "alice")
        try VaultTest.tamper(path, "UPDATE items SET details = ? WHERE service = 'web' AND account = 'alice'", [secretInDetails])
        let crossField = try await VaultTest.thrownAsync { try await vault.item(service: "web", account: "alice") }
        #expect(crossField.code == "corrupted", "a secret moved into the details field")
    }

    @Test("an item moved to another name")
    func renamedRow() async throws {
        let folder = try TemporaryFolder()
        let (path, vault) = try await makeVault(folder.path)
        try VaultTest.tamper(path, "UPDATE items SET service = 'evil', account = 'mallory' WHERE account = 'alice'")
        let error = try await VaultTest.thrownAsync { try await vault.secret(service: "evil", account: "mallory") }
        VaultTest.check(error, is: "corrupted", mentioning: "'evil'/'mallory'")
        let listing = try await VaultTest.thrownAsync { try await vault.allAccounts() }
        #expect(listing.code == "corrupted")
    }

    @Test("a password relabelled as a private key")
    func relabelledKind() async throws {
        let folder = try TemporaryFolder()
        let (path, vault) = try await makeVault(folder.path)
        try VaultTest.tamper(path, "UPDATE items SET kind = 'private-key' WHERE account = 'alice'")

        let secretError = try await VaultTest.thrownAsync { try await vault.secret(service: "web", account: "alice") }
        VaultTest.check(secretError, is: "corrupted", mentioning: "'web'/'alice'")
        let itemError = try await VaultTest.thrownAsync { try await vault.item(service: "web", account: "alice") }
        #expect(itemError.code == "corrupted")
        let keyError = try await VaultTest.thrownAsync { try await vault.privateKey(service: "web", account: "alice") }
        #expect(keyError.code == "corrupted")
        let listError = try await VaultTest.thrownAsync { try await vault.allAccounts() }
        #expect(listError.code == "corrupted")

        // Locked, the clear columns are all there is to list.
        let locked = try Vault(path: path)
        let listed = try await locked.allAccounts()
        #expect(listed.map(\.kind) == [.privateKey, .password])
    }

    @Test("a changed date breaks the details, not the secret", arguments: ["created", "modified"])
    func changedDate(column: String) async throws {
        let folder = try TemporaryFolder()
        let (path, vault) = try await makeVault(folder.path)
        let changed = try VaultTest.tamper(path, "UPDATE items SET \(column) = \(column) - 1000 WHERE account = 'alice'")
        #expect(changed == 1)

        let itemError = try await VaultTest.thrownAsync { try await vault.item(service: "web", account: "alice") }
        VaultTest.check(itemError, is: "corrupted", mentioning: "details", "'web'/'alice'")
        let listError = try await VaultTest.thrownAsync { try await vault.allAccounts() }
        #expect(listError.code == "corrupted")
        let serviceError = try await VaultTest.thrownAsync { try await vault.accounts(service: "web") }
        #expect(serviceError.code == "corrupted")
        // The secret is not bound to the dates.
        #expect(try await vault.password(service: "web", account: "alice") == "alice's secret")

        await vault.lock()
        let lockedList = try await vault.allAccounts()
        #expect(lockedList.count == 2, "a locked listing opens no details")
    }

    @Test("an unknown kind")
    func unknownKind() async throws {
        let folder = try TemporaryFolder()
        let (path, vault) = try await makeVault(folder.path)
        try VaultTest.tamper(path, "UPDATE items SET kind = 'bogus' WHERE account = 'alice'")

        let secretError = try await VaultTest.thrownAsync { try await vault.secret(service: "web", account: "alice") }
        VaultTest.check(secretError, is: "corrupted", mentioning: "bogus")
        let listError = try await VaultTest.thrownAsync { try await vault.allAccounts() }
        VaultTest.check(listError, is: "corrupted", mentioning: "bogus")
        let setError = try await VaultTest.thrownAsync { try await vault.set(secret("x"), service: "web", account: "alice") }
        #expect(setError.code == "corrupted")
        let locked = try Vault(path: path)
        let lockedError = try await VaultTest.thrownAsync { try await locked.allAccounts() }
        #expect(lockedError.code == "corrupted")

        try await vault.delete(service: "web", account: "alice")
        let remaining = try await vault.allAccounts()
        #expect(VaultTest.names(remaining) == ["web/bob"])
    }

    @Test("columns of the wrong type")
    func wrongTypes() async throws {
        let folder = try TemporaryFolder()
        let (path, vault) = try await makeVault(folder.path)
        try VaultTest.tamper(path, "UPDATE items SET secret = 'text, not a blob' WHERE account = 'alice'")
        let error = try await VaultTest.thrownAsync { try await vault.secret(service: "web", account: "alice") }
        #expect(error.code == "corrupted", "\(error)")
        try VaultTest.tamper(path, "UPDATE items SET created = 'yesterday' WHERE account = 'bob'")
        let listError = try await VaultTest.thrownAsync { try await vault.allAccounts() }
        #expect(listError.code == "corrupted", "\(listError)")
    }

    // MARK: The key record

    @Test("a flipped byte in the wrapped vault key", arguments: [0, 12, -1])
    func flippedWrappedKey(index: Int) throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/test.vault"
        _ = try VaultTest.newVault(at: path)
        let connection = try VaultTest.raw(path)
        var wrapped = try #require(try connection.query("SELECT wrapped_key FROM vault").first?.first?.blob)
        wrapped[index < 0 ? wrapped.count + index : index] ^= 0x01
        try connection.query("UPDATE vault SET wrapped_key = ? WHERE id = 1", [.blob(wrapped)])

        let error = try VaultTest.thrown { try Vault(path: path, credentials: passphrase()) }
        #expect(error == .wrongPassphrase(path: path))
        #expect(try Vault.unlockMethod(at: path) == .passphrase, "the record still reads; only unwrapping fails")
    }

    @Test("a relabelled scrypt cost does not unlock")
    func relabelledKDF() throws {
        let folder = try TemporaryFolder()
        for (created, relabelled) in [(10, 11), (11, 10)] {
            let path = folder.path + "/ln\(created).vault"
            _ = try Vault.create(at: path, credentials: passphrase(), kdf: VaultKDFParameters(logN: created))
            let recorded = try VaultTest.raw(path).query("SELECT kdf FROM vault").first?.first?.text
            #expect(recorded == "scrypt$ln=\(created),r=8,p=1")
            try VaultTest.tamper(path, "UPDATE vault SET kdf = ? WHERE id = 1", [.text("scrypt$ln=\(relabelled),r=8,p=1")])

            let error = try VaultTest.thrown { try Vault(path: path, credentials: passphrase()) }
            #expect(error == .wrongPassphrase(path: path), "ln=\(created) relabelled ln=\(relabelled)")
        }
    }

    @Test("a malformed key record", arguments: [
        "UPDATE vault SET kdf = 'scrypt$ln=abc,r=8,p=1'",
        "UPDATE vault SET kdf = 'none'",
        "UPDATE vault SET kdf = 'scrypt$ln=40,r=8,p=1'",
        "UPDATE vault SET kdf = 'scrypt$ln=20,r=32,p=16'",
        "UPDATE vault SET unlock = 'keyfile'",
        "UPDATE vault SET unlock = 'magic'",
        "UPDATE vault SET salt = x'00'",
        "UPDATE vault SET wrapped_key = 'text'",
        "DELETE FROM vault",
    ])
    func malformedKeyRecord(sql: String) throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/test.vault"
        _ = try VaultTest.newVault(at: path)
        try VaultTest.tamper(path, sql)

        let locked = try VaultTest.thrown { try Vault(path: path) }
        VaultTest.check(locked, is: "corrupted", mentioning: "key record")
        let unlocked = try VaultTest.thrown { try Vault(path: path, credentials: passphrase()) }
        #expect(unlocked.code == "corrupted")
        let method = try VaultTest.thrown { try Vault.unlockMethod(at: path) }
        #expect(method.code == "corrupted")
    }

    @Test("a passphrase vault relabelled as needing a key file too")
    func relabelledUnlockMethod() throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/test.vault"
        _ = try VaultTest.newVault(at: path)
        try VaultTest.tamper(path, "UPDATE vault SET unlock = 'passphrase+keyfile'")
        #expect(try Vault.unlockMethod(at: path) == .passphraseAndKeyFile)
        let withoutKeyFile = try VaultTest.thrown { try Vault(path: path, credentials: passphrase()) }
        #expect(withoutKeyFile.code == "credentialsRequired")
        let withKeyFile = try VaultTest.thrown {
            try Vault(path: path, credentials: VaultCredentials(passphrase: secret("correct horse battery staple"), keyFile: VaultTest.keyFile()))
        }
        #expect(withKeyFile == .wrongPassphrase(path: path))
    }

    // MARK: The file

    @Test("a vault file cut short", arguments: ["to half its size", "to its first page"])
    func truncatedFile(cut: String) async throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/test.vault"
        do {
            let vault = try VaultTest.newVault(at: path)
            for index in 0..<40 {
                try await vault.set(SecretBytes(VaultTest.randomBytes(2000)), service: "bulk", account: "item-\(index)")
            }
            // Everything into the main file, so that the WAL holds nothing to replay.
            try VaultTest.raw(path).query("PRAGMA wal_checkpoint(TRUNCATE)")
        }
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        let size = try VaultTest.contents(path).count
        #expect(size > 40 * 2000)
        let length = cut == "to half its size" ? size / 2 : 4096
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: UInt64(length))
        try handle.close()

        switch await Self.readEverything(path) {
        case .success(let count):
            Issue.record("a vault cut to \(length) of \(size) bytes read without error (\(count) items)")
        case .failure(let error):
            #expect(error.code == "corrupted" || error.code == "notAVault", "\(error)")
        }
    }

    /// Opens the vault and reads every secret; the number of items, or the first error.
    private static func readEverything(_ path: String) async -> Result<Int, VaultError> {
        do {
            let vault = try Vault(path: path, credentials: passphrase())
            let items = try await vault.allAccounts()
            for item in items {
                _ = try await vault.secret(service: item.service, account: item.account)
            }
            return .success(items.count)
        } catch let error as VaultError {
            return .failure(error)
        } catch {
            Issue.record("the vault threw \(type(of: error)), not a VaultError: \(error)")
            return .failure(.io(path: path, detail: "\(error)"))
        }
    }
}
