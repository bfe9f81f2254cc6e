/// A strict CBOR (RFC 8949) reader for the formats attestations and passkeys use.
///
/// ``decode(_:source:limits:)`` reads exactly one data item and refuses, naming the byte where
/// it went wrong (``SignetCoreError/malformed(source:detail:)``):
///
/// - input that ends inside an item, and anything after the item;
/// - a length larger than the bytes that are left (so no hostile length allocates memory);
/// - indefinite-length strings, arrays and maps, unless ``Limits/allowsIndefiniteLengths``;
/// - nesting deeper than ``Limits/maximumDepth``, more than ``Limits/maximumItems`` items, or
///   more than ``Limits/maximumBytes`` of input;
/// - a map that has a key twice (also the same number written in two forms, and two text
///   keys equal as Swift strings, such as a precomposed and a decomposed "é"), and a map key
///   that is a floating-point number (no format read here uses one, and NaN ≠ NaN would let a
///   key appear twice);
/// - text strings that are not valid UTF-8, the reserved additional information 28–30, a
///   break (0xFF) outside an indefinite-length item, and two-byte simple values under 32;
/// - with ``Limits/requiresShortestForm``, an integer, length or tag not written in its
///   shortest form (CTAP2's canonical encoding requires it).
///
/// ``decodePrefix(_:at:source:limits:)`` reads one item at the start of a longer input, as a
/// COSE key inside `authenticatorData` is read, and says where it ends.
public enum CBOR {
    /// What ``CBOR/decode(_:source:limits:)`` accepts.
    public struct Limits: Sendable, Equatable {
        /// How many arrays, maps and tags may be nested: 16 allows sixteen levels.
        public var maximumDepth: Int
        /// How many data items the whole input may hold.
        public var maximumItems: Int
        /// How long the input may be.
        public var maximumBytes: Int
        /// Whether indefinite-length strings, arrays and maps are read (formats built on
        /// CTAP2's canonical CBOR, such as WebAuthn and App Attest, never write them).
        public var allowsIndefiniteLengths: Bool
        /// Whether every integer, length and tag must be in its shortest form.
        public var requiresShortestForm: Bool

        /// Limits with the given values; the defaults suit attestation objects (a few KiB).
        public init(
            maximumDepth: Int = 16, maximumItems: Int = 10_000, maximumBytes: Int = 1 << 20,
            allowsIndefiniteLengths: Bool = false, requiresShortestForm: Bool = false
        ) {
            self.maximumDepth = maximumDepth
            self.maximumItems = maximumItems
            self.maximumBytes = maximumBytes
            self.allowsIndefiniteLengths = allowsIndefiniteLengths
            self.requiresShortestForm = requiresShortestForm
        }
    }

    /// Reads `bytes` as exactly one CBOR data item; `source` names the input in errors.
    /// - Throws: ``SignetCoreError/malformed(source:detail:)`` or ``SignetCoreError/tooLarge(source:limit:)``.
    public static func decode(_ bytes: [UInt8], source: String, limits: Limits = Limits()) throws -> CBORValue {
        let (value, end) = try decodePrefix(bytes, at: 0, source: source, limits: limits)
        guard end == bytes.count else {
            throw SignetCoreError.malformed(source: source, detail: "CBOR: \(bytes.count - end) byte(s) after the item (at byte \(end))")
        }
        return value
    }

    /// Reads one CBOR data item starting at `offset` in `bytes` and returns it with the offset
    /// just after it; what follows is left to the caller.
    /// - Throws: ``SignetCoreError/malformed(source:detail:)`` or ``SignetCoreError/tooLarge(source:limit:)``.
    public static func decodePrefix(
        _ bytes: [UInt8], at offset: Int, source: String, limits: Limits = Limits()
    ) throws -> (value: CBORValue, end: Int) {
        guard offset >= 0, offset <= bytes.count else {
            throw SignetCoreError.malformed(source: source, detail: "CBOR: no item at byte \(offset) of \(bytes.count)")
        }
        guard bytes.count - offset <= limits.maximumBytes else {
            throw SignetCoreError.tooLarge(source: source, limit: limits.maximumBytes)
        }
        var reader = CBORReader(bytes: bytes, position: offset, limits: limits)
        do {
            let value = try reader.item(depth: 0)
            return (value, reader.position)
        } catch {
            throw SignetCoreError.malformed(source: source, detail: "CBOR: \(error.message) (at byte \(error.offset))")
        }
    }
}

