import ArgumentParser
import SignetCore

/// The help a command gives its `-o`: its own sentence and value name ("The bundle to write.",
/// OUT.bundle), the one thing about `-o` that differs between commands.
///
///     @OptionGroup var output: OptionalOutputOptions<OutputHelpText>
///     enum OutputHelpText: OutputHelp {
///         static let help = ArgumentHelp("Where to write the signature (default: standard output).", valueName: "SIG")
///     }
protocol OutputHelp: Sendable {
    static var help: ArgumentHelp { get }
}

/// `-o/--output` and `--force`, declared once for every command that writes an output file:
/// ``OutputOptions`` (`-o` required), ``OptionalOutputOptions`` (standard output when `-o` is
/// absent) and ``DefaultedOutputOptions`` (`-o` defaults to `-`). What they share, and the
/// helpers around the output that every command repeated, are here.
protocol OutputTarget {
    /// The `-o` value; nil when it was not given (standard output).
    var destination: String? { get }

    /// `--force`: replace an existing output file.
    var force: Bool { get }
}

extension OutputTarget {
    /// Whether the output is standard output: no `-o`, or `-o -`.
    var isStandardOutput: Bool { destination == nil || destination == "-" }

    /// The output's name in messages: the file, or "standard output".
    var displayName: String {
        guard let path = destination, path != "-" else { return "standard output" }
        return path
    }

    /// Refuses an existing output file unless --force (standard output is never refused):
    /// checked before any work or prompt.
    func refuseExisting() throws {
        try StreamedOutput.refuseExisting(destination, force: force)
    }

    /// Writes `bytes` to the output file atomically with `permissions`, or to standard output
    /// (where `binary` bytes are refused on a terminal).
    func write(_ bytes: [UInt8], binary: Bool, permissions: AtomicFile.Permissions) throws {
        try OutputDestination.write(bytes, to: destination, binary: binary, permissions: permissions, force: force)
    }

    /// Opens the output for streaming: a file is committed only once all of it was written.
    func streamed(binary: Bool, permissions: AtomicFile.Permissions) throws -> StreamedOutput {
        try StreamedOutput(path: destination, binary: binary, permissions: permissions, force: force)
    }
}

/// A required `-o FILE` and `--force`.
struct OutputOptions<Help: OutputHelp>: ParsableArguments, OutputTarget, Sendable {
    @Option(name: [.customShort("o"), .customLong("output")], help: Help.help)
    var path: String

    @Flag(help: "Replace an existing output file.")
    var force = false

    var destination: String? { path }
}

/// An optional `-o FILE` (standard output when absent) and `--force`.
struct OptionalOutputOptions<Help: OutputHelp>: ParsableArguments, OutputTarget, Sendable {
    @Option(name: [.customShort("o"), .customLong("output")], help: Help.help)
    var path: String?

    @Flag(help: "Replace an existing output file.")
    var force = false

    var destination: String? { path }
}

/// `-o FILE` defaulting to `-` (standard output; the help shows the default) and `--force`.
struct DefaultedOutputOptions<Help: OutputHelp>: ParsableArguments, OutputTarget, Sendable {
    @Option(name: [.customShort("o"), .customLong("output")], help: Help.help)
    var path: String = "-"

    @Flag(help: "Replace an existing output file.")
    var force = false

    var destination: String? { path }
}
