import Foundation
import SignetCore
import SignetPKCS11
import SignetTestSupport
import Synchronization
import Testing

/// A token that takes its time to sign (a smart card: tens to hundreds of milliseconds; a module
/// waiting for a PIN pad: as long as a person takes) does not stall the rest of the process:
/// `PKCS11Signer`'s async calls wait for the token off Swift's cooperative threads.
@Suite("PKCS#11 tokens that take their time")
struct SlowTokenTests {
    @Test("signatures waiting on a slow token leave the cooperative threads free for unrelated tasks")
    func aSlowTokenDoesNotStallUnrelatedTasks() async throws {
        let path = try FakeModule.build(.slowSign)
        let module = try PKCS11Module.load(path: path)
        let key = try MisbehavingModuleTests.key(on: module)
        let signer = try PKCS11Signer(module: module, key: key, pin: MisbehavingModuleTests.pin)
        let digest = DigestAlgorithm.sha256.hash(MisbehavingModuleTests.message)

        // The hang guard's release, on a thread of its own: if the signatures held the
        // cooperative threads, nothing else could release them.
        let flags = Flags()
        Thread.detachNewThread {
            let deadline = Date().addingTimeInterval(TimeInterval(TestTimeouts.hangGuardSeconds))
            while !flags.finished.load(ordering: .sequentiallyConsistent), Date() < deadline { usleep(10_000) }
            if !flags.finished.load(ordering: .sequentiallyConsistent) {
                flags.releasedByGuard.store(true, ordering: .sequentiallyConsistent)
                try? FakeModule.release(path)
            }
        }

        // More signatures than the machine has cores (the cooperative pool's width), all
        // waiting on the token: one inside C_Sign, the others for the module's lock.
        let count = 4 * ProcessInfo.processInfo.activeProcessorCount
        let signatures = (0..<count).map { _ in Task { try await signer.sign(digest: digest) } }
        // Until the token is inside C_Sign, watched from a thread of its own.
        try await onOwnThread {
            let deadline = Date().addingTimeInterval(TimeInterval(TestTimeouts.hangGuardSeconds))
            while try FakeModule.calls("C_Sign", in: path) < 1, Date() < deadline { usleep(1_000) }
        }
        #expect(try FakeModule.calls("C_Sign", in: path) >= 1, "no signature reached the token")

        // An unrelated task runs, and this test goes on, while the token still holds them all.
        let unrelated = await Task.detached { (1...100).reduce(0, +) }.value
        #expect(unrelated == 5050)
        let releasedByGuard = flags.releasedByGuard.load(ordering: .sequentiallyConsistent)
        #expect(!releasedByGuard, "the unrelated task waited for the token: a cooperative thread was blocked")

        flags.finished.store(true, ordering: .sequentiallyConsistent)
        try FakeModule.release(path)
        for signature in signatures {
            #expect(try await signature.value.first == 0x30)
        }
        #expect(try FakeModule.calls("C_Sign", in: path) == count)
    }

    /// What the hang guard's thread and the test tell each other.
    final class Flags: Sendable {
        let finished = Atomic<Bool>(false)
        let releasedByGuard = Atomic<Bool>(false)
    }
}
