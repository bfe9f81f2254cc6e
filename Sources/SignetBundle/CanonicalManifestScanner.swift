/// The members of a manifest as written, before their meaning is checked.
struct ManifestFields {
    struct FileFields {
        var path: String
        var sha256: String
        var size: Int64
    }

    var format: String
    var name: String
    var version: Int64
    var created: String
    var expires: String?
    var files: [FileFields]
}

/// Reads a manifest that is byte for byte in canonical form, in one pass and without building a
/// JSON tree: the members in their sorted order with no whitespace, strings escaped only as
/// ``CanonicalJSON`` escapes them (`\"`, `\\`, `\u00xx` in lower case for U+0000–U+001F), and
/// integers without sign, leading zeros, fraction or exponent, within the manifest's ranges.
///
/// It accepts nothing else — any other byte string returns nil — so what it accepts needs no
/// re-serialisation to prove it canonical; the general reader then handles (and names the
/// problem of) everything it declines. The "manifest" fuzz target checks that whatever is
/// accepted equals the manifest's canonical bytes.
struct CanonicalManifestScanner {
    private let bytes: [UInt8]
    private var index = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// The fields, or nil when the bytes are not exactly a canonical manifest within `limits`.
    mutating func scan(limits: BundleLimits) -> ManifestFields? {
        guard expect(#"{"created":"#), let created = string(), expect(#","expires":"#) else { return nil }
        let expires: String?
        if expect("null") {
            expires = nil
        } else {
            guard let text = string() else { return nil }
            expires = text
        }
        guard expect(#","files":["#) else { return nil }
        var files: [ManifestFields.FileFields] = []
        if !expect("]") {
            repeat {
                guard files.count < limits.maximumEntries, expect(#"{"path":"#), let path = string(), expect(#","sha256":"#),
                    let sha256 = string(), expect(#","size":"#), let size = integer(in: 0...limits.maximumTotalSize), expect("}")
                else { return nil }
                files.append(ManifestFields.FileFields(path: path, sha256: sha256, size: size))
            } while expect(",")
            guard expect("]") else { return nil }
        }
        guard expect(#","format":"#), let format = string(), expect(#","name":"#), let name = string(), expect(#","version":"#),
            let version = integer(in: 1...Int64(1 << 53)), expect("}"), index == bytes.count
        else { return nil }
        return ManifestFields(format: format, name: name, version: version, created: created, expires: expires, files: files)
    }

    /// Consumes `literal` if the bytes continue with it.
    private mutating func expect(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard bytes.count - index >= count else { return false }
        let start = index
        let matches = literal.withUTF8Buffer { expected in
            var offset = 0
            while offset < count, bytes[start + offset] == expected[offset] { offset += 1 }
            return offset == count
        }
        if matches { index += count }
        return matches
    }

    /// A string in canonical escaping, valid UTF-8.
    private mutating func string() -> String? {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
        index += 1
        let start = index
        var escaped = false
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\""):
                let text: String?
                if escaped {
                    text = unescape(start..<index)
                } else {
                    text = bytes.withUnsafeBufferPointer { String(validating: UnsafeBufferPointer(rebasing: $0[start..<index]), as: UTF8.self) }
                }
                index += 1
                return text
            case UInt8(ascii: "\\"):
                escaped = true
                guard index + 1 < bytes.count else { return nil }
                switch bytes[index + 1] {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): index += 2
                case UInt8(ascii: "u"):
                    // Only U+0000–U+001F are written as \u00xx, in lower case.
                    guard index + 5 < bytes.count, bytes[index + 2] == UInt8(ascii: "0"), bytes[index + 3] == UInt8(ascii: "0"),
                        bytes[index + 4] == UInt8(ascii: "0") || bytes[index + 4] == UInt8(ascii: "1"), Self.isLowerHex(bytes[index + 5])
                    else { return nil }
                    index += 6
                default: return nil
                }
            case 0x00..<0x20:
                return nil  // a control character is always escaped
            default:
                index += 1
            }
        }
        return nil
    }

    /// The text of a string whose escapes were validated by ``string()``.
    private func unescape(_ range: Range<Int>) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(range.count)
        var position = range.lowerBound
        while position < range.upperBound {
            let byte = bytes[position]
            guard byte == UInt8(ascii: "\\") else {
                out.append(byte)
                position += 1
                continue
            }
            if bytes[position + 1] == UInt8(ascii: "u") {
                out.append((bytes[position + 4] &- UInt8(ascii: "0")) << 4 | Self.hexValue(bytes[position + 5]))
                position += 6
            } else {
                out.append(bytes[position + 1])
                position += 2
            }
        }
        return String(validating: out, as: UTF8.self)
    }

    /// A canonical non-negative integer in `range`.
    private mutating func integer(in range: ClosedRange<Int64>) -> Int64? {
        let start = index
        var value: Int64 = 0
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
            guard index - start < 18 else { return nil }
            value = value * 10 + Int64(bytes[index] &- UInt8(ascii: "0"))
            index += 1
        }
        let digits = index - start
        guard digits > 0, digits == 1 || bytes[start] != UInt8(ascii: "0"), range.contains(value) else { return nil }
        return value
    }

    private static func isLowerHex(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8 {
        byte <= UInt8(ascii: "9") ? byte &- UInt8(ascii: "0") : byte &- UInt8(ascii: "a") &+ 10
    }
}
