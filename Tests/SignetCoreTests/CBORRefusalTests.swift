import SignetCore
import SignetTestSupport
import Testing

/// What the strict CBOR reader refuses, each with `malformed` (or `tooLarge`) and the byte
/// where the input went wrong; and hostile input, which it survives.
@Suite("CBOR: refusals")
struct CBORRefusalTests {
    /// An item of every major type, float widths, a tag and simple values, to cut short.
    static let sampleValue: CBORValue = .map([
        CBORMapEntry(.text("fmt"), .text("apple-appattest")),
        CBORMapEntry(
            .unsigned(1),
            .array([
                .negative(6), .bytes([1, 2, 3, 4, 5]), .tagged(24, .bytes([0xA0])), .float(1.1), .float(100_000), .bool(true), .null,
                .undefined, .simple(255), .unsigned(1_000_000_000_000),
            ])),
        CBORMapEntry(.negative(1), .map([CBORMapEntry(.text("ü"), .bytes([]))])),
    ])

    /// Shorthand for ``CBORTestSupport/refusal(_:limits:atByte:_:sourceLocation:)``.
    func refused(
        _ bytes: [UInt8], limits: CBOR.Limits = CBOR.Limits(), atByte offset: Int, _ fragment: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        try CBORTestSupport.refusal(bytes, limits: limits, atByte: offset, fragment, sourceLocation: sourceLocation)
    }

    @Test("an item cut short at every length is refused, naming a byte within what is there; whole, it reads")
    func truncated() throws {
        let item = Self.sampleValue.encoded
        #expect(try CBOR.decode(item, source: "whole") == Self.sampleValue)
        for length in 0..<item.count {
            let prefix = Array(item.prefix(length))
            let error = try thrown(SignetCoreError.self) { try CBOR.decode(prefix, source: "the item") }
            #expect(error.code == "malformed", "\(length) bytes: \(error)")
            let offset = try #require(CBORTestSupport.namedOffset(error.description), "\(length) bytes: \(error)")
            #expect(offset <= length, "\(length) bytes: \(error)")
            let prefixError = try thrown(SignetCoreError.self) { try CBOR.decodePrefix([0xEE] + prefix, at: 1, source: "the item") }
            #expect(prefixError.code == "malformed" && CBORTestSupport.namedOffset(prefixError.description) == offset + 1, "\(prefixError)")
        }
        try refused([], atByte: 0, "the input ends inside an item")
    }

    @Test("a length longer than the bytes left is refused from the head alone")
    func lengthPastTheEnd() throws {
        let ones = [UInt8](repeating: 0xFF, count: 8)
        try refused([0x5B] + ones, atByte: 9, "a length of 18446744073709551615 runs past the end of the input (0 byte(s) left)")
        try refused([0x7B, 0x7F] + [UInt8](repeating: 0xFF, count: 7) + Array("abc".utf8), atByte: 9, "a length of 9223372036854775807 runs past the end")
        try refused([0x5A, 0xFF, 0xFF, 0xFF, 0xFF, 0x00], atByte: 5, "a length of 4294967295 runs past the end of the input (1 byte(s) left)")
        try refused([0x82, 0x01, 0x5B] + ones, atByte: 11, "runs past the end of the input (0 byte(s) left)")
        // The head's own argument cut short.
        try refused([0x5B, 0xFF, 0xFF], atByte: 1, "a length of 8 runs past the end of the input (2 byte(s) left)")
        try refused([0x18], atByte: 1, "the input ends inside an item")
    }

