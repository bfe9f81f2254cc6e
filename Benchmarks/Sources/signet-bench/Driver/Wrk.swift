import Foundation

// wrk, the HTTP load generator of the http, server and resources sections: its Lua scripts
// (wrk needs Lua) and what the driver reads from its report.

/// What one wrk run reported.
struct WrkReport {
    var text: String
    /// Requests/sec as printed.
    var requestsPerSecond: Double?
    /// The 99th percentile latency, in ms, and as printed ("3.21ms").
    var p99: Double?
    var p99Text = ""
    /// Requests completed ("N requests in …"), answers with a status >= 400 ("Non-2xx or 3xx
    /// responses"), socket errors and timeouts.
    var total: Int?
    var bad: Int?
    var errors = 0
    /// From the requests script's done(): requests formed and distinct lines (one thread).
    var formed: Int?
    var lines: Int?

    init(_ text: String) {
        self.text = text
        var used: [(String, String)] = []
        for line in text.split(separator: "\n") {
            let words = fields(line)
            guard let first = words.first else { continue }
            if first == "Requests/sec:", words.count >= 2 { requestsPerSecond = Double(words[1]) }
            if first == "99%", words.count >= 2 {
                p99Text = words[1]
                p99 = WrkReport.milliseconds(words[1])
            }
            if total == nil, line.contains(" requests in "), let count = Int(first) { total = count }
            if line.contains("Non-2xx or 3xx responses:"), let last = words.last { bad = Int(last) }
            if line.contains("Socket errors:") {
                // "Socket errors: connect 0, read 0, write 0, timeout 0"
                let counts = words.map { $0.replacingOccurrences(of: ",", with: "") }
                errors = [3, 5, 7, 9].reduce(0) { $0 + (counts.count > $1 ? Int(counts[$1]) ?? 0 : 0) }
            }
            if first == "lines-used:", words.count >= 3 { used.append((words[1], words[2])) }
        }
        if used.count == 1 { (formed, lines) = (Int(used[0].0), Int(used[0].1)) }
    }

    /// A wrk latency ("850.00us", "3.21ms", "1.02s") in ms.
    static func milliseconds(_ text: String) -> Double? {
        if text.hasSuffix("us") { return Double(text.dropLast(2)).map { $0 / 1000 } }
        if text.hasSuffix("ms") { return Double(text.dropLast(2)) }
        if text.hasSuffix("s") { return Double(text.dropLast(1)).map { $0 * 1000 } }
        return Double(text)
    }

    /// "%.2f" of the p99 in ms, as the table shows it.
    var p99Milliseconds: String { p99.map { format("%.2f", $0) } ?? "" }
}

extension Bench {
    /// Runs wrk with `arguments` (its report captured, standard error with it); a failed run stops the bench.
    func wrk(_ arguments: [String], seconds: Int) -> WrkReport {
        let file = tmp + "/wrk.out"
        let status = run(["wrk"] + arguments, stdout: .file(file), stderr: .sameAsStdout, timeout: Double(seconds) + 120)
        let text = readText(file)
        guard status.succeeded else { die("wrk failed: \(text.trimmingCharacters(in: .newlines))") }
        return WrkReport(text)
    }

    /// wrk's version (the second word of `wrk --version`'s first line).
    func wrkVersion() -> String {
        let result = capture(["wrk", "--version"], stderr: .sameAsStdout)
        let words = fields(firstLine(result.output))
        return words.count >= 2 ? words[1] : ""
    }

    /// The user + system CPU time of the processes, in µs (0 for one that is gone), from /proc/PID/stat.
    func cpuMicroseconds(_ pids: [Int32]) -> Int {
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        var total = 0
        for pid in pids {
            let stat = readText("/proc/\(pid)/stat")
            guard let close = stat.range(of: ") ", options: .backwards) else { continue }
            let words = fields(stat[close.upperBound...])
            // After "(comm) ": state is field 1, utime 12 and stime 13.
            guard words.count > 12, let user = Double(words[11]), let system = Double(words[12]) else { continue }
            total += Int(((user + system) * 1e6 / ticks).rounded())
        }
        return total
    }
}

/// The requests script: line i of the file given after -- is request i (METHOD, PATH,
/// Name=value fields, BODY; tab-separated, as `signet-bench server-requests` writes them), all
/// formed before the run; done() reports how many were formed, so a run that ran out of lines
/// (and started over: replays) is caught. (wrk forms one more to check the script.)
let requestsLua = """
    local threads = {}

    function setup(thread)
        table.insert(threads, thread)
    end

    function init(args)
        formed, lines, requests = 0, 0, {}
        for line in io.lines(args[1]) do
            local fields = {}
            for field in (line .. "\\t"):gmatch("([^\\t]*)\\t") do
                fields[#fields + 1] = field
            end
            local headers = {}
            for k = 3, #fields - 1 do
                local name, value = fields[k]:match("^([^=]+)=(.*)$")
                headers[name] = value
            end
            local body = fields[#fields]
            if body == "" then body = nil end
            lines = lines + 1
            requests[lines] = wrk.format(fields[1], fields[2], headers, body)
        end
    end

    function request()
        formed = formed + 1
        return requests[(formed - 1) % lines + 1]
    end

    function done(summary, latency, rates)
        for _, thread in ipairs(threads) do
            io.write(string.format("lines-used: %d %d\\n", thread:get("formed"), thread:get("lines")))
        end
    end

    """

/// The HTTP section's script: sends, in turn, the pre-signed pairs of fields of lines OFFSET+1
/// to OFFSET+COUNT (arguments: FILE PATH OFFSET COUNT).
let signedLua = """
    local sigs, n, i, path = {}, 0, 0, "/signed"
    function init(args)
        path = args[2] or path
        local skip, limit, line_number = tonumber(args[3]) or 0, tonumber(args[4]) or math.huge, 0
        for line in io.lines(args[1]) do
            line_number = line_number + 1
            if line_number > skip then
                if n >= limit then break end
                local input, sig = line:match("^([^\\t]*)\\t(.*)$")
                n = n + 1; sigs[n] = { input, sig }
            end
        end
    end
    function request()
        i = i % n + 1
        return wrk.format("GET", path, { ["Signature-Input"] = sigs[i][1], ["Signature"] = sigs[i][2] })
    end

    """
