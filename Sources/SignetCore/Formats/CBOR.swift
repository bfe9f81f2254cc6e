/// A CBOR data item (RFC 8949) as ``CBOR`` reads it: maps keep their entries in the order
/// they were written, integers keep their full 64-bit range, and byte strings stay bytes.
///
/// The attestation and WebAuthn formats (App Attest objects, `authenticatorData`'s COSE keys,
/// `packed` attestation statements) are CBOR; ``CBOR/decode(_:source:limits:)`` reads them
/// strictly, and ``encoded`` writes a value with definite lengths and every integer, length and
/// tag in its shortest form (as RFC 8949 §4.2.1 asks; floats differ, see ``encoded``), which
/// the tests use to build samples.
public indirect enum CBORValue: Sendable, Hashable {
    /// An unsigned integer (major type 0).
    case unsigned(UInt64)
    /// A negative integer (major type 1): the value is −1 − `n`, so `.negative(0)` is −1 and
    /// `.negative(UInt64.max)` is −2⁶⁴.
    case negative(UInt64)
    /// A byte string (major type 2).
    case bytes([UInt8])
    /// A text string (major type 3), valid UTF-8.
    case text(String)
    /// An array (major type 4).
    case array([CBORValue])
    /// A map (major type 5): its entries in document order. A decoded map never has a key
    /// twice.
    case map([CBORMapEntry])
    /// A tagged item (major type 6).
    case tagged(UInt64, CBORValue)
    /// `false` or `true`.
    case bool(Bool)
    /// `null`.
    case null
    /// `undefined`.
    case undefined
    /// Another simple value (0–19, 32–255).
    case simple(UInt8)
    /// A floating-point number (half, single or double precision).
    case float(Double)

    /// The integer this item holds, when it is one that fits in `Int64`.
    public var int64Value: Int64? {
        switch self {
        case .unsigned(let n): return n <= UInt64(Int64.max) ? Int64(n) : nil
        case .negative(let n): return n <= UInt64(Int64.max) ? -1 - Int64(n) : nil
        default: return nil
        }
    }

    /// The bytes of a byte string.
    public var bytesValue: [UInt8]? {
        if case .bytes(let bytes) = self { return bytes }
        return nil
    }

    /// The text of a text string.
    public var textValue: String? {
        if case .text(let text) = self { return text }
        return nil
    }

    /// The elements of an array.
    public var arrayValue: [CBORValue]? {
        if case .array(let items) = self { return items }
        return nil
    }

    /// The entries of a map.
    public var mapValue: [CBORMapEntry]? {
        if case .map(let entries) = self { return entries }
        return nil
    }

    /// The value under `key` in a map; nil when this is no map or the key is absent.
    public subscript(key: CBORValue) -> CBORValue? {
        mapValue?.first { $0.key == key }?.value
    }

    /// The value under the text key `key` in a map.
    public subscript(key: String) -> CBORValue? { self[.text(key)] }

    /// The value under the integer key `key` in a map (COSE keys use them: 1 is `kty`, −2 `x`).
    public subscript(key: Int64) -> CBORValue? { self[CBORValue(key)] }

    /// The integer `value` as CBOR: unsigned when it is 0 or more, negative otherwise.
    public init(_ value: Int64) {
        self = value >= 0 ? .unsigned(UInt64(value)) : .negative(UInt64(-(value + 1)))
    }

    /// What kind of item this is, for messages ("a byte string", "a map").
    public var kind: String {
        switch self {
        case .unsigned, .negative: return "an integer"
        case .bytes: return "a byte string"
        case .text: return "a text string"
        case .array: return "an array"
        case .map: return "a map"
        case .tagged: return "a tagged item"
        case .bool: return "a boolean"
        case .null: return "null"
        case .undefined: return "undefined"
        case .simple: return "a simple value"
        case .float: return "a floating-point number"
        }
    }
}

/// One entry of a CBOR map.
public struct CBORMapEntry: Sendable, Hashable {
    /// The entry's key.
    public var key: CBORValue
    /// The entry's value.
    public var value: CBORValue

    /// The entry `key` → `value`.
    public init(_ key: CBORValue, _ value: CBORValue) {
        self.key = key
        self.value = value
    }
}

extension CBORValue {
    /// This value in CBOR with definite lengths and every integer, length and tag in its
    /// shortest form. Floats are written in single precision when it holds the value exactly
    /// (NaN too), otherwise in double — never in half precision, so this is not RFC 8949
    /// §4.2.1's deterministic encoding for floats. Map entries are written in their order here
    /// (the caller sorts them when a format requires the bytewise order). A simple value must
    /// be 0–19 or 32–255, as ``CBORValue/simple(_:)`` says.
    public var encoded: [UInt8] {
        var out: [UInt8] = []
        encode(into: &out)
        return out
    }

    private func encode(into out: inout [UInt8]) {
        switch self {
        case .unsigned(let n): Self.head(0, n, into: &out)
        case .negative(let n): Self.head(1, n, into: &out)
        case .bytes(let bytes):
            Self.head(2, UInt64(bytes.count), into: &out)
            out += bytes
        case .text(let text):
            let utf8 = Array(text.utf8)
            Self.head(3, UInt64(utf8.count), into: &out)
            out += utf8
        case .array(let items):
            Self.head(4, UInt64(items.count), into: &out)
            for item in items { item.encode(into: &out) }
        case .map(let entries):
            Self.head(5, UInt64(entries.count), into: &out)
            for entry in entries {
                entry.key.encode(into: &out)
                entry.value.encode(into: &out)
            }
        case .tagged(let tag, let item):
            Self.head(6, tag, into: &out)
            item.encode(into: &out)
        case .bool(let flag): out.append(flag ? 0xF5 : 0xF4)
        case .null: out.append(0xF6)
        case .undefined: out.append(0xF7)
        case .simple(let value):
            precondition(!(20...31).contains(value), "simple(\(value)) is not a simple value CBOR can write as such")
            if value < 24 { out.append(0xE0 | value) } else { out += [0xF8, value] }
        case .float(let value):
            if let single = Float(exactly: value) ?? (value.isNaN ? Float.nan : nil) {
                out.append(0xFA)
                out += withUnsafeBytes(of: single.bitPattern.bigEndian, Array.init)
            } else {
                out.append(0xFB)
                out += withUnsafeBytes(of: value.bitPattern.bigEndian, Array.init)
            }
        }
    }

    /// The initial byte and argument of an item of `major` type with argument `value`.
    static func head(_ major: UInt8, _ value: UInt64, into out: inout [UInt8]) {
        let type = major << 5
        switch value {
        case 0..<24: out.append(type | UInt8(value))
        case 24...0xFF: out += [type | 24, UInt8(value)]
        case 0x100...0xFFFF: out.append(type | 25); out += withUnsafeBytes(of: UInt16(value).bigEndian, Array.init)
        case 0x1_0000...0xFFFF_FFFF: out.append(type | 26); out += withUnsafeBytes(of: UInt32(value).bigEndian, Array.init)
        default: out.append(type | 27); out += withUnsafeBytes(of: value.bigEndian, Array.init)
        }
    }
}
