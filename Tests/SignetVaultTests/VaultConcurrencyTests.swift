import Foundation
import SignetCore
import SignetTestSupport
import Testing
@testable import SignetVault

/// Several `Vault` instances, each with its own SQLite connection, on one file: what one
/// writes the others read, and concurrent writers queue on SQLite's lock instead of failing.
@Suite struct VaultConcurrencyTests {
    @Test("two instances on one file see each other's writes")
    func twoInstances() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/test.vault"
        let first = try VaultTest.newVault(at: path)
        let second = try Vault(path: path, credentials: passphrase())

        try await first.set(secret("from first"), service: "s", account: "a")
        #expect(try await second.password(service: "s", account: "a") == "from first")
        try await second.set(secret("from second"), service: "s", account: "a", details: VaultItemDetails(label: "second"))
        #expect(try await first.password(service: "s", account: "a") == "from second")
        #expect(try await first.item(service: "s", account: "a").details?.label == "second")

        try await second.add(secret("b"), service: "s", account: "b")
        let listed = try await first.allAccounts()
        #expect(VaultTest.names(listed) == ["s/a", "s/b"])
        try await first.delete(service: "s", account: "b")
        let gone = try await VaultTest.thrownAsync { try await second.secret(service: "s", account: "b") }
        #expect(gone == .itemNotFound(service: "s", account: "b"))

        try await first.rename(service: "s", account: "a", toService: "t", account: "a")
        #expect(try await second.password(service: "t", account: "a") == "from second")

        // A locked instance lists what an unlocked one wrote.
        let locked = try Vault(path: path)
        try await first.set(secret("c"), service: "s", account: "c")
        let lockedList = try await locked.allAccounts()
        #expect(VaultTest.names(lockedList) == ["s/c", "t/a"])
    }

    @Test("credentials changed by one instance: the others keep their key, and unlock with the new credentials")
    func credentialsChangedElsewhere() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/test.vault"
        let first = try VaultTest.newVault(at: path, credentials: passphrase("old"))
        let second = try Vault(path: path, credentials: passphrase("old"))
        try await first.set(secret("x"), service: "s", account: "a")

        try await first.changeCredentials(to: passphrase("new"), kdf: testKDF)
        // The vault key did not change, so the open instance still reads and writes.
        #expect(try await second.password(service: "s", account: "a") == "x")
        try await second.set(secret("y"), service: "s", account: "b")
        #expect(try await first.password(service: "s", account: "b") == "y")

        // unlock reads the key record afresh.
        await second.lock()
        let old = try await VaultTest.thrownAsync { try await second.unlock(passphrase("old")) }
        #expect(old == .wrongPassphrase(path: path))
        try await second.unlock(passphrase("new"))
        #expect(try await second.password(service: "s", account: "a") == "x")
    }

    @Test("four concurrent writers, each with its own instance: every write lands, none is refused as busy")
    func concurrentWriters() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/test.vault"
        _ = try VaultTest.newVault(at: path)
        let writers = 4, itemsPerWriter = 25

        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    let vault = try Vault(path: path, credentials: passphrase())
                    for index in 0..<itemsPerWriter {
                        do {
                            try await vault.set(
                                secret("value \(writer)-\(index)"), service: "writer-\(writer)", account: "item-\(index)",
                                details: VaultItemDetails(attributes: ["writer": "\(writer)"]))
                        } catch {
                            Issue.record("writer \(writer), item \(index): \(error)")
                            throw error
                        }
                    }
                }
            }
            try await group.waitForAll()
        }

        let vault = try Vault(path: path, credentials: passphrase())
        let all = try await vault.allAccounts()
        #expect(all.count == writers * itemsPerWriter)
        for writer in 0..<writers {
            let mine = try await vault.query(VaultQuery(attributes: ["writer": "\(writer)"]))
            #expect(mine.count == itemsPerWriter, "writer \(writer)")
            for index in 0..<itemsPerWriter {
                let value = try await vault.password(service: "writer-\(writer)", account: "item-\(index)")
                #expect(value == "value \(writer)-\(index)")
            }
        }
        let integrity = try VaultTest.raw(path).query("PRAGMA integrity_check").first?.first?.text
        #expect(integrity == "ok")
    }

    @Test("concurrent readers and writers on separate instances")
    func readersAndWriters() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/test.vault"
        let setup = try VaultTest.newVault(at: path)
        try await setup.set(secret("stable"), service: "shared", account: "stable")

        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<2 {
                group.addTask {
                    let vault = try Vault(path: path, credentials: passphrase())
                    for index in 0..<20 {
                        try await vault.set(secret("\(index)"), service: "shared", account: "counter-\(writer)")
                    }
                }
            }
            for _ in 0..<2 {
                group.addTask {
                    let vault = try Vault(path: path, credentials: passphrase())
                    for _ in 0..<20 {
                        let value = try await vault.password(service: "shared", account: "stable")
                        #expect(value == "stable")
                        _ = try await vault.allAccounts()
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await setup.password(service: "shared", account: "counter-0") == "19")
        #expect(try await setup.password(service: "shared", account: "counter-1") == "19")
    }

    @Test("one instance shared by many tasks: the actor serialises the calls")
    func sharedInstance() async throws {
        let folder = try TemporaryFolder()
        let vault = try VaultTest.newVault(at: folder.path + "/test.vault")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<20 {
                group.addTask {
                    try await vault.set(secret("v\(index)"), service: "shared", account: "a\(index)")
                    #expect(try await vault.password(service: "shared", account: "a\(index)") == "v\(index)")
                }
            }
            try await group.waitForAll()
        }
        let accounts = try await vault.accounts(service: "shared")
        #expect(accounts.count == 20)
    }
}
