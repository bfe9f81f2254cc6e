import Foundation

/// Runs `body` on a thread of its own and returns what it returns (or throws what it throws),
/// leaving the calling task suspended meanwhile.
///
/// For loops whose timing matters — freezing a child in slices, polling it — in a suite where
/// hundreds of tests wait synchronously on their programs: those waits hold the few threads
/// of Swift's cooperative pool, and a task that needs one for every step can wait minutes for
/// each. An operating-system thread is scheduled fairly whatever the pool does. `body` must
/// not use `#expect` or `#require` (they belong to the test's task): it throws instead.
public func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}
