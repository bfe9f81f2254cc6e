import RawStructuredFieldValues

/// A complete RFC 9651 (Structured Field Values) dictionary parser for the fields every
/// signed request carries, `Signature-Input` and `Signature`.
///
/// It exists for two reasons:
///
/// - **Speed.** swift-http-structured-headers' `StructuredFieldValueParser` is generic and
///   not inlinable, so it runs unspecialised; on the verification path it cost more than the
///   signature check itself. This parser works over an `UnsafeBufferPointer<UInt8>` of the
///   field value's UTF-8, with no intermediate copies.
/// - **Exact duplicate detection.** RFC 9651 §4.2.2 has a dictionary keep the last of two
///   equal keys, and the library does so silently. A signature label given twice must be
///   refused, and only the parse itself knows where the members begin: counting commas
///   outside strings is fooled by a display string such as `%"\"`, in which a backslash is
///   not an escape. ``Parsed/repeatedKey`` comes from the key parse, so it cannot be.
///
/// It accepts exactly what the library's `parseDictionaryFieldValue()` (1.7.0) accepts and
/// returns an equal `OrderedMap` — a later duplicate key or parameter replaces the value in
/// the first one's position — and refuses everything the library refuses. A seeded
/// differential test (`StructuredDictionaryDifferentialTests`) holds it to the library over
/// generated and mutated inputs; change both together.
struct StructuredDictionaryParser {
    /// Why a field value is not a structured dictionary. Coarse: the library's error kinds
    /// are not reproduced, only its verdict.
    enum Failure: Error, Equatable {
        case invalidKey
        case invalidItem
        case invalidIntegerOrDecimal
        case invalidString
        case invalidByteSequence
        case invalidBoolean
        case invalidDate
        case invalidDisplayString
        case invalidInnerList
        case invalidDictionary
        /// More distinct keys than the caller allows: the parse stops there, so that a field
        /// of thousands of members costs no more than the limit (the library's map is a list,
        /// and each insertion into it searches the members before).
        case tooManyMembers
        /// An inner list longer than the caller allows, refused where it passes the limit.
        case innerListTooLong
        /// More parameters on one item or inner list than the caller allows (each insertion
        /// into the library's map searches the ones before).
        case tooManyParameters
    }

