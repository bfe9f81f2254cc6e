import SignetCore
import Testing

/// `sha256sum` lines, GNU and BSD (`--tag`) style. Expected lines were checked against
/// GNU coreutils 9.1 `sha256sum` and `sha256sum --tag`.
@Suite("ChecksumLine")
struct ChecksumLineTests {
    /// SHA-256("abc").
    static let hex = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    static let digest: [UInt8] = [
        0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40, 0xde, 0x5d, 0xae, 0x22, 0x23,
        0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad,
    ]
    /// SHA-512("abc").
    static let hex512 =
        "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
        + "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"

    private func parse(_ line: String) -> ChecksumLine? { ChecksumLine.parse(line[...]) }

    // MARK: Formatting

    @Test("a plain name is written as <hex>, two spaces, <name>")
    func formatPlain() {
        #expect(ChecksumLine.format(hex: Self.hex, path: "file.txt") == Self.hex + "  file.txt")
        #expect(ChecksumLine.format(hex: Self.hex, path: "with space.txt") == Self.hex + "  with space.txt")
        #expect(ChecksumLine.displayName("file.txt") == "file.txt")
    }

    @Test("backslash, newline and carriage return are escaped and the line starts with a backslash")
    func formatEscaped() {
        // sha256sum prints: \<hex>  a\\b   \<hex>  n\nl   \<hex>  c\rr
        #expect(ChecksumLine.format(hex: Self.hex, path: "a\\b") == "\\" + Self.hex + "  a\\\\b")
        #expect(ChecksumLine.format(hex: Self.hex, path: "n\nl") == "\\" + Self.hex + "  n\\nl")
        #expect(ChecksumLine.format(hex: Self.hex, path: "c\rr") == "\\" + Self.hex + "  c\\rr")
        #expect(ChecksumLine.format(hex: Self.hex, path: "\\\n\r") == "\\" + Self.hex + "  \\\\\\n\\r")
        #expect(ChecksumLine.displayName("a\\b") == "\\a\\\\b")
        #expect(ChecksumLine.displayName("n\nl") == "\\n\\nl")
    }

    @Test("a name holding CR LF is escaped too (Swift sees \"\\r\\n\" as one Character)")
    func formatEscapesCRLF() {
        let line = ChecksumLine.format(hex: Self.hex, path: "a\r\nb")
        #expect(line == "\\" + Self.hex + "  a\\r\\nb")
        #expect(!line.unicodeScalars.contains("\n") && !line.unicodeScalars.contains("\r"))
        #expect(ChecksumLine.displayName("a\r\nb") == "\\a\\r\\nb")
    }

    // MARK: Round trips

    static let roundTripNames = [
        "plain.txt", "with space.txt", " leading space", "trailing space ", "a\\b", "new\nline", "cr\rname",
        "\\\n\r", "\\", "\n", "*starts-with-star", "dir/sub/file", "ünïcødé – 名前.txt", "ends with backslash\\",
        "(parens) = x", "SHA256 (looks) = tagged",
    ]

    @Test("parse(format(name)) gives the name back", arguments: ChecksumLineTests.roundTripNames)
    func roundTrip(_ name: String) throws {
        let line = ChecksumLine.format(hex: Self.hex, path: name)
        #expect(!line.unicodeScalars.contains("\n"), "a formatted line must be one line")
        let parsed = try #require(parse(line), "could not parse \(line.debugDescription)")
        #expect(parsed == ChecksumLine(digest: Self.digest, path: name))
        #expect(parsed.taggedAlgorithm == nil)
    }

    @Test("a name starting with a combining mark survives the round trip")
    func roundTripCombiningMark() throws {
        // " " followed by U+0301 is one Character; parsing must not depend on grapheme clusters.
        let name = "\u{301}accent.txt"
        let parsed = try #require(parse(ChecksumLine.format(hex: Self.hex, path: name)))
        #expect(parsed.path == name)
        let tagged = try #require(parse("SHA256 (\(name)) = \(Self.hex)"))
        #expect(tagged.path == name)
    }

    // MARK: GNU lines

    @Test("GNU lines: text and binary (*) markers, literal backslashes when not escaped, upper-case hex")
    func gnuLines() {
        #expect(parse(Self.hex + "  file.txt") == ChecksumLine(digest: Self.digest, path: "file.txt"))
        #expect(parse(Self.hex + " *file.bin") == ChecksumLine(digest: Self.digest, path: "file.bin"))
        #expect(parse("\\" + Self.hex + " *a\\\\b") == ChecksumLine(digest: Self.digest, path: "a\\b"))
        // Without the leading backslash the name is taken as it is.
        #expect(parse(Self.hex + "  a\\b") == ChecksumLine(digest: Self.digest, path: "a\\b"))
        #expect(parse(Self.hex.uppercased() + "  file.txt") == ChecksumLine(digest: Self.digest, path: "file.txt"))
        // A third space belongs to the name.
        #expect(parse(Self.hex + "   spaced") == ChecksumLine(digest: Self.digest, path: " spaced"))
        // Other digest lengths parse; the caller infers the algorithm from the length.
        #expect(parse(Self.hex512 + "  f")?.digest.count == 64)
    }