/// Why CBOR does not parse, and where (turned into a ``SignetCoreError`` by ``CBOR``).
struct CBORSyntaxError: Error {
    let message: String
    let offset: Int
}

/// The decoder behind ``CBOR``.
struct CBORReader {
    let bytes: [UInt8]
    var position: Int
    let limits: CBOR.Limits
    private var items = 0

    init(bytes: [UInt8], position: Int, limits: CBOR.Limits) {
        self.bytes = bytes
        self.position = position
        self.limits = limits
    }

    private func fail(_ message: String, at offset: Int? = nil) -> CBORSyntaxError {
        CBORSyntaxError(message: message, offset: offset ?? position)
    }

    private mutating func byte() throws(CBORSyntaxError) -> UInt8 {
        guard position < bytes.count else { throw fail("the input ends inside an item") }
        defer { position += 1 }
        return bytes[position]
    }

    private mutating func take(_ count: UInt64) throws(CBORSyntaxError) -> ArraySlice<UInt8> {
        guard count <= UInt64(bytes.count - position) else {
            throw fail("a length of \(count) runs past the end of the input (\(bytes.count - position) byte(s) left)")
        }
        defer { position += Int(count) }
        return bytes[position..<(position + Int(count))]
    }

    /// The argument of an item whose initial byte has additional information `info`; nil for
    /// an indefinite length (31).
    private mutating func argument(_ info: UInt8, start: Int) throws(CBORSyntaxError) -> UInt64? {
        let value: UInt64
        switch info {
        case 0..<24: return UInt64(info)
        case 24: value = UInt64(try byte())
        case 25, 26, 27:
            value = try take(1 << (info - 24)).reduce(0) { $0 << 8 | UInt64($1) }
        case 31: return nil
        default: throw fail("reserved additional information \(info)", at: start)
        }
        if limits.requiresShortestForm {
            let shortest: Bool
            switch info {
            case 24: shortest = value >= 24
            case 25: shortest = value > 0xFF
            case 26: shortest = value > 0xFFFF
            default: shortest = value > 0xFFFF_FFFF
            }
            guard shortest else { throw fail("the value \(value) is not in its shortest form", at: start) }
        }
        return value
    }

    mutating func item(depth: Int) throws(CBORSyntaxError) -> CBORValue {
        let start = position
        items += 1
        guard items <= limits.maximumItems else { throw fail("more than \(limits.maximumItems) items", at: start) }
        let initial = try byte()
        let major = initial >> 5
        let info = initial & 0x1F
        if major == 7 { return try simpleOrFloat(info, start: start) }
        let argument = try argument(info, start: start)
        switch major {
        case 0: return .unsigned(try definite(argument, start))
        case 1: return .negative(try definite(argument, start))
        case 2: return .bytes(try string(major: 2, argument, start: start))
        case 3:
            let utf8 = try string(major: 3, argument, start: start)
            guard let text = String(validating: utf8, as: UTF8.self) else { throw fail("a text string is not valid UTF-8", at: start) }
            return .text(text)
        case 4:
            guard depth < limits.maximumDepth else { throw fail("nested deeper than \(limits.maximumDepth) levels", at: start) }
            var elements: [CBORValue] = []
            if let count = argument {
                try requireRoom(count, start)
                for _ in 0..<count { elements.append(try item(depth: depth + 1)) }
            } else {
                try requireIndefiniteAllowed(start)
                while try !atBreak() { elements.append(try item(depth: depth + 1)) }
            }
            return .array(elements)
        case 5:
            guard depth < limits.maximumDepth else { throw fail("nested deeper than \(limits.maximumDepth) levels", at: start) }
            var entries: [CBORMapEntry] = []
            var keys = Set<CBORValue>()
            func entry(_ reader: inout CBORReader) throws(CBORSyntaxError) {
                let keyStart = reader.position
                let key = try reader.item(depth: depth + 1)
                if case .float = key { throw reader.fail("a map key is a floating-point number", at: keyStart) }
                guard keys.insert(key).inserted else { throw reader.fail("a map has the key \(Self.describe(key)) twice", at: keyStart) }
                entries.append(CBORMapEntry(key, try reader.item(depth: depth + 1)))
            }
            if let count = argument {
                try requireRoom(count, start, perItem: 2)
                for _ in 0..<count { try entry(&self) }
            } else {
                try requireIndefiniteAllowed(start)
                while try !atBreak() { try entry(&self) }
            }
            return .map(entries)
        default:  // 6: a tag
            guard depth < limits.maximumDepth else { throw fail("nested deeper than \(limits.maximumDepth) levels", at: start) }
            return .tagged(try definite(argument, start), try item(depth: depth + 1))
        }
    }

