import Foundation
import SignetCore
import Testing

// MARK: - Hex

@Suite("Hex")
struct HexTests {
    @Test("encodes lower-case, two digits a byte")
    func encode() {
        let mixed: [UInt8] = [0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff]
        let letters: [UInt8] = [0xab, 0xcd, 0xef]
        #expect(Hex.encode(mixed) == "00017f80feff")
        #expect(Hex.encode([UInt8]()) == "")
        #expect(Hex.encode(letters) == "abcdef")
        #expect(Hex.encode(letters[1...]) == "cdef")
    }

    @Test("every byte value round-trips")
    func allBytes() {
        let all = (0...255).map { UInt8($0) }
        let expected = all.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        let encoded = Hex.encode(all)
        #expect(encoded == expected)
        #expect(Hex.decode(encoded) == all)
        #expect(Hex.decode(encoded.uppercased()) == all)
    }

    @Test("decodes either case, and substrings")
    func decode() {
        let deadbeef: [UInt8] = [0xde, 0xad, 0xbe, 0xef]
        #expect(Hex.decode("deadbeef") == deadbeef)
        #expect(Hex.decode("DEADBEEF") == deadbeef)
        #expect(Hex.decode("DeAdBeEf") == deadbeef)
        #expect(Hex.decode("") == [UInt8]())
        let framed = "zz00ffzz"
        let inner: [UInt8] = [0x00, 0xff]
        #expect(Hex.decode(framed.dropFirst(2).dropLast(2)) == inner)
    }

    static let invalid = [
        "0", "abc", "0g", "g0", " 00", "00 ", "0x00", "00\n", "+1", "-1", "é0", "éé", "٠٠", "0\u{0}",
    ]

    @Test("odd lengths and non-hex characters give nil", arguments: HexTests.invalid)
    func rejects(_ text: String) {
        #expect(Hex.decode(text) == nil, "\(text.debugDescription)")
    }
}

// MARK: - Base64

@Suite("Base64")
struct Base64Tests {
    /// RFC 4648 §10 test vectors: (data, standard, base64url without padding).
    static let rfc4648: [(String, String, String)] = [
        ("f", "Zg==", "Zg"),
        ("fo", "Zm8=", "Zm8"),
        ("foo", "Zm9v", "Zm9v"),
        ("foob", "Zm9vYg==", "Zm9vYg"),
        ("fooba", "Zm9vYmE=", "Zm9vYmE"),
        ("foobar", "Zm9vYmFy", "Zm9vYmFy"),
    ]

    @Test("RFC 4648 §10 vectors, standard and URL-safe")
    func rfcVectors() {
        #expect(Base64.encode([UInt8]()) == "")
        #expect(Base64.encodeURL([UInt8]()) == "")
        for (text, standard, url) in Self.rfc4648 {
            let data = Array(text.utf8)
            #expect(Base64.encode(data) == standard, "\(text)")
            #expect(Base64.encodeURL(data) == url, "\(text)")
            #expect(Base64.decode(standard) == data, "\(text)")
            #expect(Base64.decodeURL(url) == data, "\(text) unpadded")
            #expect(Base64.decodeURL(standard) == data, "\(text) padded")
        }
    }

    @Test("the two alphabets differ in the last two characters")
    func alphabets() {
        let bytes: [UInt8] = [0xfb, 0xff, 0xbf]
        #expect(Base64.encode(bytes) == "+/+/")
        #expect(Base64.encodeURL(bytes) == "-_-_")
        #expect(Base64.decode("+/+/") == bytes)
        #expect(Base64.decodeURL("-_-_") == bytes)
        #expect(Base64.decode("-_-_") == nil)
        #expect(Base64.decodeURL("+/+/") == nil)
    }

