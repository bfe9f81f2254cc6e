import Foundation
import SignetCore
import SignetTestSupport
import SignetVault
import Testing

/// Real processes against one vault file: writers killed with SIGKILL at random moments, and
/// several processes writing and reading at once (docs/formats/vault.md "Writes and crashes").
@Suite("vault durability and concurrency", .serialized)
struct VaultDurabilityTests {
    static let passphrase = "durability test passphrase"

    /// A bash loop that stores `value-N` under `svc`/`PREFIX-N` for N = start… and prints
    /// `ack N` only after `signet vault set` has returned 0.
    static func writerScript(vault: String, prefix: String, start: Int, count: Int?) -> String {
        let limit = count.map { "[ $i -lt \(start + $0) ]" } ?? "true"
        return """
            i=\(start)
            while \(limit); do
                printf 'value-%d' "$i" | '\(SignetBinary.path)' vault set svc "\(prefix)-$i" --vault '\(vault)' -q || exit 1
                echo "ack $i"
                i=$((i + 1))
            done
            """
    }

    static func startBash(_ script: String, in sandbox: Sandbox, output: String) throws -> ChildProcess {
        var environment = ProcessInfo.processInfo.environment
        environment["SIGNET_PASSPHRASE"] = passphrase
        environment["SIGNET_VAULT"] = nil
        return try ChildProcess("/bin/bash", ["-c", script], in: sandbox.folder, environment: environment, stdout: .file(URL(fileURLWithPath: output)))
    }

    static func acknowledged(_ output: String) throws -> [Int] {
        try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n").compactMap { line in
            line.hasPrefix("ack ") ? Int(line.dropFirst(4)) : nil
        }
    }

    static func makeVault(_ sandbox: Sandbox) throws -> String {
        let vault = sandbox.path("durable-\(UUID().uuidString).db")
        let created = try sandbox.signet(
            "vault", "init", "--vault", vault, "--scrypt-log-n", "10", "-q", environment: ["SIGNET_PASSPHRASE": passphrase])
        try #require(created.status == 0, "\(created)")
        return vault
    }

    static func integrityCheck(_ sandbox: Sandbox, _ vault: String) throws {
        let check = try sandbox.must("sqlite3", vault, "PRAGMA integrity_check;")
        #expect(check.out.trimmingCharacters(in: .whitespacesAndNewlines) == "ok", "integrity_check: \(check.out)")
    }

    @Test("SIGKILL at random moments loses no acknowledged write and never corrupts the vault")
    func killedWriters() async throws {
        let sandbox = try Sandbox()
        let vault = try Self.makeVault(sandbox)
        var acked: Set<Int> = []
        var next = 0
        var generator = SystemRandomNumberGenerator()
        let rounds = 25
        for round in 0..<rounds {
            let output = sandbox.path("acks-\(round).txt")
            let writer = try Self.startBash(
                Self.writerScript(vault: vault, prefix: "acct", start: next, count: nil), in: sandbox, output: output)
            // From "still starting" to "a few writes in": the kill lands anywhere in a write.
            try await Task.sleep(for: .milliseconds(Int.random(in: 20...600, using: &generator)))
            // Everything whose command line names this vault: the bash loop and its signet.
            // Twice, in case the loop forked a new writer between the scan and the kill.
            for _ in 0..<2 {
                _ = try sandbox.run("/usr/bin/env", ["pkill", "-KILL", "-f", vault], stdin: nil)
            }
            writer.waitUntilExit()
            let roundAcks = try Self.acknowledged(output)
            acked.formUnion(roundAcks)
            next = max(next, (roundAcks.max() ?? next - 1) + 2)  // skip the one that may be half-done
            // Every round: the file opens and passes SQLite's own check.
            try Self.integrityCheck(sandbox, vault)
        }
        #expect(acked.count >= rounds / 2, "too few writes were acknowledged to prove anything: \(acked.count)")

        let reopened = try Vault(path: vault, credentials: VaultCredentials(passphrase: SecretBytes(Array(Self.passphrase.utf8))))
        let stored = Set(try await reopened.accounts(service: "svc").map(\.account))
        for index in acked.sorted() {
            #expect(stored.contains("acct-\(index)"), "acknowledged write acct-\(index) is missing")
            if stored.contains("acct-\(index)") {
                #expect(try await reopened.password(service: "svc", account: "acct-\(index)") == "value-\(index)")
            }
        }
        // Unacknowledged items that made it are whole too (every one decrypts).
        for account in stored {
            let value = try await reopened.password(service: "svc", account: account)
            #expect(value == "value-" + account.dropFirst("acct-".count))
        }
    }

    @Test("several processes write and read one vault at once")
    func concurrentProcesses() async throws {
        let sandbox = try Sandbox()
        let vault = try Self.makeVault(sandbox)
        let writers = 4
        let perWriter = 12
        var processes: [(ChildProcess, String)] = []
        for writer in 0..<writers {
            let output = sandbox.path("writer-\(writer).txt")
            let script = Self.writerScript(vault: vault, prefix: "w\(writer)", start: 0, count: perWriter)
            processes.append((try Self.startBash(script, in: sandbox, output: output), output))
        }
        // A reader listing while they write: every listing is a consistent, parseable snapshot.
        var listings = 0
        while processes.contains(where: { $0.0.isRunning }) {
            let listing = try sandbox.signet("vault", "list", "--json", "--vault", vault)
            #expect(listing.status == 0, "\(listing)")
            let parsed = try JSONSerialization.jsonObject(with: listing.stdout) as? [[String: Any]]
            #expect(parsed != nil)
            listings += 1
        }
        for (process, output) in processes {
            #expect(process.waitUntilExit() == 0, "a writer failed (a busy vault must wait, not fail)")
            #expect(try Self.acknowledged(output).count == perWriter)
        }
        #expect(listings > 0)
        let reopened = try Vault(path: vault, credentials: VaultCredentials(passphrase: SecretBytes(Array(Self.passphrase.utf8))))
        let items = try await reopened.allAccounts()
        #expect(items.count == writers * perWriter)
        for writer in 0..<writers {
            for index in 0..<perWriter {
                #expect(try await reopened.password(service: "svc", account: "w\(writer)-\(index)") == "value-\(index)")
            }
        }
        try Self.integrityCheck(sandbox, vault)
    }
}
