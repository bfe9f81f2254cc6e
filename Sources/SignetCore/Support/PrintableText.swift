/// Text from untrusted input (a name in an archive, a JSON member name, a field of a file) made
/// safe to quote in a message.
public enum PrintableText {
    /// `text` with its control characters (C0, DEL and C1: U+0000–U+001F, U+007F–U+009F)
    /// written as `\u{…}` escapes in lowercase hex, so printing it cannot drive a terminal, and
    /// cut to its first `limit` Unicode scalars, so it cannot fill one.
    ///
    /// - Parameters:
    ///   - text: The text to quote.
    ///   - limit: How many Unicode scalars of `text` are kept; not negative.
    ///   - marksCut: Whether a cut text ends with "…".
    public static func escaped(_ text: String, limit: Int = 300, marksCut: Bool = false) -> String {
        var result = ""
        for scalar in text.unicodeScalars.prefix(limit) {
            if scalar.value < 0x20 || scalar.value == 0x7F || (0x80..<0xA0).contains(scalar.value) {
                result += "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        if marksCut, !text.unicodeScalars.dropFirst(limit).isEmpty { result += "…" }
        return result
    }
}
