import Dispatch

/// Where the async API's token calls run. A PKCS#11 module's functions block — a smart card
/// takes tens to hundreds of milliseconds to sign, a module's PIN prompt waits for a person —
/// so they run on Dispatch's threads, never on Swift's cooperative pool (one thread per core),
/// where a slow token would stall every unrelated task of the process.
enum TokenCalls {
    private static let queue = DispatchQueue(label: "signet.pkcs11.token-calls", qos: .userInitiated, attributes: .concurrent)

    /// Runs `body` on a Dispatch thread and returns what it returns, or throws what it throws.
    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }
}
