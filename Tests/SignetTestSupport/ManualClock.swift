import Foundation
import SignetCore

/// A clock stopped at `seconds` since 1970.
public func fixedClock(_ seconds: Int64) -> WallClock {
    .fixed(Date(timeIntervalSince1970: TimeInterval(seconds)))
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

    /// The clock as the ``WallClock`` the library's APIs take: it reads this one, wherever
    /// it has been moved to.
    public var wallClock: WallClock { WallClock { self.now } }
}