    private func definite(_ argument: UInt64?, _ start: Int) throws(CBORSyntaxError) -> UInt64 {
        guard let argument else { throw fail("an integer or tag with an indefinite length", at: start) }
        return argument
    }

    private func requireIndefiniteAllowed(_ start: Int) throws(CBORSyntaxError) {
        guard limits.allowsIndefiniteLengths else { throw fail("an indefinite length, which this format does not allow", at: start) }
    }

    /// Refuses a count of items that the bytes left cannot hold (each item takes a byte).
    private func requireRoom(_ count: UInt64, _ start: Int, perItem: UInt64 = 1) throws(CBORSyntaxError) {
        let left = UInt64(bytes.count - position)
        guard count <= left / perItem else {
            throw fail("\(count) \(perItem == 2 ? "entries" : "elements") cannot fit in the \(left) byte(s) left", at: start)
        }
    }

    /// Whether the next byte is a break (0xFF), consuming it if so.
    private mutating func atBreak() throws(CBORSyntaxError) -> Bool {
        guard position < bytes.count else { throw fail("the input ends inside an indefinite-length item") }
        guard bytes[position] == 0xFF else { return false }
        position += 1
        return true
    }

    private mutating func string(major: UInt8, _ length: UInt64?, start: Int) throws(CBORSyntaxError) -> [UInt8] {
        if let length { return Array(try take(length)) }
        try requireIndefiniteAllowed(start)
        var joined: [UInt8] = []
        while try !atBreak() {
            let chunkStart = position
            let initial = try byte()
            guard initial >> 5 == major, let count = try argument(initial & 0x1F, start: chunkStart) else {
                throw fail("a chunk of an indefinite-length string is not a definite string of the same type", at: chunkStart)
            }
            let chunk = try take(count)
            // RFC 8949 §3.2.3: each chunk of a text string is valid UTF-8 on its own.
            if major == 3, String(validating: chunk, as: UTF8.self) == nil {
                throw fail("a chunk of an indefinite-length text string is not valid UTF-8", at: chunkStart)
            }
            joined += chunk
        }
        return joined
    }

    private mutating func simpleOrFloat(_ info: UInt8, start: Int) throws(CBORSyntaxError) -> CBORValue {
        switch info {
        case 20: return .bool(false)
        case 21: return .bool(true)
        case 22: return .null
        case 23: return .undefined
        case 0..<20: return .simple(info)
        case 24:
            let value = try byte()
            guard value >= 32 else { throw fail("a two-byte simple value under 32", at: start) }
            return .simple(value)
        case 25:
            let bits = try take(2).reduce(0) { $0 << 8 | UInt16($1) }
            return .float(Double(Float16Bits.value(bits)))
        case 26: return .float(Double(Float(bitPattern: try take(4).reduce(0) { $0 << 8 | UInt32($1) })))
        case 27: return .float(Double(bitPattern: try take(8).reduce(0) { $0 << 8 | UInt64($1) }))
        case 31: throw fail("a break outside an indefinite-length item", at: start)
        default: throw fail("reserved additional information \(info)", at: start)
        }
    }

    static func describe(_ key: CBORValue) -> String {
        switch key {
        case .text(let text): return "\"\(PrintableText.escaped(text, limit: 60))\""
        case .unsigned(let n): return "\(n)"
        case .negative(let n): return n == UInt64.max ? "-18446744073709551616" : "-\(n + 1)"
        default: return key.kind
        }
    }
}

/// IEEE 754 half precision, decoded without relying on the platform's `Float16`.
enum Float16Bits {
    static func value(_ bits: UInt16) -> Float {
        let sign: Float = bits & 0x8000 == 0 ? 1 : -1
        let exponent = Int((bits >> 10) & 0x1F)
        let fraction = Float(bits & 0x3FF)
        switch exponent {
        case 0: return sign * fraction * Float(sign: .plus, exponent: -24, significand: 1)
        case 31: return fraction == 0 ? sign * .infinity : .nan
        default: return sign * (1 + fraction / 1024) * Float(sign: .plus, exponent: exponent - 15, significand: 1)
        }
    }
}
