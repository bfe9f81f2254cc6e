/// Text from untrusted input (a name in an archive, a JSON member name, a field of a file) made
/// safe to quote in a message.
public enum PrintableText {
    /// `text` with its control characters (C0, DEL and C1: U+0000–U+001F, U+007F–U+009F) and
    /// the invisible characters that reorder or split what a terminal shows (the bidirectional
    /// marks, embeddings, overrides and isolates U+061C, U+200E–U+200F, U+202A–U+202E,
    /// U+2066–U+2069, and the line and paragraph separators U+2028–U+2029) written as `\u{…}`
    /// escapes in lowercase hex, so printing it cannot drive a terminal or forge a line, and
    /// cut to its first `limit` Unicode scalars, so it cannot fill one.
    ///
    /// - Parameters:
    ///   - text: The text to quote.
    ///   - limit: How many Unicode scalars of `text` are kept; not negative.
    ///   - marksCut: Whether a cut text ends with "…".
    public static func escaped(_ text: String, limit: Int = 300, marksCut: Bool = false) -> String {
        var result = ""
        for scalar in text.unicodeScalars.prefix(limit) {
            if mustEscape(scalar) {
                result += "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        if marksCut, !text.unicodeScalars.dropFirst(limit).isEmpty { result += "…" }
        return result
    }

    /// `text` whole, escaped as by ``escaped(_:limit:marksCut:)`` except for tabs (which
    /// neither start a sequence nor a line, and which minisign's trusted comments hold): for a
    /// message or a line of output that may quote what came from outside (a certificate
    /// subject, a server's answer, a token label, a file name).
    public static func terminalSafe(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            if scalar != "\t", mustEscape(scalar) {
                result += "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// Whether `scalar` is written as an escape.
    public static func mustEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0..<0x20, 0x7F..<0xA0, 0x061C, 0x200E...0x200F, 0x2028...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }
}
