import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A progress bar on standard error for work over many bytes.
///
/// It draws only when standard error is a terminal and `--quiet` was not given, only for
/// work large enough to take a noticeable time, and at most ten times a second, so it costs
/// nothing measurable on the hot path.
final class ProgressBar: Sendable {
    /// Work below this size finishes too fast for a bar to help.
    static let minimumTotal: Int64 = 64 << 20

    private struct State {
        var done: Int64 = 0
        var lastDraw: UInt64 = 0
        var drawn = false
    }

    private let label: String
    private let total: Int64
    private let state = Mutex(State())

    private init(label: String, total: Int64) {
        self.label = label
        self.total = total
    }

    /// A bar for `total` bytes, or nil when none should be shown.
    static func make(label: String, total: Int64?, quiet: Bool) -> ProgressBar? {
        guard !quiet, let total, total >= minimumTotal, Console.stderrIsTerminal else { return nil }
        return ProgressBar(label: label, total: total)
    }

    /// Records `count` more bytes done.
    func advance(_ count: Int) {
        let line: String? = state.withLock { state in
            state.done += Int64(count)
            let now = ProgressBar.nowMilliseconds()
            guard now &- state.lastDraw >= 100 else { return nil }
            state.lastDraw = now
            state.drawn = true
            return render(done: state.done)
        }
        if let line { Console.writeError(line) }
    }

    /// Clears the bar from the terminal.
    func finish() {
        let drawn = state.withLock { state in
            defer { state.drawn = false }
            return state.drawn
        }
        if drawn { Console.writeError("\r\u{1B}[K") }
    }

    /// The callback to hand to library calls.
    var callback: FileProgress { { [self] count in advance(count) } }

    private func render(done: Int64) -> String {
        let fraction = total > 0 ? min(1, Double(done) / Double(total)) : 1
        let width = 30
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled)
        let percent = Int(fraction * 100)
        return "\r\(label) [\(bar)] \(percent)% \(done >> 20)/\(total >> 20) MiB"
    }

    private static func nowMilliseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1000 + UInt64(time.tv_nsec) / 1_000_000
    }
}

/// The progress callback type the library takes.
typealias FileProgress = @Sendable (Int) -> Void
