import Foundation
import SignetCore
import SignetTestSupport
import Testing
@testable import SignetVault

/// Unlocking with passphrases and key files, locking, changing credentials, and opening
/// things that are not vaults.
@Suite struct VaultLockingTests {
    // MARK: Passphrases

    @Test("a wrong passphrase is refused")
    func wrongPassphrase() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/test.vault"
        _ = try VaultTest.newVault(at: path)

        let error = try VaultTest.thrown { try Vault(path: path, credentials: passphrase("wrong horse")) }
        #expect(error == .wrongPassphrase(path: path))
        #expect(error.category == .checkFailed)
        let empty = try VaultTest.thrown { try Vault(path: path, credentials: VaultCredentials(passphrase: SecretBytes([UInt8]()))) }
        #expect(empty == .wrongPassphrase(path: path))

        let locked = try Vault(path: path)
        let unlockError = try await VaultTest.thrownAsync { try await locked.unlock(passphrase("wrong horse")) }
        #expect(unlockError == .wrongPassphrase(path: path))
        let stillLocked = await locked.isLocked
        #expect(stillLocked)
    }

    @Test("a locked vault lists items without details, refuses secrets, and unlocks and locks again")
    func lockedVault() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/test.vault"
        let writer = try VaultTest.newVault(at: path)
        let details = VaultItemDetails(label: "label", attributes: ["k": "v"])
        try await writer.set(secret("one"), service: "s", account: "a", details: details)
        try await writer.set(secret("two"), service: "s", account: "b")

        let vault = try Vault(path: path)
        let lockedAtFirst = await vault.isLocked
        #expect(lockedAtFirst)
        let listed = try await vault.allAccounts()
        #expect(VaultTest.names(listed) == ["s/a", "s/b"])
        #expect(listed.allSatisfy { $0.details == nil && $0.kind == .password })
        let item = try await vault.item(service: "s", account: "a")
        #expect(item.details == nil)

        let refused = try await VaultTest.thrownAsync { try await vault.secret(service: "s", account: "a") }
        #expect(refused == .locked(path: path))
        #expect(refused.category == .checkFailed)
        let refusedPassword = try await VaultTest.thrownAsync { try await vault.password(service: "s", account: "a") }
        #expect(refusedPassword == .locked(path: path))
        let refusedSet = try await VaultTest.thrownAsync { try await vault.set(secret("x"), service: "s", account: "c") }
        #expect(refusedSet == .locked(path: path))
        let refusedUpdate = try await VaultTest.thrownAsync { try await vault.update(service: "s", account: "a", secret: secret("x")) }
        #expect(refusedUpdate == .locked(path: path))
        let refusedChange = try await VaultTest.thrownAsync { try await vault.changeCredentials(to: passphrase("new"), kdf: testKDF) }
        #expect(refusedChange == .locked(path: path))

        // Deleting needs no unlocking.
        try await vault.delete(service: "s", account: "b")

        try await vault.unlock(passphrase())
        let lockedAfterUnlock = await vault.isLocked
        #expect(!lockedAfterUnlock)
        #expect(try await vault.password(service: "s", account: "a") == "one")
        #expect(try await vault.item(service: "s", account: "a").details == details)
        let unlockedList = try await vault.allAccounts()
        #expect(VaultTest.names(unlockedList) == ["s/a"])

        await vault.lock()
        let lockedAgain = await vault.isLocked
        #expect(lockedAgain)
        let relocked = try await VaultTest.thrownAsync { try await vault.secret(service: "s", account: "a") }
        #expect(relocked == .locked(path: path))
        let relisted = try await vault.allAccounts()
        #expect(relisted.count == 1 && relisted[0].details == nil)
    }

    @Test("creating without credentials, or with an empty passphrase, is refused and creates nothing")
    func createWithoutCredentials() throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/test.vault"
        let none = try VaultTest.thrown { try VaultTest.newVault(at: path, credentials: VaultCredentials()) }
        #expect(none.code == "invalidArgument")
        let empty = try VaultTest.thrown {
            try VaultTest.newVault(at: path, credentials: VaultCredentials(passphrase: SecretBytes([UInt8]())))
        }
        #expect(empty.code == "invalidArgument")
        #expect(!VaultTest.exists(path))
    }

    // MARK: Key files

    @Test("a key-file vault opens with its key file only")
    func keyFileVault() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/test.vault"
        let keyFile = VaultTest.keyFile()
        let vault = try VaultTest.newVault(at: path, credentials: VaultCredentials(keyFile: keyFile))
        try await vault.set(secret("by key file"), service: "s", account: "a")
        #expect(try Vault.unlockMethod(at: path) == .keyFile)

        let reopened = try Vault(path: path, credentials: VaultCredentials(keyFile: keyFile))
        #expect(try await reopened.password(service: "s", account: "a") == "by key file")

        let wrong = try VaultTest.thrown { try Vault(path: path, credentials: VaultCredentials(keyFile: VaultTest.keyFile())) }
        #expect(wrong == .wrongPassphrase(path: path))
        let longerWrong = try VaultTest.thrown {
            try Vault(path: path, credentials: VaultCredentials(keyFile: SecretBytes(keyFile.bytes + [0])))
        }
        #expect(longerWrong == .wrongPassphrase(path: path), "the whole key file counts")
        let passphraseInstead = try VaultTest.thrown { try Vault(path: path, credentials: passphrase()) }
        VaultTest.check(passphraseInstead, is: "credentialsRequired", mentioning: "no key file was given")
    }

    @Test("a key file under 32 bytes is refused")
    func shortKeyFile() throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/test.vault"
        for count in [0, 1, 31] {
            let error = try VaultTest.thrown {
                try VaultTest.newVault(at: path, credentials: VaultCredentials(keyFile: VaultTest.keyFile(count)))
            }
            VaultTest.check(error, is: "invalidArgument", mentioning: "32")
            let withPassphrase = try VaultTest.thrown {
                try VaultTest.newVault(at: path, credentials: VaultCredentials(passphrase: secret("p"), keyFile: VaultTest.keyFile(count)))
            }
            #expect(withPassphrase.code == "invalidArgument")
        }
        #expect(!VaultTest.exists(path))
        _ = try VaultTest.newVault(at: path, credentials: VaultCredentials(keyFile: VaultTest.keyFile(32)))
    }

    @Test("a passphrase-and-key-file vault needs both")
    func passphraseAndKeyFile() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/test.vault"
        let keyFile = VaultTest.keyFile(64)
        let both = VaultCredentials(passphrase: secret("something known"), keyFile: keyFile)
        let vault = try VaultTest.newVault(at: path, credentials: both)
        try await vault.set(secret("two factors"), service: "s", account: "a")
        #expect(try Vault.unlockMethod(at: path) == .passphraseAndKeyFile)
        let method = await vault.unlockMethod
        #expect(method == .passphraseAndKeyFile)

        let reopened = try Vault(path: path, credentials: both)
        #expect(try await reopened.password(service: "s", account: "a") == "two factors")

        let onlyPassphrase = try VaultTest.thrown { try Vault(path: path, credentials: VaultCredentials(passphrase: secret("something known"))) }
        VaultTest.check(onlyPassphrase, is: "credentialsRequired", mentioning: "key file")
        #expect(onlyPassphrase.category == .environment)
        let onlyKeyFile = try VaultTest.thrown { try Vault(path: path, credentials: VaultCredentials(keyFile: keyFile)) }
        VaultTest.check(onlyKeyFile, is: "credentialsRequired", mentioning: "passphrase")

        let wrongKeyFile = try VaultTest.thrown {
            try Vault(path: path, credentials: VaultCredentials(passphrase: secret("something known"), keyFile: VaultTest.keyFile()))
        }
        #expect(wrongKeyFile == .wrongPassphrase(path: path))
        let wrongPassphrase = try VaultTest.thrown {
            try Vault(path: path, credentials: VaultCredentials(passphrase: secret("something else"), keyFile: keyFile))
        }
        #expect(wrongPassphrase == .wrongPassphrase(path: path))
    }

    @Test("a key file given to a passphrase-only vault is refused")
    func keyFileForPassphraseVault() throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/test.vault"
        _ = try VaultTest.newVault(at: path)
        #expect(try Vault.unlockMethod(at: path) == .passphrase)
        let error = try VaultTest.thrown {
            try Vault(path: path, credentials: VaultCredentials(passphrase: secret("correct horse battery staple"), keyFile: VaultTest.keyFile()))
        }
        VaultTest.check(error, is: "credentialsRequired", mentioning: path, "no key file")
        let onlyKeyFile = try VaultTest.thrown { try Vault(path: path, credentials: VaultCredentials(keyFile: VaultTest.keyFile())) }
        #expect(onlyKeyFile.code == "credentialsRequired")
    }

    // MARK: Changing credentials

    @Test("changeCredentials rewraps the vault key only: the sealed items stay byte for byte")
    func changeCredentials() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/test.vault"
        let vault = try VaultTest.newVault(at: path, credentials: passphrase("old passphrase"))
        let details = VaultItemDetails(label: "kept")
        try await vault.set(secret("one"), service: "s", account: "a", details: details)
        try await vault.set(secret("two"), service: "s", account: "b")
        try await vault.setPrivateKey(try PrivateKey.generate(.p256), service: "keys", account: "k")
        let itemsBefore = try await vault.allAccounts()
        let sealedBefore = try VaultTest.sealedSecrets(path)
        #expect(sealedBefore.count == 3)

        try await vault.changeCredentials(to: passphrase("new passphrase"), kdf: testKDF)
        #expect(try VaultTest.sealedSecrets(path) == sealedBefore, "no item may be re-encrypted")
        #expect(try await vault.password(service: "s", account: "a") == "one", "the open vault keeps working")

        let old = try VaultTest.thrown { try Vault(path: path, credentials: passphrase("old passphrase")) }
        #expect(old == .wrongPassphrase(path: path))
        let reopened = try Vault(path: path, credentials: passphrase("new passphrase"))
        #expect(try await reopened.allAccounts() == itemsBefore)
        #expect(try await reopened.password(service: "s", account: "a") == "one")
        #expect(try await reopened.password(service: "s", account: "b") == "two")
        _ = try await reopened.privateKey(service: "keys", account: "k")

        // To a key file and back: the method is recorded, the items still untouched.
        let keyFile = VaultTest.keyFile()
        try await reopened.changeCredentials(to: VaultCredentials(keyFile: keyFile), kdf: testKDF)
        #expect(try Vault.unlockMethod(at: path) == .keyFile)
        let changedMethod = await reopened.unlockMethod
        #expect(changedMethod == .keyFile)
        let byKeyFile = try Vault(path: path, credentials: VaultCredentials(keyFile: keyFile))
        #expect(try await byKeyFile.password(service: "s", account: "b") == "two")
        let byPassphrase = try VaultTest.thrown { try Vault(path: path, credentials: passphrase("new passphrase")) }
        #expect(byPassphrase.code == "credentialsRequired")

        try await byKeyFile.changeCredentials(to: VaultCredentials(passphrase: secret("third"), keyFile: keyFile), kdf: testKDF)
        #expect(try Vault.unlockMethod(at: path) == .passphraseAndKeyFile)
        #expect(try VaultTest.sealedSecrets(path) == sealedBefore)
        let third = try Vault(path: path, credentials: VaultCredentials(passphrase: secret("third"), keyFile: keyFile))
        #expect(try await third.item(service: "s", account: "a").details == details)
    }

    @Test("changeCredentials refuses bad credentials and keeps the old ones")
    func changeCredentialsRefused() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/test.vault"
        let vault = try VaultTest.newVault(at: path)
        for bad in [VaultCredentials(), VaultCredentials(passphrase: SecretBytes([UInt8]())), VaultCredentials(keyFile: VaultTest.keyFile(8))] {
            let error = try await VaultTest.thrownAsync { try await vault.changeCredentials(to: bad, kdf: testKDF) }
            #expect(error.code == "invalidArgument")
        }
        _ = try Vault(path: path, credentials: passphrase())
    }

    // MARK: Things that are not vaults

    @Test("opening a missing path")
    func missing() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/none.vault"
        let locked = try VaultTest.thrown { try Vault(path: path) }
        #expect(locked == .vaultMissing(path: path))
        #expect(locked.category == .environment)
        let unlocked = try VaultTest.thrown { try Vault(path: path, credentials: passphrase()) }
        #expect(unlocked == .vaultMissing(path: path))
        let method = try VaultTest.thrown { try Vault.unlockMethod(at: path) }
        #expect(method == .vaultMissing(path: path))
        #expect(!VaultTest.exists(path), "opening must not create the file")
    }

    @Test("opening a file that is not an SQLite database leaves it alone")
    func notSQLite() throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/text.vault"
        let text = Array(String(repeating: "This is a text file, not a database.\n", count: 200).utf8)
        try VaultTest.write(text, to: path)
        let error = try VaultTest.thrown { try Vault(path: path) }
        #expect(error.code == "notAVault", "\(error)")
        #expect(error.category == .malformedInput)
        let withCredentials = try VaultTest.thrown { try Vault(path: path, credentials: passphrase()) }
        #expect(withCredentials.code == "notAVault")
        #expect(try VaultTest.contents(path) == text)
    }

    @Test("opening another application's SQLite database, or another vault format")
    func otherSQLite() throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/other.db"
        do {
            let other = try SQLiteConnection(path: path, create: true)
            try other.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes(body) VALUES ('hello')")
        }
        let error = try VaultTest.thrown { try Vault(path: path) }
        VaultTest.check(error, is: "notAVault", mentioning: "another application")
        let unlockMethod = try VaultTest.thrown { try Vault.unlockMethod(at: path) }
        #expect(unlockMethod.code == "notAVault")

        let vaultPath = folder.path + "/future.vault"
        _ = try VaultTest.newVault(at: vaultPath)
        try VaultTest.tamper(vaultPath, "PRAGMA user_version = 2")
        let future = try VaultTest.thrown { try Vault(path: vaultPath, credentials: passphrase()) }
        VaultTest.check(future, is: "notAVault", mentioning: "format 2")
    }

    @Test("opening another application's SQLite database does not change it")
    func otherSQLiteUntouched() throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/other.db"
        do {
            let other = try SQLiteConnection(path: path, create: true)
            try other.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes(body) VALUES ('hello')")
        }
        let before = try VaultTest.contents(path)
        _ = try VaultTest.thrown { try Vault(path: path) }
        // Switching the file to write-ahead logging (header bytes 18 and 19) would be a lasting
        // change to a file that is not ours.
        #expect(try VaultTest.contents(path) == before)
        let journalMode = try VaultTest.raw(path).query("PRAGMA journal_mode").first?.first?.text
        #expect(journalMode?.lowercased() == "delete")
    }

    @Test("opening a directory or a symbolic link")
    func directoryAndLink() async throws {
        let folder = try TemporaryFolder()
        let directory = folder.path + "/dir.vault"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        let error = try VaultTest.thrown { try Vault(path: directory) }
        #expect(error.code == "io", "\(error)")
        #expect(error.category == .environment)
        let method = try VaultTest.thrown { try Vault.unlockMethod(at: directory) }
        #expect(method.code == "io")

        // The vault is opened without following links (SQLITE_OPEN_NOFOLLOW).
        let path = folder.path + "/real.vault"
        _ = try VaultTest.newVault(at: path)
        let link = folder.path + "/link.vault"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
        let linked = try VaultTest.thrown { try Vault(path: link, credentials: passphrase()) }
        #expect(linked.code == "io", "\(linked)")
    }
}
