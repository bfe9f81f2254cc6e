import Foundation
import Glibc

// Running commands and timing them, as Scripts/bench's helpers did: `timed` (one run, its
// standard output to tmp/stdout and error to tmp/stderr), `bestOf` (the fastest of
// BENCH_RUNS), `opsRate` (back to back for BENCH_OPS_SECONDS), `medianMilliseconds` and
// `peakRSS`. A failed command stops the bench with the first lines of its standard error.

/// A command's standard output, captured.
struct Captured {
    var status: ExitStatus
    var output: String
}

extension Bench {
    var stdoutFile: String { tmp + "/stdout" }
    var stderrFile: String { tmp + "/stderr" }

    /// Starts `arguments` in the background (registered; see Spawn.swift).
    func spawn(
        _ arguments: [String], stdin: Redirect = .null, stdout: Redirect, stderr: Redirect,
        environment: [String: String] = [:], directory: String? = nil
    ) -> pid_t {
        do {
            return try rawSpawn(arguments, stdin: stdin, stdout: stdout, stderr: stderr, environment: environment, directory: directory)
        } catch {
            die("\(error)")
        }
    }

    /// Runs `arguments` to its end; the hang guard stops the bench after `timeout` seconds.
    @discardableResult
    func run(
        _ arguments: [String], stdin: Redirect = .null, stdout: Redirect? = nil, stderr: Redirect? = nil,
        environment: [String: String] = [:], directory: String? = nil, timeout: Double = 3600
    ) -> ExitStatus {
        let pid = spawn(
            arguments, stdin: stdin, stdout: stdout ?? .file(stdoutFile), stderr: stderr ?? .file(stderrFile),
            environment: environment, directory: directory)
        guard let status = waitForChild(pid, timeout: timeout) else {
            die("command did not finish in \(Int(timeout)) s (hang guard): \(arguments.joined(separator: " "))")
        }
        return status
    }

    /// Runs `arguments`; on failure stops the bench with `failure` and its standard error.
    func mustRun(
        _ arguments: [String], _ failure: String, stdout: Redirect = .null, environment: [String: String] = [:],
        directory: String? = nil, timeout: Double = 3600
    ) {
        if !run(arguments, stdout: stdout, environment: environment, directory: directory, timeout: timeout).succeeded {
            failWithStderr(failure)
        }
    }

    /// Runs `arguments` with standard output captured (standard error to tmp/stderr, or `stderr`).
    func capture(
        _ arguments: [String], stderr: Redirect? = nil, environment: [String: String] = [:], timeout: Double = 3600
    ) -> Captured {
        let file = tmp + "/capture"
        let status = run(arguments, stdout: .file(file), stderr: stderr, environment: environment, timeout: timeout)
        let output = readText(file)
        try? FileManager.default.removeItem(atPath: file)
        return Captured(status: status, output: output)
    }

    /// Stops the bench with `message` and the first 20 lines of the last command's standard error.
    func failWithStderr(_ message: String) -> Never {
        let lines = readText(stderrFile).split(separator: "\n", omittingEmptySubsequences: false).prefix(20)
        var text = message
        if !readText(stderrFile).isEmpty {
            text += "\n" + lines.map { "    | \($0)" }.joined(separator: "\n")
            if text.hasSuffix("\n    | ") { text.removeLast("\n    | ".count) }
        }
        die(text)
    }

    /// One run of `arguments` (standard output to tmp/stdout unless `stdout`): its wall time in µs.
    func timed(_ arguments: [String], stdout: Redirect? = nil) -> Int {
        let start = monotonicMicroseconds()
        let status = run(arguments, stdout: stdout)
        let elapsed = monotonicMicroseconds() - start
        if !status.succeeded { failWithStderr("command failed (exit \(status.code)): \(arguments.joined(separator: " "))") }
        return elapsed
    }

    /// Several commands one after the other, timed together (a baseline made of standard tools).
    func timedAll(_ commands: [[String]], stdout: Redirect? = nil) -> Int {
        let start = monotonicMicroseconds()
        for arguments in commands {
            let status = run(arguments, stdout: stdout)
            if !status.succeeded { failWithStderr("command failed (exit \(status.code)): \(arguments.joined(separator: " "))") }
        }
        return monotonicMicroseconds() - start
    }

