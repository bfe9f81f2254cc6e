import RawStructuredFieldValues

/// A fast path for the structured dictionaries that every signed request carries
/// (`Signature-Input`, `Signature`): the common subset of RFC 9651 — strings, tokens,
/// integers, byte sequences, booleans, inner lists and parameters — parsed over a byte
/// buffer. swift-http-structured-headers' parser is generic and not inlinable, so it runs
/// unspecialised; on the verification path it cost more than the signature check itself.
///
/// It never decides that a field is invalid: on anything it does not handle (decimals, dates,
/// display strings) or any syntax error it returns nil, and the caller uses the library's
/// parser, whose verdict and error stand. It also reports a key given twice, which the
/// library silently merges.
struct FastDictionaryParser {
    struct Result {
        var members: OrderedMap<String, ItemOrInnerList>
        var duplicateKey: Bool
    }

    private let bytes: [UInt8]
    private var index = 0

    /// Parses `value`; nil when the fast path does not apply.
    static func parse(_ value: String) -> Result? {
        var parser = FastDictionaryParser(bytes: Array(value.utf8))
        return parser.dictionary()
    }

    private init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skip(_ byte: UInt8) { while current == byte { index += 1 } }

    private mutating func skipOWS() { while current == 0x20 || current == 0x09 { index += 1 } }

    private mutating func dictionary() -> Result? {
        var members: OrderedMap<String, ItemOrInnerList> = [:]
        var seen = Set<String>()
        var duplicate = false
        skip(0x20)
        while index < bytes.count {
            guard let key = key() else { return nil }
            let member: ItemOrInnerList
            if current == UInt8(ascii: "=") {
                index += 1
                if current == UInt8(ascii: "(") {
                    guard let list = innerList() else { return nil }
                    member = .innerList(list)
                } else {
                    guard let bare = bareItem(), let parameters = parameters() else { return nil }
                    member = .item(Item(bareItem: bare, parameters: parameters))
                }
            } else {
                guard let parameters = parameters() else { return nil }
                member = .item(Item(bareItem: .bool(true), parameters: parameters))
            }
            if !seen.insert(key).inserted { duplicate = true }
            members[key] = member
            skipOWS()
            if index == bytes.count { break }
            guard current == UInt8(ascii: ",") else { return nil }
            index += 1
            skipOWS()
            guard index < bytes.count else { return nil }  // a trailing comma
        }
        return Result(members: members, duplicateKey: duplicate)
    }

    private mutating func key() -> String? {
        guard let first = current, (0x61...0x7A).contains(first) || first == UInt8(ascii: "*") else { return nil }
        let start = index
        while let byte = current,
            (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "*")
        {
            index += 1
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    private mutating func innerList() -> InnerList? {
        index += 1  // (
        var items = BareInnerList()
        while true {
            skip(0x20)
            guard let byte = current else { return nil }
            if byte == UInt8(ascii: ")") {
                index += 1
                guard let parameters = parameters() else { return nil }
                return InnerList(bareInnerList: items, parameters: parameters)
            }
            guard let bare = bareItem(), let parameters = parameters() else { return nil }
            items.append(Item(bareItem: bare, parameters: parameters))
            guard current == 0x20 || current == UInt8(ascii: ")") else { return nil }
        }
    }

    private mutating func parameters() -> OrderedMap<String, RFC9651BareItem>? {
        var parameters: OrderedMap<String, RFC9651BareItem> = [:]
        while current == UInt8(ascii: ";") {
            index += 1
            skip(0x20)
            guard let key = key() else { return nil }
            var value = RFC9651BareItem.bool(true)
            if current == UInt8(ascii: "=") {
                index += 1
                guard let bare = bareItem() else { return nil }
                value = bare
            }
            parameters[key] = value
        }
        return parameters
    }

    private mutating func bareItem() -> RFC9651BareItem? {
        guard let byte = current else { return nil }
        switch byte {
        case UInt8(ascii: "\""): return string()
        case UInt8(ascii: ":"): return byteSequence()
        case UInt8(ascii: "?"):
            guard index + 1 < bytes.count, bytes[index + 1] == 0x30 || bytes[index + 1] == 0x31 else { return nil }
            index += 2
            return .bool(bytes[index - 1] == 0x31)
        case UInt8(ascii: "-"), 0x30...0x39: return integer()
        case 0x41...0x5A, 0x61...0x7A, UInt8(ascii: "*"): return token()
        default: return nil  // dates, display strings: the library's parser
        }
    }

    private mutating func integer() -> RFC9651BareItem? {
        var negative = false
        if current == UInt8(ascii: "-") { negative = true; index += 1 }
        var value: Int64 = 0
        var digits = 0
        while let byte = current, (0x30...0x39).contains(byte) {
            value = value * 10 + Int64(byte - 0x30)
            digits += 1
            index += 1
            guard digits <= 15 else { return nil }
        }
        guard digits > 0, current != UInt8(ascii: ".") else { return nil }  // decimals: the library
        return .integer(negative ? -value : value)
    }

    private mutating func string() -> RFC9651BareItem? {
        index += 1
        var out: [UInt8] = []
        while let byte = current {
            index += 1
            switch byte {
            case UInt8(ascii: "\""): return .string(String(decoding: out, as: UTF8.self))
            case UInt8(ascii: "\\"):
                guard let escaped = current, escaped == UInt8(ascii: "\"") || escaped == UInt8(ascii: "\\") else { return nil }
                out.append(escaped)
                index += 1
            case 0x20...0x7E: out.append(byte)
            default: return nil
            }
        }
        return nil
    }

    private mutating func token() -> RFC9651BareItem? {
        let start = index
        while let byte = current, SignatureComponent.isTokenByte(byte) || (0x41...0x5A).contains(byte) || byte == UInt8(ascii: ":") || byte == UInt8(ascii: "/") {
            index += 1
        }
        return .token(String(decoding: bytes[start..<index], as: UTF8.self))
    }

    private mutating func byteSequence() -> RFC9651BareItem? {
        index += 1
        let start = index
        while let byte = current, byte != UInt8(ascii: ":") {
            guard (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
                || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "=")
            else { return nil }
            index += 1
        }
        guard current == UInt8(ascii: ":") else { return nil }
        index += 1
        return .undecodedByteSequence(String(decoding: bytes[start..<index - 1], as: UTF8.self))
    }
}
