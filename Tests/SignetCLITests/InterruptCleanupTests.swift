import Foundation
import SignetTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 29: a command stopped by SIGINT, SIGTERM or SIGHUP mid-write leaves nothing behind —
/// above all no decrypted plaintext under a hidden temporary name — says what it removed, and
/// exits with 128 + the signal's number. Real processes, fed through a pipe the test holds open
/// so that each is caught in the middle of its output; every wait is a hang guard.
@Suite("signet: interrupted commands remove their partial output")
struct InterruptCleanupTests {
    /// The temporary files `signet` writes beside `target` in `box`.
    static func leftovers(of target: String, in box: Sandbox) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: box.folder.path).filter { $0.hasPrefix(".\(target).signet-") }
    }

    /// Starts signet with `arguments` in `box`, writes `head` to its standard input (kept open),
    /// waits until its temporary output beside `target` holds bytes, sends `signal`, and returns
    /// the exit status and standard error.
    static func interrupt(_ arguments: [String], feeding head: Data, target: String, in box: Sandbox, with signal: Int32) async throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: SignetBinary.path)
        process.arguments = arguments
        process.currentDirectoryURL = box.folder
        process.environment = SignetBinary.isolatedEnvironment(in: box.folder)
        let input = Pipe()
        let errors = try box.write("stderr.txt", "")
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errors))
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        try input.fileHandleForWriting.write(contentsOf: head)
        let deadline = TestTimeouts.deadline
        var started = false
        while !started, ContinuousClock.now < deadline, process.isRunning {
            if let name = try leftovers(of: target, in: box).first,
                let size = try FileManager.default.attributesOfItem(atPath: box.path(name))[.size] as? Int, size > 0
            {
                started = true
            } else {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        let log = (try? box.readText("stderr.txt")) ?? ""
        try #require(started, "signet never began writing \(target): \(log)")
        kill(process.processIdentifier, signal)
        while process.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        try? input.fileHandleForWriting.close()
        try #require(!process.isRunning, "signet did not stop on signal \(signal)")
        return (process.terminationStatus, try box.readText("stderr.txt"))
    }

    @Test(arguments: [(SIGTERM, "SIGTERM"), (SIGINT, "SIGINT"), (SIGHUP, "SIGHUP")])
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
}
