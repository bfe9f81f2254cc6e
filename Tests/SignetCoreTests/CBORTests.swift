import Foundation
import SignetCore
import SignetTestSupport
import Testing

/// One example of RFC 8949 Appendix A, as `Vectors/cbor/appendix_a.json` gives it (its README
/// says where the file comes from).
struct AppendixAExample: Sendable, CustomTestStringConvertible {
    /// Its place in the file.
    let index: Int
    /// The encoding in hex, as the file gives it.
    let hex: String
    /// The encoding.
    let bytes: [UInt8]
    /// Whether a generic encoder would typically write the same bytes again.
    let roundtrip: Bool
    /// The value as JSON, when JSON can hold it.
    let decoded: JSONValue?
    /// The value in CBOR diagnostic notation, when JSON cannot hold it.
    let diagnostic: String?

    var testDescription: String { "#\(index) \(hex)" }

    /// Whether it uses an indefinite length: the file's examples that do not round trip are
    /// those and six floats, whose initial bytes are of major type 7.
    var isIndefinite: Bool { !roundtrip && bytes[0] < 0xE0 }

    /// Whether it is a half-precision float, which ``CBORValue/encoded`` writes in single
    /// precision (it writes a float as a double unless a single holds the same value).
    var isHalfPrecision: Bool { bytes[0] == 0xF9 }

    /// Whether RFC 8949 makes it not well-formed (RFC 7049's Appendix A listed it).
    var isNotWellFormed: Bool { diagnostic.map { Self.notWellFormed.contains($0) } ?? false }

    /// `f818`, simple(24): RFC 8949 §3.3 makes a two-byte simple value under 32 not well-formed (RFC
    /// 7049 erratum 5917; RFC 8949's Appendix A dropped the example).
    static let notWellFormed: Set<String> = ["simple(24)"]

    /// The values of the examples JSON cannot hold, by their diagnostic notation.
    static let diagnosticValues: [String: CBORValue] = [
        "Infinity": .float(Double.infinity), "-Infinity": .float(-Double.infinity), "NaN": .float(Double.nan),
        "undefined": .undefined, "simple(16)": .simple(16), "simple(255)": .simple(255),
        #"0("2013-03-21T20:04:00Z")"#: .tagged(0, .text("2013-03-21T20:04:00Z")),
        "1(1363896240)": .tagged(1, .unsigned(1_363_896_240)),
        "1(1363896240.5)": .tagged(1, .float(1_363_896_240.5)),
        "23(h'01020304')": .tagged(23, .bytes([0x01, 0x02, 0x03, 0x04])),
        "24(h'6449455446')": .tagged(24, .bytes([0x64, 0x49, 0x45, 0x54, 0x46])),
        #"32("http://www.example.com")"#: .tagged(32, .text("http://www.example.com")),
        "h''": .bytes([]), "h'01020304'": .bytes([0x01, 0x02, 0x03, 0x04]),
        "{1: 2, 3: 4}": .map([CBORMapEntry(.unsigned(1), .unsigned(2)), CBORMapEntry(.unsigned(3), .unsigned(4))]),
        "(_ h'0102', h'030405')": .bytes([0x01, 0x02, 0x03, 0x04, 0x05]),
    ]

    /// Every example of the file, in order.
    static func loadAll() throws -> [AppendixAExample] {
        let text = [UInt8](try TestVectors.data("cbor/appendix_a.json", in: .module))
        guard case .array(let elements) = try StrictJSON.parse(text) else {
            throw VectorError(description: "cbor/appendix_a.json is not a JSON array")
        }
        var examples: [AppendixAExample] = []
        for (index, element) in elements.enumerated() {
            guard case .object(let members) = element else { throw VectorError(description: "example \(index) is not an object") }
            func member(_ name: String) -> JSONValue? { members.first { $0.name == name }?.value }
            guard case .string(let hex)? = member("hex"), case .bool(let roundtrip)? = member("roundtrip") else {
                throw VectorError(description: "example \(index) has no hex or roundtrip")
            }
            var diagnostic: String?
            if case .string(let text)? = member("diagnostic") { diagnostic = text }
            let decoded = member("decoded")
            guard (decoded == nil) != (diagnostic == nil) else {
                throw VectorError(description: "example \(index) needs exactly one of decoded and diagnostic")
            }
            examples.append(
                AppendixAExample(
                    index: index, hex: hex, bytes: try TestVectors.bytes(hex: hex), roundtrip: roundtrip, decoded: decoded,
                    diagnostic: diagnostic))
        }
        return examples
    }

