import Foundation
import SignetCore
import Testing

/// Issue 29's check on what a command prints or a server logs: no line holds a character that
/// could drive a terminal or forge a line — one SignetCore escapes (`PrintableText.mustEscape`:
/// C0, DEL, C1, the bidirectional controls, the line and paragraph separators) — other than a
/// tab and the line feeds that end lines.
public enum TerminalText {
    /// The characters of `text` no output line may hold, as `U+XXXX`, in order.
    public static func forbidden(in text: String) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false).flatMap { line in
            line.unicodeScalars.filter { $0 != "\t" && PrintableText.mustEscape($0) }.map { String(format: "U+%04X", $0.value) }
        }
    }

    /// Records an issue naming `what` when either output of `result` holds such a character.
    public static func expectClean(_ result: RunResult, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let found = forbidden(in: result.out) + forbidden(in: result.stderr)
        #expect(found.isEmpty, "\(what) printed \(found): \(result)", sourceLocation: sourceLocation)
    }

    /// Records an issue naming `what` when `text` (a log, say) holds such a character, quoting
    /// the lines that do (at most 20, as Swift literals).
    public static func expectClean(_ text: String, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).filter { !forbidden(in: String($0)).isEmpty }
        #expect(
            lines.isEmpty, "\(what) holds \(forbidden(in: text)) in \(lines.count) line(s): \(lines.prefix(20).map { String($0).debugDescription })",
            sourceLocation: sourceLocation)
    }

    /// `text` percent-encoded, to carry it in a URI or a path: every byte but ASCII letters,
    /// digits and those of `literal` written as `%XX` (upper-case hex).
    public static func percentEncoded(_ text: String, keeping literal: String = "") -> String {
        let kept = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".utf8).union(literal.utf8)
        return text.utf8.map { kept.contains($0) ? String(UnicodeScalar($0)) : String(format: "%%%02X", $0) }.joined()
    }
}
