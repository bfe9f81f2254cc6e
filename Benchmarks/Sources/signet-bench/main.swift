// signet-bench: the driver of Scripts/bench (`run`: every section, its peers and its targets;
// Driver/), and the in-process measurements it runs, the counterparts of peers that also
// measure without process start-up (`openssl speed`, a plain SQLite loop).
//
//   signet-bench run --signet PATH [--root DIR]   # the whole bench (BENCH_* settings; see Scripts/bench)
//   signet-bench SECONDS TYPE...     # sign/verify ops/s; TYPE: rsa2048 … ed25519
//   signet-bench vault DIR COUNT     # vault sets/gets per second vs plain SQLite; open and hash times
//   signet-bench http-server DIR COUNT   # Hummingbird server for wrk, with COUNT pre-signed requests per key type
//   signet-bench verify-loop COUNT [KIND]  # COUNT verifications of 4,096 distinct signed requests (hmac, ed25519, p256), for perf
//   signet-bench route-loop COUNT          # the /plain and hmac /signed routes answered in process, COUNT requests each
//   signet-bench request-cost KIND COUNT PREPARED  # the real server's router answering COUNT of KIND (health, me, verify, device-me), for callgrind
//   signet-bench tls SECONDS             # TLS handshakes/s on loopback: no pins, pins, BoringSSL's own check
//   signet-bench chain-verify DIR COUNT  # chain validations/s (writes the chain to DIR for openssl verify)
//   signet-bench pkcs11 MODULE URI PINFILE SECONDS  # token signatures/s: PKCS11Signer vs a raw C_Sign loop
//   signet-bench server-requests KIND KEY AUTHORITY COUNT OUT [ARGS…]  # COUNT pre-signed requests to `signet serve`
//       (KIND ARGS: me TOKEN | signin EMAIL PASSWORD | register PREFIX), one per line for wrk
import Dispatch
import Foundation
import NIOCore
import NIOPosix
import Synchronization

// SIGNET_BENCH_NIO_EXECUTOR=1: run Swift concurrency's jobs on NIO's event loops (SwiftNIO's
// executor take-over), to measure what the hops between the two thread pools cost a server.
if ProcessInfo.processInfo.environment["SIGNET_BENCH_NIO_EXECUTOR"] == "1" {
    guard NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor() else {
        FileHandle.standardError.write(Data("signet-bench: NIO could not take over the global executor\n".utf8))
        exit(1)
    }
}

func usage() -> Never {
    FileHandle.standardError.write(Data("usage: signet-bench run --signet PATH [--root DIR] | signet-bench SECONDS TYPE... | signet-bench vault DIR COUNT | signet-bench http-server DIR COUNT | signet-bench verify-loop COUNT [hmac|ed25519|p256] | signet-bench route-loop COUNT | signet-bench request-cost health|me|verify|device-me COUNT PREPARED | signet-bench tls SECONDS | signet-bench chain-verify DIR COUNT | signet-bench pkcs11 MODULE URI PINFILE SECONDS | signet-bench server-requests KIND KEY AUTHORITY COUNT OUT ARGS... (KIND ARGS: me TOKEN, signin EMAIL PASSWORD, register PREFIX, resource NAME ETAG)\n".utf8))
    exit(2)
}

/// Runs the mode `arguments` name.
func run(_ arguments: [String]) async throws {
    if arguments.first == "server-requests" {
        guard arguments.count >= 6, let count = Int(arguments[4]), count > 0 else { usage() }
        try await serverRequestsBench(
            kind: arguments[1], keyPath: arguments[2], authority: arguments[3], count: count, output: arguments[5],
            arguments: Array(arguments.dropFirst(6)))
    } else if arguments.first == "pkcs11" {
        guard arguments.count == 5, let seconds = Double(arguments[4]), seconds > 0 else { usage() }
        try await pkcs11Bench(module: arguments[1], uri: arguments[2], pinFile: arguments[3], seconds: seconds)
    } else if arguments.first == "tls" {
        guard arguments.count == 2, let seconds = Double(arguments[1]), seconds > 0 else { usage() }
        try await tlsBench(seconds: seconds)
    } else if arguments.first == "chain-verify" {
        guard arguments.count == 3, let count = Int(arguments[2]), count > 0 else { usage() }
        try await chainVerifyBench(folder: arguments[1], count: count)
    } else if arguments.first == "route-loop" {
        guard arguments.count == 2, let count = Int(arguments[1]), count >= 10 else { usage() }
        try await routeLoop(count: count)
    } else if arguments.first == "request-cost" {
        guard arguments.count == 4, let count = Int(arguments[2]), let prepared = Int(arguments[3]), count >= 0, prepared >= count else { usage() }
        try await requestCost(kind: arguments[1], count: count, prepared: prepared)
    } else if arguments.first == "verify-loop" {
        guard arguments.count == 2 || arguments.count == 3, let count = Int(arguments[1]), count > 0 else { usage() }
        try await verifyLoop(count: count, kind: arguments.count == 3 ? arguments[2] : "hmac")
    } else if arguments.first == "http-server" {
        guard arguments.count == 3, let count = Int(arguments[2]), count > 0 else { usage() }
        try await httpServerBench(folder: arguments[1], count: count)
    } else if arguments.first == "vault" {
        guard arguments.count == 3, let count = Int(arguments[2]), count > 0 else { usage() }
        try await vaultBench(folder: arguments[1], count: count)
    } else {
        guard let secondsText = arguments.first, let seconds = Double(secondsText), seconds > 0, arguments.count > 1 else { usage() }
        try signBench(seconds: seconds, types: Array(arguments.dropFirst()))
    }
}

// The main thread waits on a semaphore rather than in an async `main`: valgrind 3.19 crashes
// (SIGSEGV inside callgrind) when the main thread parks in libdispatch's `sigsuspend`, which
// is where an async main waits — and `Scripts/request-cost` runs this under callgrind.
final class Outcome: Sendable {
    let error = Mutex<(any Error)?>(nil)
    let finished = DispatchSemaphore(value: 0)
}

/// Runs the mode on the global executor (detached: top-level code is the main actor's, and the
/// main thread is about to block) and waits for it.
func runToEnd(_ arguments: [String]) -> (any Error)? {
    let outcome = Outcome()
    Task.detached {
        do {
            try await run(arguments)
        } catch {
            outcome.error.withLock { $0 = error }
        }
        outcome.finished.signal()
    }
    outcome.finished.wait()
    return outcome.error.withLock { $0 }
}

// The driver runs on the main thread: it only starts processes and waits for them.
if CommandLine.arguments.dropFirst().first == "run" {
    runDriver(Array(CommandLine.arguments.dropFirst(2)))
}

if let error = runToEnd(Array(CommandLine.arguments.dropFirst())) {
    FileHandle.standardError.write(Data("signet-bench: \(error)\n".utf8))
    exit(1)
}