    /// The value the example encodes.
    func expected() throws -> CBORValue {
        if let decoded { return try Self.value(decoded) }
        guard let diagnostic, let value = Self.diagnosticValues[diagnostic] else {
            throw VectorError(description: "\(testDescription): no value for the diagnostic \(diagnostic ?? "-")")
        }
        return value
    }

    /// A JSON value as CBOR: a number with a fraction or exponent is a float; an integer
    /// beyond the 64-bit heads is a bignum (RFC 8949 §3.4.3: tag 2 for n, tag 3 for −1 − n,
    /// the magnitude's bytes without leading zeros).
    static func value(_ json: JSONValue) throws -> CBORValue {
        switch json {
        case .null: return .null
        case .bool(let flag): return .bool(flag)
        case .string(let text): return .text(text)
        case .array(let items): return .array(try items.map { try value($0) })
        case .object(let members): return .map(try members.map { CBORMapEntry(.text($0.name), try value($0.value)) })
        case .number(let text):
            if text.contains(where: { ".eE".contains($0) }) {
                guard let number = Double(text) else { throw VectorError(description: "not a number: \(text)") }
                return .float(number)
            }
            let negative = text.hasPrefix("-")
            let digits = negative ? String(text.dropFirst()) : text
            var magnitude = try decimalBytes(digits)
            if negative {
                guard !magnitude.isEmpty else { return .unsigned(0) }
                magnitude = minusOne(magnitude)  // −1 − n = value, so n = |value| − 1
            }
            guard magnitude.count > 8 else {
                let number = magnitude.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                return negative ? .negative(number) : .unsigned(number)
            }
            return .tagged(negative ? 3 : 2, .bytes(magnitude))
        }
    }

    /// The big-endian bytes of a decimal number, without leading zeros (none for 0).
    static func decimalBytes(_ digits: String) throws -> [UInt8] {
        var bytes: [UInt8] = []
        for character in digits {
            guard character.isASCII, let digit = character.wholeNumberValue else { throw VectorError(description: "not a decimal: \(digits)") }
            var carry = digit
            for index in bytes.indices.reversed() {
                let product = Int(bytes[index]) * 10 + carry
                bytes[index] = UInt8(product & 0xFF)
                carry = product >> 8
            }
            while carry > 0 {
                bytes.insert(UInt8(carry & 0xFF), at: 0)
                carry >>= 8
            }
        }
        return Array(bytes.drop { $0 == 0 })
    }

    /// `bytes` (big-endian, not zero) minus one, without leading zeros.
    static func minusOne(_ bytes: [UInt8]) -> [UInt8] {
        var out = bytes
        var index = out.count - 1
        while index >= 0 {
            if out[index] > 0 {
                out[index] -= 1
                break
            }
            out[index] = 0xFF
            index -= 1
        }
        return Array(out.drop { $0 == 0 })
    }
}

/// The published examples of RFC 8949 Appendix A, decoded and written again.
@Suite("CBOR: RFC 8949 Appendix A")
struct CBORTests {
    @Test("the vector file holds all 82 examples: 59 with a JSON value, 11 with indefinite lengths")
    func vectorFile() throws {
        let examples = try AppendixAExample.loadAll()
        #expect(examples.count == 82)
        #expect(examples.filter { $0.decoded != nil }.count == 59)
        #expect(examples.filter(\.isIndefinite).count == 11)
        #expect(examples.filter(\.isNotWellFormed).count == 1)
    }

    @Test("every example decodes to its value (indefinite lengths allowed), and simple(24) is refused")
    func everyExampleDecodes() throws {
        let limits = CBOR.Limits(allowsIndefiniteLengths: true)
        var fromJSON = 0
        var fromDiagnostic = 0
        var refused = 0
        for example in try AppendixAExample.loadAll() {
            if example.isNotWellFormed {
                try CBORTestSupport.refusal(example.bytes, limits: limits, atByte: 0, "a two-byte simple value under 32")
                refused += 1
                continue
            }
            let expected = try example.expected()
            let decoded = try CBOR.decode(example.bytes, source: example.hex, limits: limits)
            #expect(CBORTestSupport.same(decoded, expected), "\(example.testDescription): decoded \(decoded), expected \(expected)")
            if example.decoded != nil { fromJSON += 1 } else { fromDiagnostic += 1 }
        }
        #expect(fromJSON == 59)
        #expect(fromDiagnostic == 22)
        #expect(refused == 1)
    }

