/// How long a test waits for something that should happen before it calls it a hang.
///
/// A timeout in a test is a hang guard, never a speed expectation: the suite runs its live
/// servers beside hundreds of other tests, on machines that are rarely idle (a parallel build,
/// a CPU hog), where an answer that takes milliseconds alone can take a minute. So every client,
/// poll and wait in the tests gives up only after minutes, and asserts nothing about time.
/// How fast the server answers under load is a benchmark's business (`Scripts/bench`).
public enum TestTimeouts {
    /// The hang guard, in whole seconds: for APIs that take a count of seconds (NIO's
    /// `TimeAmount.seconds(_:)`, a CLI's `--timeout`, a python client).
    public static let hangGuardSeconds: Int64 = 300

    /// The hang guard as a `Duration`.
    public static var hangGuard: Duration { .seconds(hangGuardSeconds) }

    /// The moment the hang guard, started now, runs out.
    public static var deadline: ContinuousClock.Instant { .now + hangGuard }
}
