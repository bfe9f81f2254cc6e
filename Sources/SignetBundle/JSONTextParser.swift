/// A small strict JSON parser for ``CanonicalJSON``: the whole grammar of RFC 8259 with a
/// nesting bound, numbers that must be integers (`1e3` is 1000; `1.5` is refused) and strings
/// that must be valid UTF-8 without lone surrogates. A member name given twice in one object
/// is refused — also two names that are equal only as Swift strings (canonically equivalent
/// Unicode), which one dictionary key would silently merge. (Foundation's JSONDecoder did this job at a tenth of the speed: manifests of
/// 10,000 files spent most of their verification time there.)
struct JSONTextParser {
    private let bytes: [UInt8]
    private var index = 0
    private let maximumDepth: Int

    init(_ bytes: [UInt8], maximumDepth: Int = 16) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    /// Parses the whole text as one value.
    mutating func parse() throws(JSONTextError) -> CanonicalJSON {
        let value = try parseValue(depth: 0)
        skipWhitespace()
        guard index == bytes.count else { throw fail("unexpected text after the value") }
        return value
    }

    private func fail(_ message: String) -> JSONTextError { JSONTextError(message: message, offset: index) }

    private mutating func skipWhitespace() {
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 { index += 1 }
    }

    private mutating func parseValue(depth: Int) throws(JSONTextError) -> CanonicalJSON {
        skipWhitespace()
        guard index < bytes.count else { throw fail("unexpected end of text") }
        switch bytes[index] {
        case UInt8(ascii: "{"):
            guard depth < maximumDepth else { throw fail("nested too deeply") }
            index += 1
            var members: [String: CanonicalJSON] = [:]
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw fail("expected a member name") }
                let name = try parseString()
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fail("expected ':'") }
                index += 1
                let start = index
                guard members.updateValue(try parseValue(depth: depth + 1), forKey: name) == nil else {
                    index = start
                    throw fail("the member name \"\(BundleError.printable(name))\" appears twice in one object")
                }
                skipWhitespace()
                guard index < bytes.count else { throw fail("unexpected end of text") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                guard bytes[index] == UInt8(ascii: "}") else { throw fail("expected ',' or '}'") }
                index += 1
                return .object(members)
            }
        case UInt8(ascii: "["):
            guard depth < maximumDepth else { throw fail("nested too deeply") }
            index += 1
            var elements: [CanonicalJSON] = []
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
            while true {
                elements.append(try parseValue(depth: depth + 1))
                skipWhitespace()
                guard index < bytes.count else { throw fail("unexpected end of text") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                guard bytes[index] == UInt8(ascii: "]") else { throw fail("expected ',' or ']'") }
                index += 1
                return .array(elements)
            }
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        default: return .integer(try parseNumber())
        }
    }

    private mutating func literal(_ word: StaticString) throws(JSONTextError) {
        let expected = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        guard index + expected.count <= bytes.count, bytes[index..<index + expected.count].elementsEqual(expected) else {
            throw fail("not a JSON value")
        }
        index += expected.count
    }

    private mutating func parseNumber() throws(JSONTextError) -> Int64 {
        let start = index
        var negative = false
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { negative = true; index += 1 }
        var digits: [UInt8] = []
        func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw fail("not a JSON value") }
        if bytes[index] == 0x30, index + 1 < bytes.count, isDigit(bytes[index + 1]) { throw fail("a number has a leading zero") }
        while index < bytes.count, isDigit(bytes[index]) { digits.append(bytes[index] - 0x30); index += 1 }
        var fractionDigits = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw fail("a number's fraction has no digits") }
            while index < bytes.count, isDigit(bytes[index]) { digits.append(bytes[index] - 0x30); fractionDigits += 1; index += 1 }
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
        // value = digits × 10^(exponent − fractionDigits); it must be a whole number in Int64.
        var scale = exponent - fractionDigits
        while scale < 0, let last = digits.last, last == 0, digits.count > 1 { digits.removeLast(); scale += 1 }
        if digits.allSatisfy({ $0 == 0 }) { return 0 }
        guard scale >= 0, digits.count + scale <= 19 else {
            index = start
            throw fail(scale < 0 ? "numbers must be integers" : "a number is out of range")
        }
        var magnitude: UInt64 = 0
        for digit in digits + Array(repeating: 0, count: scale) {
            let (times, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
            let (plus, overflow2) = times.addingReportingOverflow(UInt64(digit))
            guard !overflow1, !overflow2 else { throw fail("a number is out of range") }
            magnitude = plus
        }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { throw fail("a number is out of range") }
            return magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
        }
        guard magnitude <= UInt64(Int64.max) else { throw fail("a number is out of range") }
        return Int64(magnitude)
    }

    private mutating func parseString() throws(JSONTextError) -> String {
        index += 1  // the opening quote
        var out: [UInt8] = []
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
                    out.append(contentsOf: Array(String(Character(Unicode.Scalar(scalar)!)).utf8))
                default: throw fail("an unknown escape in a string")
                }
            default:
                guard byte >= 0x20 else { throw fail("a control character in a string") }
                out.append(byte)
            }
        }
    }

    private mutating func hex4() throws(JSONTextError) -> UInt32 {
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

/// Why a JSON text does not parse, and where.
struct JSONTextError: Error {
    let message: String
    let offset: Int
}