    @Test("every length from 1 to 70 bytes round-trips in both alphabets")
    func roundTrips() {
        for length in 1...70 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 251) }
            let standard = Base64.encode(bytes)
            let url = Base64.encodeURL(bytes)
            #expect(standard.count == (length + 2) / 3 * 4, "length \(length)")
            #expect(!url.contains("=") && !url.contains("+") && !url.contains("/"), "length \(length)")
            #expect(Base64.decode(standard) == bytes, "length \(length)")
            #expect(Base64.decodeURL(url) == bytes, "length \(length)")
        }
    }

    @Test("standard decoding ignores white space such as PEM line breaks")
    func whitespace() {
        let foobar = Array("foobar".utf8)
        #expect(Base64.decode("Zm9v\nYmFy") == foobar)
        #expect(Base64.decode(" Zm9vYmFy \r\n") == foobar)
        #expect(Base64.decode("Zm9v\r\nYmE=\n") == Array("fooba".utf8))
    }

    static let badCharacters = ["Zm9v!mFy", "Zm9v-mFy", "Zm9v_mFy", "Zm9vYmF\u{0}", "Zm9vYmFé", "Zm9v.mFy"]

    @Test("standard decoding rejects characters outside the alphabet", arguments: Base64Tests.badCharacters)
    func badCharacter(_ text: String) {
        #expect(Base64.decode(text) == nil, "\(text.debugDescription)")
    }

    static let badLengths = ["Z", "Zg", "Zg=", "Zm9", "Zm9vY", "Zm9vYmF"]

    @Test("standard decoding rejects lengths that are not a multiple of four", arguments: Base64Tests.badLengths)
    func badLength(_ text: String) {
        #expect(Base64.decode(text) == nil, "\(text.debugDescription)")
    }

    static let badPadding = ["Zg=A", "Zg==Zg==", "Z===", "====", "=Zg=", "Zm9v===="]

    @Test("standard decoding rejects padding anywhere but the end, and too much of it", arguments: Base64Tests.badPadding)
    func badPaddingStandard(_ text: String) {
        #expect(Base64.decode(text) == nil, "\(text.debugDescription)")
    }

    static let badURL = ["Z", "Zm9vY", "Zm9v YmFy", "Zm9v\nYmFy", "Zm9v!", "Zm9vYmFé", "Zm9v+mFy", "Zm9v/mFy"]

    @Test("URL-safe decoding rejects bad characters and impossible lengths", arguments: Base64Tests.badURL)
    func badURLInput(_ text: String) {
        #expect(Base64.decodeURL(text) == nil, "\(text.debugDescription)")
    }

    static let badURLPadding = ["Zg=", "Z=g", "Zg=A", "Zm9v====", "Zm8==", "===="]

    @Test("URL-safe decoding accepts padding only when complete and at the end", arguments: Base64Tests.badURLPadding)
    func badPaddingURL(_ text: String) {
        #expect(Base64.decodeURL(text) == nil, "\(text.debugDescription)")
    }
}

// MARK: - ConstantTime

@Suite("ConstantTime.equals")
struct ConstantTimeTests {
    static let sample: [UInt8] = (0..<32).map { UInt8($0 &* 7 &+ 3) }

    @Test("equal sequences compare equal, whatever their collection types")
    func equal() {
        let empty: [UInt8] = []
        #expect(ConstantTime.equals(empty, empty))
        #expect(ConstantTime.equals(Self.sample, Self.sample))
        #expect(ConstantTime.equals(Self.sample, Array(Self.sample)))
        #expect(ConstantTime.equals(Self.sample, Self.sample[...]))
        #expect(ConstantTime.equals(Data(Self.sample), Self.sample))
        let slice = Self.sample[8..<16]
        #expect(ConstantTime.equals(slice, Array(Self.sample[8..<16])))
        // Raw bytes in memory.
        Self.sample.withUnsafeBytes { sample in
            Array(Self.sample).withUnsafeBytes { copy in #expect(ConstantTime.equals(sample, copy)) }
            Array(Self.sample.dropLast()).withUnsafeBytes { shorter in #expect(!ConstantTime.equals(sample, shorter)) }
            var changed = Self.sample
            changed[31] ^= 0x80
            changed.withUnsafeBytes { changed in #expect(!ConstantTime.equals(sample, changed)) }
        }
    }

    @Test("a difference in any bit of any byte is found")
    func everyBit() {
        for bit in 0..<(Self.sample.count * 8) {
            var other = Self.sample
            other[bit / 8] ^= UInt8(1) << UInt8(bit % 8)
            #expect(!ConstantTime.equals(Self.sample, other), "bit \(bit)")
            #expect(!ConstantTime.equals(other, Self.sample), "bit \(bit), swapped")
        }
    }

    @Test("different lengths are unequal, even with a common prefix")
    func lengths() {
        let empty: [UInt8] = []
        #expect(!ConstantTime.equals(Self.sample, empty))
        #expect(!ConstantTime.equals(empty, Self.sample))
        #expect(!ConstantTime.equals(Self.sample, Self.sample.dropLast()))
        #expect(!ConstantTime.equals(Self.sample.dropLast(), Self.sample))
        #expect(!ConstantTime.equals(Self.sample, Self.sample + [0]))
        #expect(!ConstantTime.equals([UInt8](repeating: 0, count: 4), [UInt8](repeating: 0, count: 5)))
    }
}
