import Foundation
import SignetCore
import SignetPKCS11
import SignetTestSupport
import Synchronization
import Testing

/// A token that takes its time to sign (a smart card: tens to hundreds of milliseconds; a module
/// waiting for a PIN pad: as long as a person takes) must not hold one of Swift's cooperative
/// threads (one per core) meanwhile: `PKCS11Signer`'s async calls reach the token from Dispatch
/// threads. The fake module's `C_Sign` calls a probe on the calling thread, which records whether
/// a Swift task is running there — the same whatever else the process is doing.
/// `C_Sign` calls made from inside a Swift task, and from outside any.
final class TokenCallCounts: Sendable {
    let inTask = Atomic<Int>(0)
    let outsideTasks = Atomic<Int>(0)
}

private let tokenCalls = TokenCallCounts()

/// The probe: counts the call as made inside a task or outside any.
private func probeTokenCall() {
    if withUnsafeCurrentTask(body: { $0 != nil }) {
        tokenCalls.inTask.add(1, ordering: .sequentiallyConsistent)
    } else {
        tokenCalls.outsideTasks.add(1, ordering: .sequentiallyConsistent)
    }
}

@Suite("PKCS#11 tokens that take their time")
struct SlowTokenTests {

    @Test("the async API's token calls run outside Swift's tasks, on Dispatch threads")
    func tokenCallsLeaveTheCooperativeThreadsAlone() async throws {
        let path = try FakeModule.build(.probedSign)
        let module = try PKCS11Module.load(path: path)
        try FakeModule.setProbe(path, probeTokenCall)
        let key = try MisbehavingModuleTests.key(on: module)
        let signer = try PKCS11Signer(module: module, key: key, pin: MisbehavingModuleTests.pin)

        // The synchronous API, called from this test's task, runs the token in the task: the
        // probe can tell.
        _ = try module.sign(MisbehavingModuleTests.digest, with: key, mechanism: .ecdsa, pin: MisbehavingModuleTests.pin)
        #expect(tokenCalls.inTask.load(ordering: .sequentiallyConsistent) == 1)
        #expect(tokenCalls.outsideTasks.load(ordering: .sequentiallyConsistent) == 0)

        // The async API, as many at once as twice the cores.
        let digest = DigestAlgorithm.sha256.hash(MisbehavingModuleTests.message)
        let count = 2 * ProcessInfo.processInfo.activeProcessorCount
        try await withThrowingTaskGroup(of: [UInt8].self) { group in
            for _ in 0..<count { group.addTask { try await signer.sign(digest: digest) } }
            for try await signature in group { #expect(signature.first == 0x30) }
        }
        #expect(tokenCalls.inTask.load(ordering: .sequentiallyConsistent) == 1, "a token call ran on a cooperative thread, inside a task")
        #expect(tokenCalls.outsideTasks.load(ordering: .sequentiallyConsistent) == count)
        #expect(try FakeModule.calls("C_Sign", in: path) == count + 1)
    }
}
