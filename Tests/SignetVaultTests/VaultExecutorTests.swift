import Foundation
import SignetCore
import SignetTestSupport
import Synchronization
import Testing
@testable import SignetVault

/// A vault's blocking work — SQLite waiting on another process's lock, scrypt — runs off
/// Swift's cooperative threads: vaults stuck on a lock never stall an unrelated task.
@Suite struct VaultExecutorTests {
    @Test func vaultsWaitingOnALockDoNotStallUnrelatedTasks() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/test.vault"
        _ = try VaultTest.newVault(at: path)
        // Another process holds the write lock until its standard input ends.
        let sqlite = try #require(ProcessRunner.which("sqlite3"), "sqlite3 is not installed (Scripts/test installs it)")
        let holder = try ChildProcess(sqlite, [path], stdin: .pipe, stdout: .file(folder.fileURL("holder.txt")))
        let input = try #require(holder.input)
        defer { holder.send(SIGKILL) }
        try input.write(contentsOf: Data("BEGIN IMMEDIATE;\nSELECT 'locked';\n".utf8))
        let deadline = TestTimeouts.deadline
        while !((try? folder.readText("holder.txt")) ?? "").contains("locked"), holder.isRunning, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        try #require(((try? folder.readText("holder.txt")) ?? "").contains("locked"), "sqlite3 did not take the lock")

        // More writers than there are cooperative threads, each waiting on the lock (for three
        // hang guards, not the usual 10 seconds: this task may be kept waiting for a thread
        // before it releases the lock, however fast it is): on the shared threads they would
        // leave none for anybody else.
        let writers = ProcessInfo.processInfo.activeProcessorCount + 2
        let entered = Counter()
        let finished = Counter()
        let writes = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<writers {
                    group.addTask {
                        let vault = try await VaultExecutor.run { () throws in
                            try Vault(path: path, credentials: passphrase(), busyTimeout: TestTimeouts.hangGuard * 3)
                        }
                        entered.increment()
                        try await vault.set(secret("value \(index)"), service: "s", account: "a\(index)")
                        finished.increment()
                    }
                }
                try await group.waitForAll()
            }
        }
        // The hang guard counts this task's own polls, not the clock: the whole suite keeps Swift's
        // few threads so busy that a task can wait minutes for one (the writers too), which is
        // not a hang; 15,000 polls of 20 ms are the usual five minutes when it is not.
        var polls = 0
        while entered.value < writers, polls < 15_000 {
            try await Task.sleep(for: .milliseconds(20))
            polls += 1
        }
        try #require(entered.value == writers, "the writers never all started (\(entered.value) of \(writers))")
        // An unrelated task completes while every writer still waits: the lock is released
        // only after it did, so there is no race, only an order.
        let unrelated = await Task.detached { await Task.yield(); return 42 }.value
        #expect(unrelated == 42)
        #expect(finished.value == 0, "a writer finished while the lock was held")
        try input.close()
        try await writes.value
        #expect(finished.value == writers)
        let vault = try Vault(path: path, credentials: passphrase())
        #expect(try await vault.allAccounts().count == writers)
        #expect(try await holder.exit() == 0)
    }

    @Test func openingAndCreatingRunOffTheCooperativeThreads() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/created.vault"
        let created = try await Vault.create(at: path, credentials: passphrase(), kdf: testKDF)
        try await created.set(secret("one"), service: "s", account: "a")
        let opened = try await Vault.open(path: path, credentials: passphrase())
        #expect(try await opened.password(service: "s", account: "a") == "one")
        let locked = try await Vault.open(path: path)
        #expect(await locked.isLocked)
        let wrong = try await VaultTest.thrownAsync { try await Vault.open(path: path, credentials: VaultCredentials(passphrase: SecretBytes(Array("nope".utf8)))) }
        #expect(wrong == .wrongPassphrase(path: path))
        let again = try await VaultTest.thrownAsync { try await Vault.create(at: path, credentials: passphrase(), kdf: testKDF) }
        #expect(again == .vaultExists(path: path))
    }
}

/// A count shared by tasks.
private final class Counter: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
