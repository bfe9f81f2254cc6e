/// A JSON value (RFC 8259) as ``StrictJSON`` reads it: objects keep their members in document
/// order, and numbers keep the text they were written as.
///
/// ``bytes(pretty:)`` writes a value; ``int64Value`` reads a number as an integer.
public enum JSONValue: Sendable, Equatable {
    /// An object: its members in document order. A parsed object never has a name twice (not
    /// even two names that are equal only as Swift strings).
    case object([JSONMember])
    /// An array: its elements in order.
    case array([JSONValue])
    /// A string.
    case string(String)
    /// A number, as the literal text it was written as (`1e3`, `-0`, `2.50`): no precision is
    /// lost and no form is chosen for the caller. When written, the text must be a JSON number.
    case number(String)
    /// `true` or `false`.
    case bool(Bool)
    /// `null`.
    case null
}

/// One member of a JSON object: a name and its value.
public struct JSONMember: Sendable, Equatable {
    /// The member's name.
    public var name: String
    /// The member's value.
    public var value: JSONValue

    /// The member `name` with `value`.
    public init(_ name: String, _ value: JSONValue) {
        self.name = name
        self.value = value
    }
}

/// Why a JSON text does not parse, and where.
public struct JSONSyntaxError: Error, Sendable, Equatable {
    /// What is wrong, in a few words ("unexpected end of text", "nested too deeply", …).
    public let message: String
    /// The offset of the byte at which the text went wrong.
    public let offset: Int
    /// When an object gives a member name twice: that name (the text is otherwise valid JSON
    /// up to there); nil for every other problem.
    public let duplicateMemberName: String?

    /// An error with `message` at byte `offset`.
    public init(message: String, offset: Int, duplicateMemberName: String? = nil) {
        self.message = message
        self.offset = offset
        self.duplicateMemberName = duplicateMemberName
    }
}

/// Which numbers ``StrictJSON/parse(_:maximumDepth:numbers:)`` accepts beyond the grammar.
public enum JSONNumberRule: Sendable, Equatable {
    /// Every number the grammar allows.
    case anyNumber
    /// Only numbers that denote a whole number within `Int64`: `1e3` (1000), `10.0` and
    /// `2.50e1` are accepted; `1.5` is refused as "numbers must be integers", and anything
    /// outside `Int64` (or written with more than 19 significant digit positions) as "a number
    /// is out of range". ``JSONValue/int64Value`` reads such a number.
    case int64
}

/// A strict JSON (RFC 8259) reader over bytes, and the writing of JSON strings.
///
/// ``parse(_:maximumDepth:numbers:)`` accepts exactly the grammar of RFC 8259 — one value, with
/// only space, tab, line feed and carriage return around tokens — and refuses, with the byte
/// where it went wrong:
///
/// - containers nested deeper than the bound ("nested too deeply");
/// - strings that are not valid UTF-8, that hold a raw control character (U+0000–U+001F) or a
///   lone surrogate (`\ud800` alone, or not followed by a low surrogate);
/// - a member name given twice in one object, also two names equal only as Swift strings
///   (canonically equivalent Unicode, such as a precomposed and a decomposed "é"), which one
///   dictionary key would silently merge: `the member name "…" appears twice in one object`,
///   at the second name, with ``JSONSyntaxError/duplicateMemberName`` set;
/// - anything after the value ("unexpected text after the value").
///
/// It works on the bytes and builds a string only once per JSON string, so it reads manifests
/// of 10,000 entries quickly.
public enum StrictJSON {
    /// Parses `bytes` as one JSON value.
    ///
    /// - Parameters:
    ///   - bytes: The whole text, UTF-8.
    ///   - maximumDepth: How many arrays and objects may be nested: 16 allows sixteen levels,
    ///     0 only a scalar.
    ///   - numbers: Which numbers are accepted beyond the grammar.
    /// - Returns: The value; objects keep their members in document order.
    /// - Throws: ``JSONSyntaxError``, naming the problem and the byte where it is.
    public static func parse(
        _ bytes: [UInt8], maximumDepth: Int = 16, numbers: JSONNumberRule = .anyNumber
    ) throws(JSONSyntaxError) -> JSONValue {
        var parser = StrictJSONParser(bytes, maximumDepth: maximumDepth, numbers: numbers)
        return try parser.parseDocument()
    }