    /// The fastest of BENCH_RUNS runs of `body` (which returns one run's µs).
    func bestOf(_ body: () -> Int) -> Int {
        var best = Int.max
        for _ in 0..<settings.runs { best = min(best, body()) }
        return best
    }

    /// `arguments` back to back for BENCH_OPS_SECONDS after one warm-up: runs per second, "%.1f".
    func opsRate(_ arguments: [String]) -> String {
        func once() {
            let status = run(arguments, stdout: .null)
            if !status.succeeded { failWithStderr("command failed (exit \(status.code)): \(arguments.joined(separator: " "))") }
        }
        once()
        let start = monotonicMicroseconds()
        let deadline = start + settings.opsSeconds * 1_000_000
        var count = 0
        var now = start
        repeat {
            once()
            count += 1
            now = monotonicMicroseconds()
        } while now < deadline
        return format("%.1f", Double(count) / (Double(now - start) / 1e6))
    }

    /// The median wall time of BENCH_HELP_RUNS runs of `arguments` after one warm-up, in ms ("%.1f").
    func medianMilliseconds(_ arguments: [String]) -> String {
        _ = timed(arguments)
        let times = (0..<settings.helpRuns).map { _ in timed(arguments) }.sorted()
        let middle = times.count / 2
        let median = times.count % 2 == 1 ? Double(times[middle]) : Double(times[middle - 1] + times[middle]) / 2
        return format("%.1f", median / 1000)
    }

    /// MiB/s of the test file read in `us` microseconds.
    func mibps(_ us: Int) -> String { format("%.1f", Double(settings.sizeMiB) / (Double(us) / 1e6)) }

    // ------------------------------------------------------------------ peak RSS --

    /// `time`: GNU /usr/bin/time -f %M (ru_maxrss from wait4); `proc`: the command runs in the
    /// background while VmHWM in /proc/PID/status is read every ~10 ms until it exits (VmHWM is
    /// the kernel's own high-water mark, so only growth in the last <10 ms could be missed).
    func pickRSSMethod() {
        rssMethod = settings.rssMethod
        if rssMethod != "proc" {
            let probe = tmp + "/rss"
            if FileManager.default.isExecutableFile(atPath: "/usr/bin/time"),
                run(["/usr/bin/time", "-f", "%M", "-o", probe, "true"], stdout: .null, stderr: .null).succeeded,
                Int(lastLine(readText(probe))) != nil
            {
                rssMethod = "time"
            } else if rssMethod == "time" {
                die("BENCH_RSS_METHOD=time but /usr/bin/time is missing or not GNU time")
            } else {
                rssMethod = "proc"
            }
        }
        if rssMethod == "proc" && !FileManager.default.isReadableFile(atPath: "/proc/self/status") {
            die("cannot measure peak RSS: no GNU /usr/bin/time and no /proc/PID/status")
        }
    }

    /// The peak resident set size of `arguments`, in KiB.
    func peakRSS(_ arguments: [String]) -> Int {
        let command = arguments.joined(separator: " ")
        if rssMethod == "time" {
            let file = tmp + "/rss"
            if !run(["/usr/bin/time", "-f", "%M", "-o", file] + arguments, stdout: .null).succeeded {
                failWithStderr("command failed: \(command)")
            }
            guard let kib = Int(lastLine(readText(file))) else { die("could not read the peak RSS of: \(command)") }
            return kib
        }
        let pid = spawn(arguments, stdout: .null, stderr: .file(stderrFile))
        var peak = 0
        while let (state, hwm) = readStatus(pid) {
            if state == "Z" || state == "X" { break }
            peak = max(peak, hwm)
            usleep(10_000)
        }
        guard let status = waitForChild(pid, timeout: 3600) else { die("command did not finish in 3600 s (hang guard): \(command)") }
        if !status.succeeded { failWithStderr("command failed (exit \(status.code)): \(command)") }
        guard peak > 0 else { die("could not read VmHWM for: \(command)") }
        return peak
    }

