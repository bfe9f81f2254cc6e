import Foundation

/// A clock stopped at `seconds` since 1970, for APIs that take a `@Sendable () -> Date`.
public func fixedClock(_ seconds: Int64) -> @Sendable () -> Date {
    { Date(timeIntervalSince1970: TimeInterval(seconds)) }
}

/// A clock tests move by hand, safe to read from any thread.
public final class ManualClock: @unchecked Sendable {
    private let lock = NSLock()
    private var seconds: TimeInterval

    /// A clock showing `seconds` since 1970.
    public init(_ seconds: Int64) { self.seconds = TimeInterval(seconds) }

    /// The time the clock shows.
    public var now: Date {
        lock.lock()
        defer { lock.unlock() }
        return Date(timeIntervalSince1970: seconds)
    }

    /// Moves the clock forward by `interval` seconds (backward when negative).
    public func advance(by interval: TimeInterval) {
        lock.lock()
        seconds += interval
        lock.unlock()
    }

    /// The clock as the `@Sendable () -> Date` the library's APIs take.
    public var function: @Sendable () -> Date { { self.now } }
}