    /// Appends `text` as a JSON string: quoted, as UTF-8, with only `"` and `\` escaped (as
    /// `\"` and `\\`) and the control characters U+0000–U+001F written as `\u00xx` in lowercase
    /// hex — except a line feed, written as `\n` when `lineFeedAsN` is true. Every other
    /// character is written as itself (`/` too).
    public static func appendString(_ text: String, to out: inout [UInt8], lineFeedAsN: Bool = false) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""):
                out.append(UInt8(ascii: "\\"))
                out.append(UInt8(ascii: "\""))
            case UInt8(ascii: "\\"):
                out.append(UInt8(ascii: "\\"))
                out.append(UInt8(ascii: "\\"))
            case 0x0A where lineFeedAsN:
                out.append(UInt8(ascii: "\\"))
                out.append(UInt8(ascii: "n"))
            case 0..<0x20:
                out.append(UInt8(ascii: "\\"))
                out.append(UInt8(ascii: "u"))
                out.append(UInt8(ascii: "0"))
                out.append(UInt8(ascii: "0"))
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0x0F)])
            default:
                out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// ``appendString(_:to:lineFeedAsN:)`` with `lineFeedAsN`, and DEL, the C1 controls and the
    /// invisible characters that reorder what a terminal shows (``PrintableText/mustEscape(_:)``)
    /// written as `\uXXXX` too: the same JSON value, safe to print (what ``JSONValue`` writes).
    public static func appendDisplayString(_ text: String, to out: inout [UInt8]) {
        guard text.unicodeScalars.contains(where: { $0.value >= 0x7F && PrintableText.mustEscape($0) }) else {
            appendString(text, to: &out, lineFeedAsN: true)
            return
        }
        var plain = ""
        var escaped: [UInt8] = []
        func flush() {
            guard !plain.isEmpty else { return }
            var quoted: [UInt8] = []
            appendString(plain, to: &quoted, lineFeedAsN: true)
            escaped.append(contentsOf: quoted.dropFirst().dropLast())
            plain = ""
        }
        for scalar in text.unicodeScalars {
            if scalar.value >= 0x7F, PrintableText.mustEscape(scalar) {
                flush()
                escaped.append(contentsOf: Array("\\u".utf8))
                for shift in stride(from: 12, through: 0, by: -4) { escaped.append(hexDigits[Int((scalar.value >> UInt32(shift)) & 0xF)]) }
            } else {
                plain.unicodeScalars.append(scalar)
            }
        }
        flush()
        out.append(UInt8(ascii: "\""))
        out.append(contentsOf: escaped)
        out.append(UInt8(ascii: "\""))
    }
}

extension JSONValue {
    /// The text: two-space indents and one member or element a line when `pretty` (with a
    /// final newline), no white space otherwise. Members are written in their order; strings
    /// as ``StrictJSON/appendString(_:to:lineFeedAsN:)`` writes them with `lineFeedAsN` (a line
    /// feed as `\n`); numbers as their text.
    public func bytes(pretty: Bool) -> [UInt8] {
        var out: [UInt8] = []
        write(to: &out, pretty: pretty, indent: 0)
        if pretty { out.append(0x0A) }
        return out
    }

    private func write(to out: inout [UInt8], pretty: Bool, indent: Int) {
        func newline(_ level: Int) {
            guard pretty else { return }
            out.append(0x0A)
            out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * level))
        }
        switch self {
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (position, member) in members.enumerated() {
                if position > 0 { out.append(UInt8(ascii: ",")) }
                newline(indent + 1)
                StrictJSON.appendDisplayString(member.name, to: &out)
                out.append(UInt8(ascii: ":"))
                if pretty { out.append(UInt8(ascii: " ")) }
                member.value.write(to: &out, pretty: pretty, indent: indent + 1)
            }
            if !members.isEmpty { newline(indent) }
            out.append(UInt8(ascii: "}"))
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (position, element) in elements.enumerated() {
                if position > 0 { out.append(UInt8(ascii: ",")) }
                newline(indent + 1)
                element.write(to: &out, pretty: pretty, indent: indent + 1)
            }
            if !elements.isEmpty { newline(indent) }
            out.append(UInt8(ascii: "]"))
        case .string(let text): StrictJSON.appendDisplayString(text, to: &out)
        case .number(let text): out.append(contentsOf: text.utf8)
        case .bool(let value): out.append(contentsOf: (value ? "true" : "false").utf8)
        case .null: out.append(contentsOf: "null".utf8)
        }
    }

    /// The number as an integer, by the rule of ``JSONNumberRule/int64``: `1e3` is 1000,
    /// `-0` is 0, `2.50e1` is 25. Nil when this is not a number, not valid JSON number text,
    /// not a whole number, or out of range.
    public var int64Value: Int64? {
        guard case .number(let text) = self else { return nil }
        let utf8 = Array(text.utf8)
        var parser = StrictJSONParser(utf8, maximumDepth: 0, numbers: .anyNumber)
        guard let parts = try? parser.scanNumber(), parser.index == utf8.count else { return nil }
        guard case .integer(let integer) = parts.integerValue(in: utf8) else { return nil }
        return integer
    }
}
