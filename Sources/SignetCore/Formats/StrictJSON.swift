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
                StrictJSON.appendString(member.name, to: &out, lineFeedAsN: true)
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
        case .string(let text): StrictJSON.appendString(text, to: &out, lineFeedAsN: true)
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

/// Where the parts of a number literal lie in the text (its grammar already checked).
struct NumberLiteral {
    var negative: Bool
    var integerDigits: Range<Int>
    var fractionDigits: Range<Int>
    /// The exponent, its magnitude clamped to 10,000.
    var exponent: Int

    /// What the number is under ``JSONNumberRule/int64``.
    enum IntegerReading {
        case integer(Int64)
        case fraction
        /// `atStart`: the refusal is reported at the number's first byte (too many digit
        /// positions), otherwise after its last (a 19-digit value beyond `Int64`).
        case outOfRange(atStart: Bool)
    }

    /// value = digits × 10^(exponent − fraction digits); it must be a whole number in `Int64`.
    /// Works on the digits in place, without copying them.
    func integerValue(in bytes: [UInt8]) -> IntegerReading {
        let integerCount = integerDigits.count
        let integerStart = integerDigits.lowerBound
        let fractionStart = fractionDigits.lowerBound
        func digit(_ position: Int) -> UInt8 {
            (position < integerCount ? bytes[integerStart + position] : bytes[fractionStart + position - integerCount]) - 0x30
        }
        var count = integerCount + fractionDigits.count
        var scale = exponent - fractionDigits.count
        while scale < 0, count > 1, digit(count - 1) == 0 {
            count -= 1
            scale += 1
        }
        var allZero = true
        for position in 0..<count where digit(position) != 0 {
            allZero = false
            break
        }
        if allZero { return .integer(0) }
        guard scale >= 0, count + scale <= 19 else { return scale < 0 ? .fraction : .outOfRange(atStart: true) }
        var magnitude: UInt64 = 0
        for position in 0..<(count + scale) {
            let next: UInt64 = position < count ? UInt64(digit(position)) : 0
            let (times, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
            let (plus, overflow2) = times.addingReportingOverflow(next)
            guard !overflow1, !overflow2 else { return .outOfRange(atStart: false) }
            magnitude = plus
        }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { return .outOfRange(atStart: false) }
            return .integer(magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude))
        }
        guard magnitude <= UInt64(Int64.max) else { return .outOfRange(atStart: false) }
        return .integer(Int64(magnitude))
    }
}

/// The parser behind ``StrictJSON/parse(_:maximumDepth:numbers:)``: recursive descent over the
/// bytes, with the nesting bound checked before each level.
struct StrictJSONParser {
    private let bytes: [UInt8]
    private(set) var index = 0
    private let maximumDepth: Int
    private let numbers: JSONNumberRule

    /// Objects with up to this many members are checked for a repeated name by comparing it
    /// with each; larger ones through a set.
    private static let linearNameCheckLimit = 8
    private static let trueBytes: [UInt8] = Array("true".utf8)
    private static let falseBytes: [UInt8] = Array("false".utf8)
    private static let nullBytes: [UInt8] = Array("null".utf8)

