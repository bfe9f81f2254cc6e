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