    @Test("a CR before the line end (a CRLF file) is not part of the name")
    func crlf() {
        #expect(parse(Self.hex + "  file.txt\r") == ChecksumLine(digest: Self.digest, path: "file.txt"))
        #expect(parse("\\" + Self.hex + "  a\\\\b\r") == ChecksumLine(digest: Self.digest, path: "a\\b"))
        #expect(
            parse("SHA256 (file.txt) = " + Self.hex + "\r")
                == ChecksumLine(digest: Self.digest, path: "file.txt", taggedAlgorithm: .sha256))
    }

    @Test("a line cut out of a larger text (a Substring not starting at 0) parses")
    func substringSlices() {
        let text = "first line\n" + Self.hex + "  b.txt\nSHA512 (c.txt) = " + Self.hex512 + "\n"
        let lines = text.split(separator: "\n")
        #expect(lines.count == 3)
        #expect(ChecksumLine.parse(lines[1]) == ChecksumLine(digest: Self.digest, path: "b.txt"))
        #expect(ChecksumLine.parse(lines[2])?.path == "c.txt")
        #expect(ChecksumLine.parse(lines[2])?.taggedAlgorithm == .sha512)
    }

    // MARK: BSD (--tag) lines

    @Test("BSD lines name their algorithm")
    func bsdLines() throws {
        let cases: [(String, DigestAlgorithm)] = [
            ("SHA256", .sha256), ("SHA384", .sha384), ("SHA512", .sha512), ("MD5", .md5), ("SHA1", .sha1),
        ]
        for (tag, algorithm) in cases {
            let digest = [UInt8](repeating: 0xab, count: algorithm.byteCount)
            let hex = String(repeating: "ab", count: algorithm.byteCount)
            let parsed = parse("\(tag) (file name.txt) = \(hex)")
            #expect(parsed == ChecksumLine(digest: digest, path: "file name.txt", taggedAlgorithm: algorithm), "\(tag)")
        }
        // Parentheses and " = " inside the name: the last ") = " ends it.
        #expect(parse("SHA256 (my (old) file) = " + Self.hex)?.path == "my (old) file")
        #expect(parse("SHA256 (a) = b) = " + Self.hex)?.path == "a) = b")
        #expect(parse("SHA256 (x) = " + Self.hex.uppercased())?.digest == Self.digest)
    }

    @Test("a BSD line for an escaped name (sha256sum --tag 'a\\b') is read")
    func bsdEscaped() {
        // sha256sum --tag prints: \SHA256 (a\\b) = <hex>
        #expect(
            parse("\\SHA256 (a\\\\b) = " + Self.hex)
                == ChecksumLine(digest: Self.digest, path: "a\\b", taggedAlgorithm: .sha256))
        #expect(
            parse("\\SHA256 (n\\nl) = " + Self.hex)
                == ChecksumLine(digest: Self.digest, path: "n\nl", taggedAlgorithm: .sha256))
    }

    // MARK: Malformed lines

    static let malformed: [String] = [
        "",
        "   ",
        "no-separator-here",
        hex,
        hex + "file.txt",
        hex + "\tfile.txt",
        hex + " file.txt",  // one space only
        hex + "  ",  // empty name
        hex + " *",  // empty name, binary marker
        "xyz" + String(hex.dropFirst(3)) + "  file.txt",  // not hex
        String(hex.dropLast()) + "  file.txt",  // odd number of digits
        "  file.txt",  // no digest at all
        "\\" + hex + "  a\\tb",  // unknown escape
        "\\" + hex + "  ends\\",  // dangling backslash
        "SHA256 (file.txt) = " + String(hex.dropLast(2)),  // 31 bytes
        "SHA256 (file.txt) = " + hex512,  // SHA-512 length under a SHA256 tag
        "SHA512 (file.txt) = " + hex,
        "MD5 (file.txt) = " + hex,
        "SHA256 () = " + hex,  // empty name
        "SHA256 (file.txt) = " + String(hex.dropLast()) + "g",
        "SHA256 (file.txt) = ",
        "SHA256 (file.txt) " + hex,  // no " = "
    ]

    @Test("malformed lines give nil", arguments: ChecksumLineTests.malformed)
    func malformedLines(_ line: String) {
        #expect(parse(line) == nil, "\(line.debugDescription) should not parse")
    }
}
