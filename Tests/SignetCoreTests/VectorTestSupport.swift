import Foundation

/// Adds up progress reports, which may arrive from any thread.
final class ByteCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var sum = 0

    func add(_ count: Int) {
        lock.lock()
        sum += count
        lock.unlock()
    }

    var total: Int {
        lock.lock()
        defer { lock.unlock() }
        return sum
    }
}
