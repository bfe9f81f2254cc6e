// signet-fuzz: the libFuzzer driver for SignetFuzzTargets, and a tool that replays files
// through a target.
//
// Built with `-DSIGNET_FUZZING -parse-as-library` (and `--sanitize=fuzzer`, as Scripts/fuzz
// does) this file defines only `LLVMFuzzerTestOneInput`: libFuzzer provides `main`, and the
// target comes from the environment variable SIGNET_FUZZ_TARGET. Built normally, `@main` is
// the replay tool (a type, not top-level code: an inactive `#if` branch is still parsed, and
// top-level statements do not parse as a library):
//
//     signet-fuzz list
//     signet-fuzz TARGET FILE...

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import SignetFuzzTargets

/// Writes `text` to a file descriptor, unbuffered (so nothing is lost when a finding crashes
/// the process).
func emit(_ fd: Int32, _ text: String) {
    let bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
        let written = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        if written < 0 {
            if errno == EINTR { continue }
            return
        }
        offset += written
    }
}

#if SIGNET_FUZZING

/// The target named by SIGNET_FUZZ_TARGET, looked up once (a type's static, so initialised
/// lazily: libFuzzer's `main` runs, not this file's top level); the process exits with status
/// 2, listing the targets, when the variable is missing or names none.
enum SelectedTarget {
    static let run: @Sendable ([UInt8]) -> Void = {
        let name = getenv("SIGNET_FUZZ_TARGET").map { String(cString: $0) } ?? ""
        guard let run = FuzzTargets.named(name) else {
            let problem = name.isEmpty ? "SIGNET_FUZZ_TARGET is not set" : "SIGNET_FUZZ_TARGET=\(name) is not a target"
            emit(2, "signet-fuzz: \(problem); the targets are:\n" + FuzzTargets.names.map { "  \($0)\n" }.joined())
            exit(2)
        }
        return run
    }()
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = count == 0 ? [] : Array(UnsafeRawBufferPointer(start: start, count: count))
    SelectedTarget.run(bytes)
    return 0
}

#else

/// Reads a whole file; nil when it cannot be read.
func readFile(_ path: String) -> [UInt8]? {
    guard let file = fopen(path, "rb") else { return nil }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let count = buffer.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
        if count > 0 { bytes += buffer[0..<count] }
        if count < buffer.count {
            if ferror(file) != 0 { return nil }
            break
        }
    }
    return bytes
}

func usage() -> Never {
    emit(
        2,
        """
        usage: signet-fuzz list
               signet-fuzz TARGET FILE...

        Replays each FILE through the fuzz target TARGET and prints `ok FILE`; a finding
        crashes the process (a failed precondition names the broken invariant). To fuzz,
        use Scripts/fuzz, which builds this tool with libFuzzer (-DSIGNET_FUZZING).

        """)
    exit(2)
}

/// The replay tool: `signet-fuzz list`, `signet-fuzz TARGET FILE...`.
@main
enum SignetFuzzReplay {
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments == ["list"] {
            emit(1, FuzzTargets.names.map { $0 + "\n" }.joined())
            exit(0)
        }
        if arguments.isEmpty || arguments == ["-h"] || arguments == ["--help"] { usage() }
        guard let run = FuzzTargets.named(arguments[0]) else {
            emit(2, "signet-fuzz: unknown target \(arguments[0]); `signet-fuzz list` shows the targets\n")
            exit(2)
        }
        guard arguments.count > 1 else { usage() }
        var failed = false
        for path in arguments.dropFirst() {
            guard let bytes = readFile(path) else {
                emit(2, "signet-fuzz: cannot read \(path)\n")
                failed = true
                continue
            }
            run(bytes)
            emit(1, "ok \(path)\n")
        }
        exit(failed ? 1 : 0)
    }
}

#endif