    init(_ bytes: [UInt8], maximumDepth: Int, numbers: JSONNumberRule) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
        self.numbers = numbers
    }

    /// Parses the whole text as one value.
    mutating func parseDocument() throws(JSONSyntaxError) -> JSONValue {
        let value = try parseValue(depth: 0)
        skipWhitespace()
        guard index == bytes.count else { throw fail("unexpected text after the value") }
        return value
    }

    private func fail(_ message: String) -> JSONSyntaxError { JSONSyntaxError(message: message, offset: index) }

    private mutating func skipWhitespace() {
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 { index += 1 }
    }

    private mutating func parseValue(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        skipWhitespace()
        guard index < bytes.count else { throw fail("unexpected end of text") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth)
        case UInt8(ascii: "["): return try parseArray(depth: depth)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"):
            try literal(Self.trueBytes)
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal(Self.falseBytes)
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal(Self.nullBytes)
            return .null
        default: return .number(try parseNumber())
        }
    }

    private mutating func parseObject(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        guard depth < maximumDepth else { throw fail("nested too deeply") }
        index += 1
        var members: [JSONMember] = []
        var names: Set<String>? = nil
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw fail("expected a member name") }
            let nameStart = index
            let name = try parseString()
            if Self.repeats(name, in: members, names: &names) {
                throw JSONSyntaxError(
                    message: "the member name \"\(PrintableText.escaped(name))\" appears twice in one object", offset: nameStart,
                    duplicateMemberName: name)
            }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            index += 1
            let value = try parseValue(depth: depth + 1)
            members.append(JSONMember(name, value))
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end of text") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            guard bytes[index] == UInt8(ascii: "}") else { throw fail("expected ',' or '}'") }
            index += 1
            return .object(members)
        }
    }

    /// Whether `name` equals (as a Swift string: canonical equivalence) the name of one of
    /// `members`. `names` is nil until the object grows past `linearNameCheckLimit`; from
    /// then on it holds every name, and `name` is added to it.
    private static func repeats(_ name: String, in members: [JSONMember], names: inout Set<String>?) -> Bool {
        if names == nil {
            if members.count < linearNameCheckLimit { return members.contains { $0.name == name } }
            names = Set(members.map(\.name))
        }
        return !names!.insert(name).inserted
    }

    private mutating func parseArray(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        guard depth < maximumDepth else { throw fail("nested too deeply") }
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            elements.append(try parseValue(depth: depth + 1))
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end of text") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            guard bytes[index] == UInt8(ascii: "]") else { throw fail("expected ',' or ']'") }
            index += 1
            return .array(elements)
        }
    }

    private mutating func literal(_ word: [UInt8]) throws(JSONSyntaxError) {
        guard index + word.count <= bytes.count, bytes[index..<index + word.count].elementsEqual(word) else {
            throw fail("not a JSON value")
        }
        index += word.count
    }

    /// Checks the number grammar (and the number rule) and returns the number's text.
    private mutating func parseNumber() throws(JSONSyntaxError) -> String {
        let start = index
        let parts = try scanNumber()
        if numbers == .int64 {
            switch parts.integerValue(in: bytes) {
            case .integer: break
            case .fraction: throw JSONSyntaxError(message: "numbers must be integers", offset: start)
            case .outOfRange(let atStart): throw JSONSyntaxError(message: "a number is out of range", offset: atStart ? start : index)
            }
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    /// Reads one number at `index` by the grammar of RFC 8259 §6 and says where its parts are.
    mutating func scanNumber() throws(JSONSyntaxError) -> NumberLiteral {
        func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
        var negative = false
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        guard index < bytes.count, isDigit(bytes[index]) else { throw fail("not a JSON value") }
        if bytes[index] == 0x30, index + 1 < bytes.count, isDigit(bytes[index + 1]) { throw fail("a number has a leading zero") }
        let integerStart = index
        while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        let integerDigits = integerStart..<index
        var fractionDigits = index..<index
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw fail("a number's fraction has no digits") }
            let fractionStart = index
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            fractionDigits = fractionStart..<index
        }
        var exponent = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            var exponentNegative = false
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                exponentNegative = bytes[index] == UInt8(ascii: "-")
                index += 1
            }
            guard index < bytes.count, isDigit(bytes[index]) else { throw fail("a number's exponent has no digits") }
            while index < bytes.count, isDigit(bytes[index]) {
                exponent = min(exponent * 10 + Int(bytes[index] - 0x30), 10_000)
                index += 1
            }
            if exponentNegative { exponent = -exponent }
        }
        return NumberLiteral(negative: negative, integerDigits: integerDigits, fractionDigits: fractionDigits, exponent: exponent)
    }

    /// Reads a string at `index` (its opening quote). Without escapes the string is made
    /// straight from the bytes; with them, the bytes are gathered first. Either way they must
    /// be valid UTF-8 (which also refuses surrogates written as UTF-8).
    private mutating func parseString() throws(JSONSyntaxError) -> String {
        index += 1  // the opening quote
        let start = index
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                guard let text = String(validating: bytes[start..<index - 1], as: UTF8.self) else { throw fail("a string is not valid UTF-8") }
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            index += 1
            guard byte >= 0x20 else { throw fail("a control character in a string") }
        }
        var out = Array(bytes[start..<index])
        while true {
            guard index < bytes.count else { throw fail("a string is not closed") }
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let text = String(validating: out, as: UTF8.self) else { throw fail("a string is not valid UTF-8") }
                return text
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { throw fail("a string is not closed") }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800..<0xDC00).contains(scalar) {
                        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                            throw fail("a lone surrogate in a string")
                        }
                        index += 2
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw fail("a lone surrogate in a string") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00..<0xE000).contains(scalar) {
                        throw fail("a lone surrogate in a string")
                    }
                    Self.appendUTF8(scalar, to: &out)
                default: throw fail("an unknown escape in a string")
                }
            default:
                guard byte >= 0x20 else { throw fail("a control character in a string") }
                out.append(byte)
            }
        }
    }

    /// Appends the UTF-8 form of `scalar`, a Unicode scalar value (not a surrogate, at most
    /// U+10FFFF: what a `\u` escape or a surrogate pair gives).
    private static func appendUTF8(_ scalar: UInt32, to out: inout [UInt8]) {
        switch scalar {
        case 0..<0x80:
            out.append(UInt8(scalar))
        case 0x80..<0x800:
            out.append(0xC0 | UInt8(scalar >> 6))
            out.append(0x80 | UInt8(scalar & 0x3F))
        case 0x800..<0x10000:
            out.append(0xE0 | UInt8(scalar >> 12))
            out.append(0x80 | UInt8((scalar >> 6) & 0x3F))
            out.append(0x80 | UInt8(scalar & 0x3F))
        default:
            out.append(0xF0 | UInt8(scalar >> 18))
            out.append(0x80 | UInt8((scalar >> 12) & 0x3F))
            out.append(0x80 | UInt8((scalar >> 6) & 0x3F))
            out.append(0x80 | UInt8(scalar & 0x3F))
        }
    }

    private mutating func hex4() throws(JSONSyntaxError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw fail("a \\u escape is cut short") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - 0x30)
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - 0x61 + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - 0x41 + 10)
            default: throw fail("a \\u escape needs four hex digits")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }
}