    /// State (its letter) and VmHWM (KiB) from /proc/PID/status; nil when unreadable or VmHWM is gone.
    private func readStatus(_ pid: pid_t) -> (String, Int)? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        var state = ""
        var hwm: Int?
        for line in text.split(separator: "\n") {
            if line.hasPrefix("State:") { state = String(line.dropFirst(6).drop(while: { $0 == " " || $0 == "\t" }).prefix(1)) }
            if line.hasPrefix("VmHWM:") { hwm = Int(line.filter(\.isASCIIDigit)) }
        }
        guard let hwm else { return nil }
        return (state, hwm)
    }
}

// --------------------------------------------------------------- formatting --

func format(_ pattern: String, _ arguments: any CVarArg...) -> String { String(format: pattern, arguments: arguments) }

/// Whether `text` is a plain non-negative number, as the table's figures are (`^[0-9.]+$`).
func isFigure(_ text: String) -> Bool { !text.isEmpty && text.allSatisfy { $0.isASCIIDigit || $0 == "." } }

/// A figure's value (its leading number, as awk reads it; 0 when none).
func value(_ text: String) -> Double {
    if let number = Double(text) { return number }
    let prefix = text.prefix(while: { $0.isASCIIDigit || $0 == "." || $0 == "-" })
    return Double(prefix) ?? Double(prefix.prefix(while: { $0 != "." })) ?? 0
}

/// "A/B" as the table shows it (1.2x, 0.97x, 0.0123x), or n/a.
func ratio(_ a: String, _ b: String) -> String {
    guard isFigure(a), isFigure(b), value(b) != 0 else { return "n/a" }
    let r = value(a) / value(b)
    return r >= 10 ? format("%.1fx", r) : r >= 0.1 ? format("%.2fx", r) : format("%.4fx", r)
}

/// Whether a ratio meets a target: "yes (>= 0.95x)", "NO (<= 1.1x)", or "-" without a ratio.
func meets(_ ratioText: String, _ target: Target) -> String {
    let figure = ratioText.hasSuffix("x") ? String(ratioText.dropLast()) : ratioText
    guard isFigure(figure) else { return "-" }
    return "\(target.isMet(by: value(figure)) ? "yes" : "NO") (\(target.text)x)"
}

/// "yes" or "NO".
func yesNo(_ met: Bool) -> String { met ? "yes" : "NO" }

/// Seconds with three decimals, from µs.
func secondsText(_ us: Int) -> String { format("%.3f", Double(us) / 1e6) }

/// The median of figures: the middle one as given, or the mean of the two middle ones ("%.2f").
func median(_ figures: [String]) -> String {
    let sorted = figures.sorted { value($0) < value($1) }
    guard !sorted.isEmpty else { return "" }
    if sorted.count % 2 == 1 { return sorted[sorted.count / 2] }
    return format("%.2f", (value(sorted[sorted.count / 2 - 1]) + value(sorted[sorted.count / 2])) / 2)
}

/// The file's text ("" when unreadable).
func readText(_ path: String) -> String {
    guard let data = FileManager.default.contents(atPath: path) else { return "" }
    return String(decoding: data, as: UTF8.self)
}

/// The last non-empty line of `text`.
func lastLine(_ text: String) -> String {
    text.split(separator: "\n").last.map(String.init) ?? ""
}

/// The first line of `text`.
func firstLine(_ text: String) -> String {
    text.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? ""
}

/// The whitespace-separated fields of `line`.
func fields(_ line: some StringProtocol) -> [String] {
    String(line).split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
}

/// The processors this process may run on (nproc), from Cpus_allowed in /proc/self/status.
func processorCount() -> Int {
    let status = readText("/proc/self/status")
    if let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed:") }) {
        let count = line.dropFirst("Cpus_allowed:".count).reduce(0) { total, character in
            total + (character.hexDigitValue.map { $0.nonzeroBitCount } ?? 0)
        }
        if count > 0 { return count }
    }
    return max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
}
