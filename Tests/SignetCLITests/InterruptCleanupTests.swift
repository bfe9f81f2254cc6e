import Foundation
import SignetTestSupport
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 29: a command stopped by SIGINT, SIGTERM or SIGHUP mid-write leaves nothing behind —
/// above all no decrypted plaintext under a hidden temporary name — says what it removed, and
/// exits with 128 + the signal's number. Real processes, fed through a pipe the test holds open
/// so that each is caught in the middle of its output — or, for `bundle create` and `bundle
/// extract`, which read files, frozen with SIGSTOP once they are; every wait is a hang guard.
@Suite("signet: interrupted commands remove their partial output")
struct InterruptCleanupTests {
    /// The temporary files `signet` writes beside `target` in `box`.
    static func leftovers(of target: String, in box: Sandbox) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: box.folder.path).filter { $0.hasPrefix(".\(target).signet-") }
    }

    /// Starts signet with `arguments` in `box`, writes `head` to its standard input (kept open),
    /// waits until its temporary output beside `target` holds bytes, sends `signal`, and returns
    /// the exit status and standard error. The waiting runs on a thread of its own.
    static func interrupt(_ arguments: [String], feeding head: Data, target: String, in box: Sandbox, with signal: Int32) async throws -> (Int32, String) {
        let process = try ChildProcess(
            SignetBinary.path, arguments, in: box.folder, environment: SignetBinary.isolatedEnvironment(in: box.folder), stdin: .pipe,
            stderr: .file(box.folder.appendingPathComponent("stderr.txt")))
        let input = try #require(process.input)
        defer { process.send(SIGKILL) }
        let status = try await onOwnThread { () throws -> Int32 in
            let deadline = TestTimeouts.deadline
            // The write blocks while signet reads; a signet that stops reading is killed at the
            // hang guard, which ends the write (EPIPE) rather than the test run.
            let written = Flag()
            Thread.detachNewThread {
                while !written.isSet, ContinuousClock.now < deadline { usleep(100_000) }
                if !written.isSet { process.send(SIGKILL) }
            }
            defer { written.set() }
            try input.write(contentsOf: head)
            written.set()
            while process.isRunning {
                if let name = try leftovers(of: target, in: box).first,
                    let size = try FileManager.default.attributesOfItem(atPath: box.path(name))[.size] as? Int, size > 0
                {
                    process.send(signal)
                    let status = process.waitUntilExit(before: TestTimeouts.deadline)
                    try? input.close()
                    return try Self.cleanExit(process, status, after: signal)
                }
                guard ContinuousClock.now < deadline else { throw Stuck("signet never began writing \(target) (hang guard)") }
                usleep(20_000)
            }
            throw Stuck("signet ended (\(process.exitStatus ?? -1)) before it began writing \(target)")
        }
        return (status, try box.readText("stderr.txt"))
    }

    /// A flag one thread sets and another reads.
    final class Flag: Sendable {
        private let value = Mutex(false)
        var isSet: Bool { value.withLock { $0 } }
        func set() { value.withLock { $0 = true } }
    }

    /// Why a child could not be caught as the test needed.
    struct Stuck: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    @Test(arguments: [(SIGTERM, "SIGTERM"), (SIGINT, "SIGINT"), (SIGHUP, "SIGHUP"), (SIGQUIT, "SIGQUIT"), (SIGUSR1, "SIGUSR1")])
    func decryptLeavesNoPlaintext(signal: Int32, name: String) async throws {
        let box = try Sandbox()
        let recipient = try box.signetAgeKey("key.txt")
        // Decryption writes in 8 MiB batches: 12 MiB of a 20 MiB file gets one written.
        _ = try box.writeRandom("plain", size: 20 << 20)
        try #require(try box.signet("encrypt", "-r", recipient, "-o", "secret.age", "plain").status == 0)
        let sealed = try box.read("secret.age")
        let (status, stderr) = try await Self.interrupt(
            ["decrypt", "-i", "key.txt", "-o", "out.txt"], feeding: sealed.prefix(12 << 20), target: "out.txt", in: box, with: signal)
        #expect(status == 128 + signal, "\(stderr)")
        #expect(stderr.contains("interrupted by \(name)") && stderr.contains("removed the partial output"), "\(stderr)")
        #expect(try Self.leftovers(of: "out.txt", in: box).isEmpty, "the decrypted part was left behind")
        #expect(!box.exists("out.txt"))
    }

    @Test func encryptLeavesNothingAndTheOldFileStands() async throws {
        let box = try Sandbox()
        let recipient = try box.signetAgeKey("key.txt")
        _ = try box.write("out.age", "the old file\n")
        let (status, stderr) = try await Self.interrupt(
            ["encrypt", "-r", recipient, "--force", "-o", "out.age"], feeding: Data(repeating: 0x61, count: 12 << 20), target: "out.age", in: box,
            with: SIGTERM)
        #expect(status == 128 + SIGTERM, "\(stderr)")
        #expect(try Self.leftovers(of: "out.age", in: box).isEmpty)
        #expect(try box.readText("out.age") == "the old file\n", "the old file was replaced or torn")
    }

    // MARK: - Bundles: files read from disk, so the command is frozen mid-write to be caught there

    /// How many runs may finish before they are caught mid-write (a hang guard's cousin: on a
    /// machine fast enough to write the input between two polls, the test tries again).
    static let attempts = 3

    /// Whether a temporary file of `target` in `box` holds at least one byte and fewer than
    /// `limit`: the command is writing it and is far from done.
    static func partialOutput(of target: String, in box: Sandbox, below limit: Int) throws -> Bool {
        try leftovers(of: target, in: box).contains { name in
            let size = (try? FileManager.default.attributesOfItem(atPath: box.path(name))[.size] as? Int) ?? 0
            return size > 0 && size < limit
        }
    }

    /// The state letter (`R`, `S`, `D`, `T`…) of every thread of the process `pid`, from
    /// /proc; empty where there is no /proc.
    static func threadStates(of pid: Int32) -> [Character] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.compactMap { task in
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/stat", encoding: .utf8),
                let end = stat.lastIndex(of: ")")
            else { return nil }
            return stat[end...].dropFirst(2).first
        }
    }

    /// Starts signet with `arguments` in `box` (standard input empty) and polls `started` until
    /// it says the command is in the middle of its output; then freezes it with SIGSTOP, asks
    /// `started` again (a frozen process cannot finish behind the test's back), sends `signal`
    /// and lets it go on with SIGCONT. Returns the exit status and standard error — or nil
    /// when the command finished before it could be caught, for the caller to try again.
    static func interruptMidWrite(
        _ arguments: [String], in box: Sandbox, with signal: Int32, started: @escaping @Sendable () throws -> Bool
    ) async throws -> (status: Int32, stderr: String)? {
        let process = try ChildProcess(
            SignetBinary.path, arguments, in: box.folder, environment: SignetBinary.isolatedEnvironment(in: box.folder),
            stderr: .file(box.folder.appendingPathComponent("stderr.txt")))
        defer { process.send(SIGKILL) }
        // The slices are timed on a thread of the test's own: on the cooperative pool, a
        // loaded suite once left the task unscheduled past its hang guard.
        guard let status = try await onOwnThread({ try Self.freezeInSlices(process, until: started, then: signal) }) else { return nil }
        return (status, try box.readText("stderr.txt"))
    }

    /// Runs `process` only in short slices between stops, asking `started` while it is stopped:
    /// however busy the machine, it cannot pass from "not started" to "done" unseen (a slice is
    /// far shorter than writing the output). Once `started` says yes, sends `signal` and waits
    /// for the end; returns its status, or nil when the process finished without being caught.
    static func freezeInSlices(_ process: ChildProcess, until started: () throws -> Bool, then signal: Int32) throws -> Int32? {
        let pid = process.processIdentifier
        let deadline = TestTimeouts.deadline
        func running() -> Bool { threadStates(of: pid).contains { $0 != "T" && $0 != "t" } }
        // Returns once every thread has stopped (or the process has ended and is reaped).
        func waitUntilStopped() throws {
            while process.isRunning, running() {
                guard ContinuousClock.now < deadline else { throw Stuck("signet did not stop on SIGSTOP (threads: \(String(threadStates(of: pid))))") }
                usleep(1000)
            }
        }
        process.send(SIGSTOP)
        try waitUntilStopped()
        var slices = 0
        while try !started() {
            guard process.isRunning else { return nil }
            guard ContinuousClock.now < deadline else { throw Stuck("signet began no output in \(slices) slices (hang guard)") }
            process.send(SIGCONT)
            usleep(3000)
            process.send(SIGSTOP)
            try waitUntilStopped()
            slices += 1
        }
        process.send(signal)
        process.send(SIGCONT)
        return try cleanExit(process, process.waitUntilExit(before: TestTimeouts.deadline), after: signal)
    }

    /// `status`, when the process caught `signal` and exited by itself (its cleanup ran); a
    /// process the signal killed, or one still running, is an error.
    static func cleanExit(_ process: ChildProcess, _ status: Int32?, after signal: Int32) throws -> Int32 {
        guard let status else { throw Stuck("signet did not stop on signal \(signal)") }
        if let killer = process.terminationSignal { throw Stuck("signal \(killer) killed signet: it did not catch \(signal) and exit") }
        return status
    }

    @Test func bundleCreateLeavesNothingAndTheOldFileStands() async throws {
        let box = try Sandbox()
        try box.makeKey("k")
        // 512 MiB (sparse: quick to make, written out whole): far more than one slice can write.
        let size = 512 << 20
        try box.shell("mkdir big && truncate -s \(size) big/big.bin")
        let arguments = [
            "bundle", "create", "-q", "--key", box.path("k"), "--name", "app", "--version", "1", "--force", "-o", box.path("out.bundle"),
            box.path("big"),
        ]
        for _ in 0..<Self.attempts {
            _ = try box.write("out.bundle", "the old file\n")
            // Caught any time its temporary file exists: mid-write, or written and not yet in place
            // (a busy machine may not show it mid-write; the cleanup promise is the same).
            let stopped = try await Self.interruptMidWrite(arguments, in: box, with: SIGTERM) {
                try !Self.leftovers(of: "out.bundle", in: box).isEmpty
            }
            guard let stopped else { continue }
            #expect(stopped.status == 128 + SIGTERM, "\(stopped.stderr)")
            #expect(stopped.stderr.contains("interrupted by SIGTERM") && stopped.stderr.contains("removed the partial output"), "\(stopped.stderr)")
            #expect(try Self.leftovers(of: "out.bundle", in: box).isEmpty, "the partial bundle was left behind")
            #expect(try box.readText("out.bundle") == "the old file\n", "the old file was replaced or torn")
            return
        }
        Issue.record("signet bundle create finished \(Self.attempts) times before it could be caught mid-write")
    }

    @Test func bundleExtractLeavesNoStagingFolderAndTheOldTreeStands() async throws {
        let box = try Sandbox()
        try box.makeKey("k")
        try box.trustInit("trust.json", keys: ["k"])
        try box.makeTree("v1", ["a.txt": "version one\n", "sub/b.txt": "bravo\n"])
        try box.createBundle("v1.bundle", keys: ["k"], version: 1, inputs: ["v1"])
        let size = 512 << 20
        try box.shell("mkdir v2 && truncate -s \(size) v2/big.bin")
        try box.createBundle("v2.bundle", keys: ["k"], version: 2, inputs: ["v2"])
        // The staging folders (`.dest.signet-XXXXXX`) and set-aside trees (`.dest.signet-old-…`) beside dest.
        let staging: @Sendable () throws -> [String] = { try Self.leftovers(of: "dest", in: box) }
        for attempt in 1...Self.attempts {
            // An earlier extraction, with a state folder of its own each time (a finished run recorded version 2).
            let state = "state\(attempt)"
            try? FileManager.default.removeItem(atPath: box.path("dest"))
            let first = try box.bundleExtract("v1.bundle", to: "dest", state: state)
            try #require(first.status == 0, "\(first)")
            let before = try box.snapshot(below: "dest")
            let arguments = [
                "bundle", "extract", "-q", "--trust", box.path("trust.json"), "--state", box.path(state), box.path("v2.bundle"), box.path("dest"),
            ]
            // Caught any time its staging folder exists (mid-write, or staged and not yet swapped in).
            let stopped = try await Self.interruptMidWrite(arguments, in: box, with: SIGTERM) { try !staging().isEmpty }
            guard let stopped else { continue }
            #expect(stopped.status == 128 + SIGTERM, "\(stopped.stderr)")
            #expect(stopped.stderr.contains("interrupted by SIGTERM") && stopped.stderr.contains("removed the partial output"), "\(stopped.stderr)")
            #expect(try staging().isEmpty, "a staging folder was left behind")
            #expect(Sandbox.differences(before, try box.snapshot(below: "dest")).isEmpty, "the earlier extraction changed")
            let checked = try box.bundleCheck("dest")
            #expect(checked.status == 0, "the earlier extraction no longer checks: \(checked)")
            // Nothing was recorded, and no lock is left: version 2 extracts now.
            let again = try box.bundleExtract("v2.bundle", to: "dest", state: state)
            #expect(again.status == 0, "\(again)")
            return
        }
        Issue.record("signet bundle extract finished \(Self.attempts) times before it could be caught mid-write")
    }
}
