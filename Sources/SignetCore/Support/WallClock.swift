import Foundation

/// Where a component reads the current wall-clock time: the system's clock, or one a test or
/// an embedder sets. (Swift's `Clock` protocol measures elapsed time, not dates.)
///
/// Every Signet type that stamps or judges a date (a signature's `created`, a resource's
/// expiry, a stored timestamp) takes one of these as its `clock`, ``system`` unless told
/// otherwise:
///
/// ```swift
/// let stopped = WallClock.fixed(Date(timeIntervalSince1970: 1_700_000_000))
/// let fast = WallClock { Date().addingTimeInterval(120) }   // two minutes ahead
/// print(stopped.now, fast.now)
/// ```
public struct WallClock: Sendable {
    private let read: @Sendable () -> Date

    /// A clock that reads `read` each time it is asked for ``now``.
    public init(_ read: @escaping @Sendable () -> Date) { self.read = read }

    /// The current time.
    public var now: Date { read() }

    /// The system's clock (`Date()`).
    public static let system = WallClock { Date() }

    /// A clock stopped at `date`: it always reads `date`.
    public static func fixed(_ date: Date) -> WallClock { WallClock { date } }
}