    @Test("the round-trip examples are written again byte for byte; half-precision floats as the same single-precision value")
    func roundTrips() throws {
        var identical = 0
        var widened = 0
        for example in try AppendixAExample.loadAll() where example.roundtrip && !example.isNotWellFormed {
            let value = try CBOR.decode(example.bytes, source: example.hex)
            let encoded = value.encoded
            if example.isHalfPrecision {
                #expect(encoded.count == 5 && encoded.first == 0xFA, "\(example.testDescription): written as \(Hex.encode(encoded))")
                let again = try CBOR.decode(encoded, source: "re-encoded")
                #expect(CBORTestSupport.same(again, value), "\(example.testDescription)")
                widened += 1
            } else {
                #expect(encoded == example.bytes, "\(example.testDescription): written as \(Hex.encode(encoded))")
                identical += 1
            }
        }
        #expect(identical == 53)
        #expect(widened == 11)
    }

    @Test("the indefinite-length examples are refused by default at their first indefinite head, and read when allowed")
    func indefiniteLengths() throws {
        var checked = 0
        for example in try AppendixAExample.loadAll() where example.isIndefinite {
            // In these examples no byte before the first indefinite head has one of its values.
            let head = try #require(example.bytes.firstIndex { [0x5F, 0x7F, 0x9F, 0xBF].contains($0) }, "\(example.testDescription)")
            try CBORTestSupport.refusal(example.bytes, atByte: head, "an indefinite length, which this format does not allow")
            let value = try CBOR.decode(example.bytes, source: example.hex, limits: CBOR.Limits(allowsIndefiniteLengths: true))
            let expected = try example.expected()
            #expect(CBORTestSupport.same(value, expected), "\(example.testDescription)")
            // Written again with definite lengths, it reads under the default limits, shortest forms required.
            let again = try CBOR.decode(value.encoded, source: "re-encoded", limits: CBOR.Limits(requiresShortestForm: true))
            #expect(CBORTestSupport.same(again, value), "\(example.testDescription)")
            checked += 1
        }
        #expect(checked == 11)
    }

    @Test("encoded writes every head in its shortest form, and floats as singles when a single holds the value")
    func deterministicEncoding() throws {
        let cases: [(CBORValue, String)] = [
            (.unsigned(23), "17"), (.unsigned(24), "1818"), (.unsigned(255), "18ff"), (.unsigned(256), "190100"),
            (.unsigned(65535), "19ffff"), (.unsigned(65536), "1a00010000"), (.unsigned(0xFFFF_FFFF), "1affffffff"),
            (.unsigned(0x1_0000_0000), "1b0000000100000000"), (.negative(23), "37"), (.negative(24), "3818"),
            (.bytes([UInt8](repeating: 0xAB, count: 24)), "5818" + String(repeating: "ab", count: 24)),
            (.tagged(24, .bytes([])), "d81840"), (.simple(16), "f0"), (.simple(32), "f820"),
            (.float(1.5), "fa3fc00000"), (.float(-0.0), "fa80000000"), (.float(1.1), "fb3ff199999999999a"),
            (.float(.infinity), "fa7f800000"), (.float(.nan), "fa7fc00000"),
        ]
        for (value, hex) in cases {
            #expect(Hex.encode(value.encoded) == hex, "\(value)")
        }
    }

    @Test("integers read as Int64 where they fit; maps are looked up by text and integer keys")
    func accessors() throws {
        #expect(CBORValue(-1) == .negative(0))
        #expect(CBORValue(Int64.min) == .negative(UInt64(Int64.max)))
        #expect(CBORValue.negative(UInt64(Int64.max)).int64Value == Int64.min)
        #expect(CBORValue.unsigned(UInt64(Int64.max)).int64Value == Int64.max)
        #expect(CBORValue.unsigned(UInt64(Int64.max) + 1).int64Value == nil)
        #expect(CBORValue.negative(UInt64.max).int64Value == nil)
        let map = try CBOR.decode(CBORTestSupport.bytes("a3636b6579f5200141aa6178"), source: "map")
        #expect(map["key"] == .bool(true))
        #expect(map[-1] == .unsigned(1))
        #expect(map[.bytes([0xAA])] == .text("x"))
        #expect(map["absent"] == nil)
        #expect(CBORValue.array([]).mapValue == nil && CBORValue.array([])["key"] == nil)
    }
}
