import Dispatch
import SignetCore
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a command does when SIGINT, SIGTERM or SIGHUP stops it: removes the temporary files
/// it was writing (``TemporaryFiles``: an interrupted `decrypt -o` leaves no plaintext behind),
/// gives the terminal back its echo if a passphrase prompt had turned it off, says what it
/// removed, and exits with 128 + the signal's number, as a shell expects. `signet serve` does
/// not use it: its service group stops it gracefully instead.
enum SignalCleanup {
    static let signals: [(number: Int32, name: String)] = [(SIGINT, "SIGINT"), (SIGTERM, "SIGTERM"), (SIGHUP, "SIGHUP")]

    /// The sources must live as long as the process; set once, before the command runs.
    nonisolated(unsafe) private static var sources: [any DispatchSourceSignal] = []

    /// The terminal settings a passphrase prompt changed, to restore on a signal.
    private static let terminal = Mutex<(descriptor: Int32, settings: termios)?>(nil)

    /// Installs the handlers (once, before the command runs).
    static func install() {
        let made = signals.map { entry -> any DispatchSourceSignal in
            // Ignored as a signal, so that only the dispatch source sees it.
            _ = signal(entry.number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: entry.number, queue: .global())
            source.setEventHandler { stop(entry.number, name: entry.name) }
            source.resume()
            return source
        }
        sources = made
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
