import Foundation
import SignetCore
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a command does when a signal stops it (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1,
/// SIGUSR2, SIGALRM): removes the temporary files it was writing (``TemporaryFiles``: an
/// interrupted `decrypt -o` leaves no plaintext behind), gives the terminal back its echo if a
/// passphrase prompt had turned it off, says what it removed, and exits with 128 + the signal's
/// number, as a shell expects. `signet serve` does not use it: its service group stops it
/// gracefully instead. (SIGKILL cannot be caught: what it interrupts stays, under a hidden
/// `.NAME.signet-XXXXXX` name.)
///
/// The handler only writes the signal's number to a pipe; a thread of its own, which nothing
/// else uses, reads it and cleans up at once — however busy the command keeps the other threads
/// — while ``TemporaryFiles/takeAllForExit()`` keeps the command from creating or swapping in
/// anything meanwhile. A second signal during the cleanup changes nothing.
enum SignalCleanup {
    static let signals: [(number: Int32, name: String)] = [
        (SIGINT, "SIGINT"), (SIGTERM, "SIGTERM"), (SIGHUP, "SIGHUP"), (SIGQUIT, "SIGQUIT"), (SIGUSR1, "SIGUSR1"), (SIGUSR2, "SIGUSR2"),
        (SIGALRM, "SIGALRM"),
    ]

    /// The pipe's write end, for the handler (set once, before any handler is installed).
    nonisolated(unsafe) private static var pipeWriter: Int32 = -1

    /// The terminal settings a passphrase prompt changed, to restore on a signal.
    private static let terminal = Mutex<(descriptor: Int32, settings: termios)?>(nil)

    /// Installs the handlers and their thread (once, before the command runs).
    static func install() {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return }
        _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
        pipeWriter = ends[1]
        let reader = ends[0]
        let thread = Thread {
            var number: UInt8 = 0
            while true {
                let count = read(reader, &number, 1)
                if count == 1, let entry = signals.first(where: { $0.number == Int32(number) }) { stop(entry.number, name: entry.name) }
                if count == 0 { return }
            }
        }
        thread.name = "signet.signals"
        thread.start()
        for entry in signals {
            // Async-signal-safe: one write(2) of the number.
            _ = signal(entry.number) { number in
                var byte = UInt8(truncatingIfNeeded: number)
                _ = write(SignalCleanup.pipeWriter, &byte, 1)
            }
        }
    }

    /// A prompt turned echo off on `descriptor`; `settings` are what to restore.
    static func terminalChanged(_ descriptor: Int32, restoring settings: termios) {
        terminal.withLock { $0 = (descriptor, settings) }
    }

    /// The prompt restored the terminal itself.
    static func terminalRestored() {
        terminal.withLock { $0 = nil }
    }

    private static func stop(_ number: Int32, name: String) {
        if var saved = terminal.withLock({ $0 }) {
            tcsetattr(saved.descriptor, TCSAFLUSH, &saved.settings)
            Console.writeError("\n")
        }
        var removed: [String] = []
        for entry in TemporaryFiles.takeAllForExit() {
            let gone = entry.isFolder ? FolderRemoval.remove(entry.path) : unlink(entry.path) == 0
            if gone { removed.append(entry.path) }
        }
        var message = "interrupted by \(name)"
        if !removed.isEmpty { message += ": removed the partial output \(removed.joined(separator: ", "))" }
        Console.note(message, quiet: false)
        _exit(128 + number)
    }
}

/// Removing a staging folder and what it holds (no deeper than the files a bundle extracts).
enum FolderRemoval {
    static func remove(_ path: String) -> Bool {
        guard let folder = opendir(path) else { return unlink(path) == 0 }
        var names: [String] = []
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != ".", name != ".." { names.append(name) }
        }
        closedir(folder)
        for name in names {
            let child = path + "/" + name
            if unlink(child) != 0 { _ = remove(child) }
        }
        return rmdir(path) == 0
    }
}
