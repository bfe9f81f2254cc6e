import Foundation
import SignetCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Standard output carries data; standard error carries messages, for every command.
enum Console {
    /// Writes `text` to standard output unbuffered.
    static func write(_ text: String) {
        writeAll(fd: 1, Array(text.utf8))
    }

    /// Writes raw bytes to standard output.
    static func write(bytes: [UInt8]) {
        writeAll(fd: 1, bytes)
    }

    /// Writes the bytes `buffer` points to on standard output.
    static func write(buffer: UnsafeRawBufferPointer) {
        writeAll(fd: 1, buffer)
    }

    /// Writes `text` to standard error.
    /// JSON text with every character a terminal would act on (other than the line breaks and
    /// tabs of its layout, which JSON strings cannot hold raw) written as a `\uXXXX` escape,
    /// which JSON allows: the same value, safe on a terminal.
    static func terminalSafeJSON(_ text: String) -> String {
        text.unicodeScalars.map { scalar in
            scalar.value >= 0x20 && PrintableText.mustEscape(scalar) ? String(format: "\\u%04x", scalar.value) : String(scalar)
        }.joined()
    }

    /// `value` as JSON for a terminal: sorted keys, pretty-printed, slashes as they are, and
    /// every control, C1 or bidi character a `\uXXXX` escape (``terminalSafeJSON(_:)``).
    static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        return terminalSafeJSON(String(decoding: try encoder.encode(value), as: UTF8.self))
    }

    static func writeError(_ text: String) {
        writeAll(fd: 2, Array(text.utf8))
    }

    /// Prints `signet: error: MESSAGE` on standard error. Messages are one line and may quote
    /// what came from outside: every control character in them is escaped
    /// (`PrintableText.terminalSafe`), so none can drive the terminal or forge a line, and every
    /// `pkcs11:` URI in them loses its PIN (``SecretRedaction``).
    static func error(_ message: String) {
        writeError("signet: error: \(PrintableText.terminalSafe(SecretRedaction.redacted(message)))\n")
    }

    /// Prints `signet: warning: MESSAGE` on standard error, escaped as ``error(_:)``.
    static func warning(_ message: String) {
        writeError("signet: warning: \(PrintableText.terminalSafe(SecretRedaction.redacted(message)))\n")
    }

    /// Prints an informational line on standard error unless `quiet`, escaped as ``error(_:)``.
    static func note(_ message: String, quiet: Bool) {
        if !quiet { writeError("signet: \(PrintableText.terminalSafe(SecretRedaction.redacted(message)))\n") }
    }

    /// Whether standard output is a terminal (binary data must not go there).
    static var stdoutIsTerminal: Bool { isatty(1) == 1 }

    /// Whether standard error is a terminal (progress bars go only there).
    static var stderrIsTerminal: Bool { isatty(2) == 1 }

    private static func writeAll(fd: Int32, _ bytes: [UInt8]) {
        bytes.withUnsafeBytes { buffer in writeAll(fd: fd, buffer) }
    }

    private static func writeAll(fd: Int32, _ buffer: UnsafeRawBufferPointer) {
        var offset = 0
        while offset < buffer.count {
            let written = systemWrite(fd, buffer.baseAddress! + offset, buffer.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return  // A closed pipe: nothing sensible left to do with the output.
            }
            offset += written
        }
    }
}