    @Test("an array or map count the bytes left cannot hold is refused at its head")
    func countsThatCannotFit() throws {
        let ones = [UInt8](repeating: 0xFF, count: 8)
        try refused([0x9B] + ones, atByte: 0, "18446744073709551615 elements cannot fit in the 0 byte(s) left")
        try refused([0xBB] + ones, atByte: 0, "18446744073709551615 entries cannot fit in the 0 byte(s) left")
        try refused([0x83, 0x01, 0x02], atByte: 0, "3 elements cannot fit in the 2 byte(s) left")
        try refused([0xA2, 0x01, 0x02, 0x03], atByte: 0, "2 entries cannot fit in the 3 byte(s) left")
        try refused([0x81, 0x9A, 0xFF, 0xFF, 0xFF, 0xFF], atByte: 1, "4294967295 elements cannot fit in the 0 byte(s) left")
        #expect(try CBOR.decode([0xA2, 0x01, 0x02, 0x03, 0x04], source: "fits") == .map([
            CBORMapEntry(.unsigned(1), .unsigned(2)), CBORMapEntry(.unsigned(3), .unsigned(4)),
        ]))
    }

    @Test("arrays, maps and tags nest up to maximumDepth levels; one more is refused where it starts")
    func depth() throws {
        for limit in [1, 2, 16] {
            let limits = CBOR.Limits(maximumDepth: limit)
            let arrays = [UInt8](repeating: 0x81, count: limit - 1) + [0x80]
            #expect(throws: Never.self) { try CBOR.decode(arrays, source: "arrays", limits: limits) }
            try refused([0x81] + arrays, limits: limits, atByte: limit, "nested deeper than \(limit) levels")
            let maps = Array([[UInt8]](repeating: [0xA1, 0x00], count: limit - 1).joined()) + [0xA0]
            #expect(throws: Never.self) { try CBOR.decode(maps, source: "maps", limits: limits) }
            try refused([0xA1, 0x00] + maps, limits: limits, atByte: 2 * limit, "nested deeper than \(limit) levels")
            let tags = [UInt8](repeating: 0xC1, count: limit) + [0x00]
            #expect(throws: Never.self) { try CBOR.decode(tags, source: "tags", limits: limits) }
            try refused([0xC1] + tags, limits: limits, atByte: limit, "nested deeper than \(limit) levels")
        }
        // The default is 16 levels.
        #expect(throws: Never.self) { try CBOR.decode([UInt8](repeating: 0x81, count: 15) + [0x80], source: "16 levels") }
        try refused([UInt8](repeating: 0x81, count: 16) + [0x80], atByte: 16, "nested deeper than 16 levels")
        // At depth 0 only a scalar is read.
        #expect(try CBOR.decode([0x01], source: "scalar", limits: CBOR.Limits(maximumDepth: 0)) == .unsigned(1))
        try refused([0x80], limits: CBOR.Limits(maximumDepth: 0), atByte: 0, "nested deeper than 0 levels")
    }

    @Test("more than maximumItems items are refused at the first one too many; map keys count")
    func items() throws {
        let limits = CBOR.Limits(maximumItems: 3)
        #expect(throws: Never.self) { try CBOR.decode([0x82, 0x01, 0x02], source: "three", limits: limits) }
        try refused([0x83, 0x01, 0x02, 0x03], limits: limits, atByte: 3, "more than 3 items")
        #expect(throws: Never.self) { try CBOR.decode([0xA1, 0x01, 0x02], source: "map of one", limits: limits) }
        try refused([0xA2, 0x01, 0x02, 0x03, 0x04], limits: limits, atByte: 3, "more than 3 items")
        try refused([0x01], limits: CBOR.Limits(maximumItems: 0), atByte: 0, "more than 0 items")
    }

    @Test("input longer than maximumBytes is refused as tooLarge before it is read")
    func maximumBytes() throws {
        let limits = CBOR.Limits(maximumBytes: 4)
        #expect(throws: Never.self) { try CBOR.decode([0x83, 0x01, 0x02, 0x03], source: "four", limits: limits) }
        let error = try thrown(SignetCoreError.self) { try CBOR.decode([0x84, 0x01, 0x02, 0x03, 0x04], source: "five", limits: limits) }
        #expect(error == .tooLarge(source: "five", limit: 4))
        #expect(error.code == "tooLarge")
        // Checked before anything is read: the bytes are not CBOR at all.
        let garbage = try thrown(SignetCoreError.self) { try CBOR.decode([0xFF, 0xFF, 0xFF, 0xFF, 0xFF], source: "garbage", limits: limits) }
        #expect(garbage.code == "tooLarge")
        // decodePrefix counts the bytes from its offset.
        let prefixed = try CBOR.decodePrefix([0xEE, 0xEE, 0x83, 0x01, 0x02, 0x03], at: 2, source: "offset", limits: limits)
        #expect(prefixed.end == 6)
    }

    @Test("a map with a key twice is refused at the second key, also when the number is written in another form")
    func duplicateKeys() throws {
        let ones = [UInt8](repeating: 0xFF, count: 8)
        let cases: [([UInt8], Int, String)] = [
            ([0xA2, 0x61, 0x61, 0x01, 0x61, 0x61, 0x02], 4, #"a map has the key "a" twice"#),
            ([0xA2, 0x01, 0x01, 0x01, 0x02], 3, "a map has the key 1 twice"),
            ([0xA2, 0x01, 0x01, 0x18, 0x01, 0x02], 3, "a map has the key 1 twice"),
            ([0xA2, 0x19, 0x00, 0x05, 0x01, 0x1B, 0, 0, 0, 0, 0, 0, 0, 0x05, 0x02], 5, "a map has the key 5 twice"),
            ([0xA2, 0x20, 0x01, 0x38, 0x00, 0x02], 3, "a map has the key -1 twice"),
            ([0xA2, 0x3B] + ones + [0x01, 0x3B] + ones + [0x02], 11, "a map has the key -18446744073709551616 twice"),
            ([0xA2, 0x41, 0xAA, 0x01, 0x41, 0xAA, 0x02], 4, "a map has the key a byte string twice"),
            ([0x81, 0xA2, 0x61, 0x61, 0x01, 0x61, 0x61, 0x02], 5, #"a map has the key "a" twice"#),
        ]
        for (bytes, offset, fragment) in cases {
            try refused(bytes, atByte: offset, fragment)
        }
        // The same key in two maps is no duplicate.
        #expect(throws: Never.self) { try CBOR.decode([0x82, 0xA1, 0x01, 0x01, 0xA1, 0x01, 0x02], source: "two maps") }
        // 1 and "1" are different values (a float key such as 1.0 is refused as such).
        #expect(throws: Never.self) { try CBOR.decode([0xA2, 0x01, 0x00, 0x61, 0x31, 0x00], source: "1, \"1\"") }
    }

    @Test("keys equal as values count as one key: canonically equivalent text (as StrictJSON), 0.0 and -0.0, 1.0 in two widths")
    func keysEqualAsValues() throws {
        // "é" precomposed (c3 a9) and decomposed (65 cc 81).
        try refused([0xA2, 0x62, 0xC3, 0xA9, 0x01, 0x63, 0x65, 0xCC, 0x81, 0x02], atByte: 5, "twice")
        // Float keys are refused outright (NaN ≠ NaN would let one appear twice), at the first.
        try refused([0xA2, 0xF9, 0x00, 0x00, 0x01, 0xF9, 0x80, 0x00, 0x02], atByte: 1, "a map key is a floating-point number")
        try refused([0xA1, 0xF9, 0x7E, 0x00, 0x01], atByte: 1, "a map key is a floating-point number")
    }

    @Test("text that is not valid UTF-8 is refused at its head")
    func invalidUTF8() throws {
        let cases: [([UInt8], Int)] = [
            ([0x62, 0xC3, 0x28], 0),  // a lead byte without its continuation
            ([0x62, 0xC0, 0xAF], 0),  // an overlong "/"
            ([0x63, 0xED, 0xA0, 0x80], 0),  // a UTF-16 surrogate, U+D800
            ([0x64, 0xF4, 0x90, 0x80, 0x80], 0),  // beyond U+10FFFF
            ([0x61, 0xFF], 0),
            ([0x82, 0x01, 0x61, 0x80], 2),  // a lone continuation byte, in an array
        ]
        for (bytes, offset) in cases {
            try refused(bytes, atByte: offset, "a text string is not valid UTF-8")
            // As a byte string the same bytes are fine.
            var asBytes = bytes
            asBytes[offset] -= 0x20
            #expect(throws: Never.self) { try CBOR.decode(asBytes, source: "bytes") }
        }
    }

    @Test("the reserved additional information 28-30 is refused under every major type")
    func reservedAdditionalInformation() throws {
        for major in 0..<8 {
            for info in 28...30 {
                let initial = UInt8(major << 5 | info)
                try refused([initial], atByte: 0, "reserved additional information \(info)")
                try refused([0x81, initial, 0x00], atByte: 1, "reserved additional information \(info)")
            }
        }
    }

    @Test("a break outside an indefinite-length item, and an indefinite integer or tag, are refused")
    func breaksAndIndefiniteIntegers() throws {
        try refused([0xFF], atByte: 0, "a break outside an indefinite-length item")
        try refused([0x82, 0x01, 0xFF], atByte: 2, "a break outside an indefinite-length item")
        try refused([0xA1, 0xFF, 0x01], atByte: 1, "a break outside an indefinite-length item")
        let indefinite = CBOR.Limits(allowsIndefiniteLengths: true)
        try refused([0x81, 0xFF], limits: indefinite, atByte: 1, "a break outside an indefinite-length item")
        for initial: UInt8 in [0x1F, 0x3F, 0xDF] {
            try refused([initial, 0x00], limits: indefinite, atByte: 0, "an integer or tag with an indefinite length")
        }
        // Inside an indefinite-length string only definite strings of its own type.
        try refused([0x5F, 0x61, 0x61, 0xFF], limits: indefinite, atByte: 1, "a chunk of an indefinite-length string is not a definite string")
        try refused([0x7F, 0x7F, 0xFF, 0xFF], limits: indefinite, atByte: 1, "a chunk of an indefinite-length string is not a definite string")
        try refused([0x9F, 0x01], limits: indefinite, atByte: 2, "the input ends inside an indefinite-length item")
        #expect(try CBOR.decode([0x7F, 0x61, 0x61, 0x60, 0x61, 0x62, 0xFF], source: "chunks", limits: indefinite) == .text("ab"))
    }

    @Test("two-byte simple values under 32 are refused; 32 and up, and one-byte ones, read")
    func simpleValues() throws {
        for value in UInt8(0)..<32 {
            try refused([0xF8, value], atByte: 0, "a two-byte simple value under 32")
        }
        #expect(try CBOR.decode([0xF8, 0x20], source: "32") == .simple(32))
        #expect(try CBOR.decode([0xF3], source: "19") == .simple(19))
        #expect(try CBOR.decode([0xE0], source: "0") == .simple(0))
    }

    @Test("bytes after the item are refused by decode; decodePrefix returns where the item ends")
    func trailingBytes() throws {
        try refused([0x01, 0x02], atByte: 1, "1 byte(s) after the item")
        try refused([0x82, 0x01, 0x02, 0x00, 0x00, 0x00], atByte: 3, "3 byte(s) after the item")
        let (value, end) = try CBOR.decodePrefix([0x82, 0x01, 0x02, 0x00, 0x00, 0x00], at: 0, source: "prefix")
        #expect(value == .array([.unsigned(1), .unsigned(2)]))
        #expect(end == 3)
        let inner = try CBOR.decodePrefix([0xAA, 0xBB, 0x63, 0x61, 0x62, 0x63, 0xCC], at: 2, source: "inner")
        #expect(inner.value == .text("abc") && inner.end == 6)
        // Errors name the byte in the whole input.
        let error = try thrown(SignetCoreError.self) { try CBOR.decodePrefix([0x00, 0x00, 0x62, 0xC3, 0x28], at: 2, source: "inner") }
        expectError(error, is: "malformed", mentioning: ["not valid UTF-8", "(at byte 2)"])
        let atEnd = try thrown(SignetCoreError.self) { try CBOR.decodePrefix([0x00, 0x00], at: 2, source: "inner") }
        expectError(atEnd, is: "malformed", mentioning: ["the input ends inside an item (at byte 2)"])
        for offset in [-1, 3, Int.max] {
            let outside = try thrown(SignetCoreError.self) { try CBOR.decodePrefix([0x00, 0x00], at: offset, source: "inner") }
            expectError(outside, is: "malformed", mentioning: ["no item at byte \(offset)"])
        }
    }

    @Test("an indefinite-length text string's chunks are each valid UTF-8 (RFC 8949 §3.2.3), even where joined they would be")
    func textChunksEachValid() throws {
        let indefinite = CBOR.Limits(allowsIndefiniteLengths: true)
        // "é" (c3 a9) split across two chunks.
        try refused([0x7F, 0x61, 0xC3, 0x61, 0xA9, 0xFF], limits: indefinite, atByte: 1, "a chunk of an indefinite-length text string is not valid UTF-8")
        #expect(try CBOR.decode([0x7F, 0x62, 0xC3, 0xA9, 0xFF], source: "whole", limits: indefinite) == .text("é"))
    }

    @Test("requiresShortestForm refuses integers, lengths, counts and tags written longer than they need; the default reads them")
    func shortestForm() throws {
        let shortest = CBOR.Limits(requiresShortestForm: true)
        let longer: [([UInt8], CBORValue)] = [
            ([0x18, 0x17], .unsigned(23)), ([0x19, 0x00, 0xFF], .unsigned(255)), ([0x1A, 0x00, 0x00, 0xFF, 0xFF], .unsigned(65535)),
            ([0x1B, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF], .unsigned(0xFFFF_FFFF)), ([0x38, 0x00], .negative(0)),
            ([0x58, 0x01, 0xAA], .bytes([0xAA])), ([0x79, 0x00, 0x01, 0x61], .text("a")), ([0x98, 0x00], .array([])),
            ([0xB8, 0x00], .map([])), ([0xD8, 0x01, 0x00], .tagged(1, .unsigned(0))),
        ]
        for (bytes, value) in longer {
            try refused(bytes, limits: shortest, atByte: 0, "is not in its shortest form")
            #expect(try CBOR.decode(bytes, source: "default") == value)
        }
        try refused([0x81, 0x18, 0x05], limits: shortest, atByte: 1, "the value 5 is not in its shortest form")
        let ones = [UInt8](repeating: 0xFF, count: 8)
        let exact: [([UInt8], CBORValue)] = [
            ([0x17], .unsigned(23)), ([0x18, 0x18], .unsigned(24)), ([0x18, 0xFF], .unsigned(255)), ([0x19, 0x01, 0x00], .unsigned(256)),
            ([0x19, 0xFF, 0xFF], .unsigned(65535)), ([0x1A, 0x00, 0x01, 0x00, 0x00], .unsigned(65536)),
            ([0x1B, 0, 0, 0, 1, 0, 0, 0, 0], .unsigned(0x1_0000_0000)), ([0x3B] + ones, .negative(UInt64.max)),
            ([0x58, 0x18] + [UInt8](repeating: 7, count: 24), .bytes([UInt8](repeating: 7, count: 24))),
            ([0xD8, 0x18, 0x40], .tagged(24, .bytes([]))),
        ]
        for (bytes, value) in exact {
            #expect(try CBOR.decode(bytes, source: "shortest", limits: shortest) == value)
        }
    }

    /// `input` changed at random: cut short, bytes flipped, bytes inserted, or a byte set to a
    /// head that promises much (a huge length or count, an indefinite length, a break).
    static func mutate(_ input: [UInt8], using random: inout SplitMix64) -> [UInt8] {
        var bytes = input
        switch random.below(4) {
        case 0:
            bytes = Array(bytes.prefix(random.below(max(1, bytes.count))))
        case 1:
            for _ in 0..<(1 + random.below(4)) where !bytes.isEmpty {
                bytes[random.below(bytes.count)] ^= UInt8(truncatingIfNeeded: random.next() | 1)
            }
        case 2:
            let position = random.below(bytes.count + 1)
            bytes.insert(contentsOf: (0..<(1 + random.below(8))).map { _ in UInt8(truncatingIfNeeded: random.next()) }, at: position)
        default:
            if !bytes.isEmpty {
                let heads: [UInt8] = [0x17, 0x18, 0x1B, 0x1C, 0x3B, 0x5B, 0x5F, 0x7B, 0x7F, 0x9B, 0x9F, 0xBB, 0xBF, 0xC1, 0xF8, 0xF9, 0xFF]
                bytes[random.below(bytes.count)] = random.pick(heads)
            }
        }
        return bytes
    }

    @Test("mutated items never crash the reader: each is refused as malformed, naming a byte, or reads and is written in bytes that read back the same")
    func mutations() throws {
        var seeds = try AppendixAExample.loadAll().map(\.bytes)
        seeds += try COSEKeyVector.loadAll().map { try CBORTestSupport.bytes($0.cose) }
        seeds.append(Self.sampleValue.encoded)
        let seed: UInt64 = 0xC0B0_2026_0000_0001
        var random = SplitMix64(seed: seed)
        var accepted = 0
        var refusals = 0
        for iteration in 0..<5000 {
            let input = Self.mutate(seeds[iteration % seeds.count], using: &random)
            for limits in [CBOR.Limits(), CBOR.Limits(allowsIndefiniteLengths: true)] {
                let value: CBORValue
                do {
                    value = try CBOR.decode(input, source: "mutated", limits: limits)
                } catch let error as SignetCoreError {
                    refusals += 1
                    #expect(
                        error.code == "malformed" && CBORTestSupport.namedOffset(error.description) != nil,
                        "seed \(seed), iteration \(iteration): \(error)")
                    continue
                }
                accepted += 1
                let again = try CBOR.decode(value.encoded, source: "re-encoded", limits: CBOR.Limits(maximumBytes: .max, requiresShortestForm: true))
                #expect(CBORTestSupport.same(again, value), "seed \(seed), iteration \(iteration): \(Hex.encode(input))")
            }
        }
        #expect(accepted > 200 && refusals > 200, "\(accepted) read, \(refusals) refused")
    }
}
