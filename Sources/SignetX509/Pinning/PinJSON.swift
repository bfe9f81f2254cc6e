import SignetCore

// The JSON of pin files and pin failure reports is SignetCore's `JSONValue`: `StrictJSON`
// parses it (RFC 8259, a nesting bound, no member name twice in one object) with object members
// kept in the order they were written, so a pin file is written with a stable key order and a
// refusal names the first offending member as it appears in the file. Numbers are kept as their
// text: the only number a pin file has is its version, which must be the integer 1, and a
// report writes only a port.

extension JSONValue {
    /// What a value is, for messages: "an array", "a string" …
    var kindDescription: String {
        switch self {
        case .object: return "an object"
        case .array: return "an array"
        case .string: return "a string"
        case .number: return "a number"
        case .bool: return "a boolean"
        case .null: return "null"
        }
    }
}

extension X509Error {
    /// `text` made safe to quote in a message: control characters escaped, at most 200
    /// characters (a hostile file cannot fill a terminal through an error message).
    static func printable(_ text: String) -> String {
        PrintableText.escaped(text, limit: 200, marksCut: true)
    }
}