    private let bytes: UnsafeBufferPointer<UInt8>
    private let limits: Limits
    private var index = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>, limits: Limits) {
        self.bytes = bytes
        self.limits = limits
    }

    /// Parses a field value (one field line, or lines already combined), refusing one past
    /// `limits` where it passes them (``Failure/tooManyMembers``, ``Failure/innerListTooLong``,
    /// ``Failure/tooManyParameters``), so that what is refused costs no more than the limits.
    static func parse(_ value: String, limits: Limits = .none) throws(Failure) -> Parsed {
        var value = value
        return try value.withUTF8 { buffer in Self.result(of: buffer, limits: limits) }.get()
    }

    /// Parses the bytes of a field value.
    static func parse(_ bytes: [UInt8], limits: Limits = .none) throws(Failure) -> Parsed {
        try bytes.withUnsafeBufferPointer { buffer in Self.result(of: buffer, limits: limits) }.get()
    }

    private static func result(of buffer: UnsafeBufferPointer<UInt8>, limits: Limits) -> Result<Parsed, Failure> {
        var parser = StructuredDictionaryParser(buffer, limits: limits)
        return Result { () throws(Failure) -> Parsed in try parser.dictionary() }
    }

    // MARK: - Structure

    /// RFC 9651 §4.2 with §4.2.2: leading spaces, members separated by OWS "," OWS; the
    /// dictionary loop itself eats trailing OWS, so trailing tabs are accepted as well.
    private mutating func dictionary() throws(Failure) -> Parsed {
        var entries: [(key: String, value: ItemOrInnerList)] = []
        var positions: [String: Int] = [:]  // not the library's map: its look-ups run unspecialised and in linear time
        var repeatedKey: String?
        skipSpaces()
        while index < bytes.count {
            let name = try key()
            let member: ItemOrInnerList
            if index < bytes.count, bytes[index] == UInt8(ascii: "=") {
                index += 1
                member = try itemOrInnerList()
            } else {
                member = .item(Item(bareItem: .bool(true), parameters: try parameters()))
            }
            if let position = positions[name] {
                if repeatedKey == nil { repeatedKey = name }
                entries[position].value = member  // as the library: the value is replaced in place
            } else {
                guard entries.count < limits.members else { throw .tooManyMembers }
                positions[name] = entries.count
                entries.append((name, member))
            }
            skipOWS()
            guard index < bytes.count else { break }
            guard bytes[index] == UInt8(ascii: ",") else { throw .invalidDictionary }
            index += 1
            skipOWS()
            guard index < bytes.count else { throw .invalidDictionary }  // a trailing comma
        }
        return Parsed(entries: entries, repeatedKey: repeatedKey)
    }

    private mutating func itemOrInnerList() throws(Failure) -> ItemOrInnerList {
        if index < bytes.count, bytes[index] == UInt8(ascii: "(") { return .innerList(try innerList()) }
        return .item(try item())
    }

    /// §4.2.1.2: items separated by spaces (not tabs), spaces allowed after "(" and before ")".
    private mutating func innerList() throws(Failure) -> InnerList {
        index += 1  // "("
        var items = BareInnerList()
        while index < bytes.count {
            skipSpaces()
            if index < bytes.count, bytes[index] == UInt8(ascii: ")") {
                index += 1
                return InnerList(bareInnerList: items, parameters: try parameters())
            }
            guard items.count < limits.innerListItems else { throw .innerListTooLong }
            items.append(try item())
            guard index < bytes.count, bytes[index] == UInt8(ascii: " ") || bytes[index] == UInt8(ascii: ")") else {
                throw .invalidInnerList
            }
        }
        throw .invalidInnerList
    }

    private mutating func item() throws(Failure) -> Item {
        let bare = try bareItem()
        return Item(bareItem: bare, parameters: try parameters())
    }

    /// §4.2.3.2: ";" then spaces, a key, and "=" with a bare item (else true); a repeated
    /// parameter key replaces the earlier value in place.
    private mutating func parameters() throws(Failure) -> OrderedMap<String, RFC9651BareItem> {
        var result = OrderedMap<String, RFC9651BareItem>()
        var count = 0
        while index < bytes.count, bytes[index] == UInt8(ascii: ";") {
            count += 1
            guard count <= limits.parameters else { throw .tooManyParameters }
            index += 1
            skipSpaces()
            let name = try key()
            var value = RFC9651BareItem.bool(true)
            if index < bytes.count, bytes[index] == UInt8(ascii: "=") {
                index += 1
                value = try bareItem()
            }
            result[name] = value
        }
        return result
    }

    /// §4.2.3.3: lcalpha or "*", then lcalpha, DIGIT, "_", "-", ".", "*".
    private mutating func key() throws(Failure) -> String {
        guard index < bytes.count else { throw .invalidKey }
        switch bytes[index] {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "*"): break
        default: throw .invalidKey
        }
        let start = index
        index += 1
        scan: while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "*"):
                index += 1
            default:
                break scan
            }
        }
        return text(start..<index)
    }

    // MARK: - Bare items

    /// §4.2.3.1, with the RFC 9651 additions (dates, display strings).
    private mutating func bareItem() throws(Failure) -> RFC9651BareItem {
        guard index < bytes.count else { throw .invalidItem }
        switch bytes[index] {
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return try number(isDate: false)
        case UInt8(ascii: "\""):
            return .string(try string())
        case UInt8(ascii: ":"):
            return .undecodedByteSequence(try byteSequence())
        case UInt8(ascii: "?"):
            return .bool(try boolean())
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "*"):
            return .token(token())
        case UInt8(ascii: "@"):
            index += 1
            return try number(isDate: true)
        case UInt8(ascii: "%"):
            return .displayString(try displayString())
        default:
            throw .invalidItem
        }
    }

    /// §4.2.4 (and §4.2.9 for a date): an optional "-", then at most 15 digits, or at most 12
    /// digits, "." and 1–3 digits (16 characters at most, the sign not counted). A date takes
    /// no decimal.
    private mutating func number(isDate: Bool) throws(Failure) -> RFC9651BareItem {
        let failure: Failure = isDate ? .invalidDate : .invalidIntegerOrDecimal
        var negative = false
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        guard index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") else { throw failure }
        let start = index
        var magnitude: Int64 = 0
        var integerDigits = -1  // the digits before ".", once one was read
        while index < bytes.count {
            let byte = bytes[index]
            if byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                magnitude = magnitude * 10 + Int64(byte &- UInt8(ascii: "0"))
            } else if byte == UInt8(ascii: "."), integerDigits < 0 {
                guard !isDate, index - start <= 12 else { throw failure }
                integerDigits = index - start
            } else {
                break
            }
            index += 1
            // At most 16 digits are accumulated before this throws: no overflow.
            guard index - start <= (integerDigits < 0 ? 15 : 16) else { throw failure }
        }
        let signed = negative ? -magnitude : magnitude
        guard integerDigits >= 0 else { return isDate ? .date(signed) : .integer(signed) }
        let fractionDigits = index - start - integerDigits - 1
        guard fractionDigits >= 1, fractionDigits <= 3 else { throw .invalidIntegerOrDecimal }
        // The library's PseudoDecimal(bytes:) stores the digits as the mantissa and minus the
        // fraction's length as the exponent; this public initialiser stores the same two values.
        return .decimal(PseudoDecimal(mantissa: Int(signed), exponent: -fractionDigits))
    }

    /// §4.2.5: printable ASCII between quotes; only `\"` and `\\` are escapes.
    private mutating func string() throws(Failure) -> String {
        index += 1  // the opening quote
        let start = index
        var escapes = 0
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "\\") else {
                    throw .invalidString
                }
                escapes += 1
            case UInt8(ascii: "\""):
                let end = index
                index += 1
                return escapes == 0 ? text(start..<end) : unescaped(start..<end, escapes: escapes)
            case 0x00...0x1F, 0x7F...0xFF:
                throw .invalidString
            default:
                break
            }
            index += 1
        }
        throw .invalidString
    }

    /// The text of a validated string's contents without its escaping backslashes.
    private func unescaped(_ range: Range<Int>, escapes: Int) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(range.count - escapes)
        var position = range.lowerBound
        while position < range.upperBound {
            if bytes[position] == UInt8(ascii: "\\") { position += 1 }  // validated: an escaped byte follows
            out.append(bytes[position])
            position += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// §4.2.7: base64 characters between colons, returned undecoded (not checked further).
    private mutating func byteSequence() throws(Failure) -> String {
        index += 1  // the opening colon
        let start = index
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: ":"):
                let end = index
                index += 1
                return text(start..<end)
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "+"), UInt8(ascii: "/"), UInt8(ascii: "="):
                index += 1
            default:
                throw .invalidByteSequence
            }
        }
        throw .invalidByteSequence
    }

    /// §4.2.8: `?1` or `?0`.
    private mutating func boolean() throws(Failure) -> Bool {
        index += 1  // "?"
        guard index < bytes.count else { throw .invalidBoolean }
        switch bytes[index] {
        case UInt8(ascii: "1"):
            index += 1
            return true
        case UInt8(ascii: "0"):
            index += 1
            return false
        default:
            throw .invalidBoolean
        }
    }

    /// §4.2.6: the first byte (a letter or "*") is checked by the caller; then tchar, ":", "/".
    private mutating func token() -> String {
        let start = index
        index += 1
        scan: while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
                UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
                UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"), UInt8(ascii: ":"), UInt8(ascii: "/"):
                index += 1
            default:
                break scan
            }
        }
        return text(start..<index)
    }

    /// §4.2.10: `%"`, printable ASCII in which `%` starts two lower-case hex digits (a byte)
    /// and a backslash is an ordinary character, `"`; the bytes must be valid UTF-8.
    private mutating func displayString() throws(Failure) -> String {
        index += 1  // "%"
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw .invalidDisplayString }
        index += 1
        var decoded: [UInt8] = []
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case 0x00...0x1F, 0x7F...0xFF:
                throw .invalidDisplayString
            case UInt8(ascii: "%"):
                guard bytes.count - index >= 2, let high = Self.hexValue(bytes[index]), let low = Self.hexValue(bytes[index + 1]) else {
                    throw .invalidDisplayString
                }
                index += 2
                decoded.append(high << 4 | low)
            case UInt8(ascii: "\""):
                guard let valid = String(validating: decoded, as: UTF8.self) else { throw .invalidDisplayString }
                return valid
            default:
                decoded.append(byte)
            }
        }
        throw .invalidDisplayString
    }

    /// A lower-case hex digit's value (RFC 9651 §4.2.10 refuses upper case).
    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte &- UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte &- UInt8(ascii: "a") &+ 10
        default: return nil
        }
    }

    // MARK: - Bytes

    private mutating func skipSpaces() {
        while index < bytes.count, bytes[index] == UInt8(ascii: " ") { index += 1 }
    }

    private mutating func skipOWS() {
        while index < bytes.count, bytes[index] == UInt8(ascii: " ") || bytes[index] == UInt8(ascii: "\t") { index += 1 }
    }

    private func text(_ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }
}
