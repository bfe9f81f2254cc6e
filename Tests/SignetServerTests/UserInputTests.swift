import SignetServer
import SignetTestSupport
import Testing

/// `UserInput`: e-mail addresses people cannot tell apart never become two accounts, and display
/// names cannot reorder the text around them or carry kilobytes behind a short count.
/// Characters are written as escapes so that no editor normalises them away.
@Suite struct UserInputTests {
    /// The detail of the 422 on `field` that `body` throws (an issue is recorded if it throws
    /// anything else or nothing).
    static func refusal(_ field: String, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> String) throws -> String {
        let error = try thrown(ServerError.self, sourceLocation: sourceLocation, body)
        guard case .unprocessable(let refused, let detail) = error else {
            Issue.record("not a 422: \(error)", sourceLocation: sourceLocation)
            return ""
        }
        #expect(refused == field, sourceLocation: sourceLocation)
        return detail
    }

    static func email(_ text: String) throws -> String { try UserInput.normalizedEmail(text) }

    static func name(_ text: String) throws -> String { try UserInput.displayName(text, maximum: 100, maximumBytes: 400) }

    // MARK: E-mail addresses

    struct Refused: Sendable, CustomStringConvertible {
        var email: String
        var mentions: [String]
        var description: String { mentions.joined(separator: ", ") }
    }

    static let refusedEmails: [Refused] = [
        Refused(email: "jo\u{200B}se@example.com", mentions: ["U+200B", "invisible"]),  // zero-width space
        Refused(email: "jo\u{AD}se@example.com", mentions: ["U+00AD", "invisible"]),  // soft hyphen
        Refused(email: "jo\u{200D}se@example.com", mentions: ["U+200D"]),  // zero-width joiner
        Refused(email: "jo\u{200C}se@example.com", mentions: ["U+200C"]),  // zero-width non-joiner
        Refused(email: "jo\u{2060}se@example.com", mentions: ["U+2060"]),  // word joiner
        Refused(email: "\u{FEFF}jose@example.com", mentions: ["U+FEFF"]),  // byte order mark
        Refused(email: "jose\u{FE0F}@example.com", mentions: ["U+FE0F"]),  // variation selector
        Refused(email: "jose@exam\u{202E}elp.com", mentions: ["U+202E", "bidirectional"]),
        Refused(email: "jo\u{7}se@example.com", mentions: ["U+0007", "control"]),
        Refused(email: "jo se@example.com", mentions: ["U+0020", "space"]),
        Refused(email: "jo\u{A0}se@example.com", mentions: ["U+00A0", "space"]),
        Refused(email: "\u{FF4A}\u{FF4F}\u{FF53}\u{E9}@example.com", mentions: ["U+FF4A", "NFKC"]),  // full-width letters
        Refused(email: "\u{FB01}le@example.com", mentions: ["U+FB01", "NFKC"]),  // the ligature fi
        Refused(email: "jose\u{B2}@example.com", mentions: ["U+00B2", "NFKC"]),  // superscript two
        Refused(email: "jose@example\u{FF0E}com", mentions: ["U+FF0E", "NFKC"]),  // full-width full stop
        Refused(email: "p\u{430}ypal@example.com", mentions: ["local part", "mixes scripts", "U+0430", "Cyrillic", "Latin"]),
        Refused(email: "P\u{410}YPAL@example.com", mentions: ["local part", "U+0430", "Cyrillic"]),  // upper case, lower-cased first
        Refused(email: "jose@ex\u{430}mple.com", mentions: ["domain label", "mixes scripts", "U+0430", "Cyrillic"]),
        Refused(email: "jose@example.c\u{43E}m", mentions: ["domain label", "U+043E"]),
        Refused(email: "\u{3B1}lpha@example.com", mentions: ["mixes scripts", "U+006C (Latin) after Greek"]),
        Refused(email: "tanaka\u{592A}\u{90CE}@example.jp", mentions: ["mixes scripts", "Han"]),  // Latin with Han
        Refused(email: "\u{430}\u{441}\u{435}@example.com", mentions: ["local part", "look like Latin", "U+0430"]),  // "асе"
        Refused(email: "\u{430}\u{440}\u{440}\u{4CF}\u{435}@example.com", mentions: ["look like Latin"]),  // "аррӏе"
        Refused(email: "jose@\u{430}\u{441}\u{435}.com", mentions: ["domain label", "look like Latin"]),
        Refused(email: "\u{3BF}\u{3BD}\u{3B1}@example.com", mentions: ["look like Latin", "U+03BF"]),  // Greek "ονα"
        Refused(email: "jo\u{2010}se@example.com", mentions: ["U+2010", "not a letter"]),  // a hyphen that is not "-"
        Refused(email: "jose@\u{301}example.com", mentions: ["combining mark", "U+0301"]),
        Refused(email: "jose@\u{E000}.com", mentions: ["U+E000"]),  // private use
        Refused(email: "jose@example..com", mentions: ["not an e-mail address"]),
        Refused(email: "jose@example", mentions: ["not an e-mail address"]),
        Refused(email: "jose@@example.com", mentions: ["not an e-mail address"]),
        Refused(email: "   ", mentions: ["empty"]),
        Refused(email: String(repeating: "a", count: 243) + "@example.com", mentions: ["254 bytes"]),
        Refused(email: String(repeating: "\u{E9}", count: 122) + "@example.com", mentions: ["254 bytes"]),
        Refused(email: "a" + String(repeating: "\u{301}", count: 30_000) + "@example.com", mentions: ["254 bytes"]),
    ]

    @Test("look-alike and invisible characters in an address are refused, naming the code point", arguments: refusedEmails)
    func refusedEmail(_ sample: Refused) throws {
        let detail = try Self.refusal("email") { try Self.email(sample.email) }
        for fragment in sample.mentions {
            #expect(detail.contains(fragment), "\"\(detail)\" does not mention \"\(fragment)\"")
        }
    }

    struct Accepted: Sendable, CustomStringConvertible {
        var typed: String
        var stored: String
        /// `typed` is stored as `stored`, or unchanged.
        init(_ typed: String, _ stored: String? = nil) {
            (self.typed, self.stored) = (typed, stored ?? typed)
        }
        var description: String { String(stored.prefix(40)) }
    }

    static let acceptedEmails: [Accepted] = [
        Accepted("Ada.Lovelace+signet@Example.COM", "ada.lovelace+signet@example.com"),
        Accepted("  jose@example.com\n", "jose@example.com"),
        Accepted("jos\u{E9}@ex\u{E4}mple.com"),
        Accepted("JOS\u{C9}@EXAMPLE.COM", "jos\u{E9}@example.com"),
        Accepted("stra\u{DF}e@example.de"),
        Accepted("\u{3B1}\u{3BB}\u{3AD}\u{3BE}\u{3B1}\u{3BD}\u{3B4}\u{3C1}\u{3BF}\u{3C2}@example.gr"),  // αλέξανδρος: all Greek
        Accepted("\u{418}\u{432}\u{430}\u{43D}@example.com", "\u{438}\u{432}\u{430}\u{43D}@example.com"),  // Иван: not every letter looks Latin
        Accepted("\u{438}\u{432}\u{430}\u{43D}@\u{43F}\u{440}\u{438}\u{43C}\u{435}\u{440}.\u{440}\u{444}"),  // иван@пример.рф
        Accepted("\u{440}\u{443}\u{441}@\u{43F}\u{440}\u{438}\u{43C}\u{435}\u{440}.\u{440}\u{444}"),  // рус@пример.рф: a Cyrillic TLD
        Accepted("jose@\u{43F}\u{440}\u{438}\u{43C}\u{435}\u{440}.\u{440}\u{443}\u{441}"),  // the TLD .рус
        Accepted("\u{5C71}\u{7530}\u{305F}\u{308D}\u{3046}\u{30AB}\u{30BF}@example.jp"),  // Han, Hiragana, Katakana
        Accepted("\u{D55C}\u{AD6D}\u{6F22}@example.kr"),  // Hangul and Han
        Accepted("\u{4E2D}\u{6587}\u{3105}@example.cn"),  // Han and Bopomofo
        Accepted("\u{5C71}\u{7530}123@example.jp"),  // digits go with any script
        Accepted(String(repeating: "a", count: 242) + "@example.com"),  // 254 bytes
    ]

    @Test("addresses in one script each part are accepted and stored in one form", arguments: acceptedEmails)
    func acceptedEmail(_ sample: Accepted) throws {
        let stored = try Self.email(sample.typed)
        #expect(Array(stored.utf8) == Array(sample.stored.utf8), "\(sample.typed)")
    }

    @Test func decomposedAndComposedSpellingsAreOneAddress() throws {
        let decomposed = try Self.email("jose\u{301}@example.com")
        let composed = try Self.email("jos\u{E9}@example.com")
        #expect(Array(decomposed.utf8) == Array(composed.utf8))
        #expect(Array(composed.utf8) == Array("jos\u{E9}@example.com".utf8), "stored in NFC")
        #expect(Array(try Self.email("JOSE\u{301}@EXAMPLE.COM").utf8) == Array(composed.utf8))
    }

    // MARK: Display names

    @Test func displayNamesWithBidiControlsAreRefused() throws {
        for control in ["\u{202E}", "\u{202A}", "\u{2066}", "\u{2069}", "\u{200F}", "\u{200E}", "\u{61C}"] {
            let detail = try Self.refusal("displayName") { try Self.name("invoice\(control)fdp.exe") }
            #expect(detail.contains("bidirectional"), "\(detail)")
        }
        let detail = try Self.refusal("displayName") { try Self.name("evil\u{202E}gnp.exe") }
        #expect(detail.contains("U+202E"))
    }

    @Test func aShortNameCarryingKilobytesIsRefusedByItsBytes() throws {
        let heavy = String(repeating: "a" + String(repeating: "\u{301}", count: 300), count: 100)
        #expect(heavy.count == 100, "Swift counts 100 characters")
        #expect(heavy.utf8.count > 60_000)
        #expect(try Self.refusal("displayName") { try Self.name(heavy) }.contains("400 bytes"))
        let justOver = String(repeating: "\u{E9}", count: 201)  // 100 characters would pass; 402 bytes do not
        #expect(try Self.refusal("displayName") { try UserInput.displayName(justOver, maximum: 300, maximumBytes: 400) }.contains("400 bytes"))
    }

    @Test func invisibleCharactersInNamesAreRefused() throws {
        for (text, code) in [("Ada\u{200B}Lovelace", "U+200B"), ("Ada\u{AD}", "U+00AD"), ("\u{3164}", "U+3164"), ("Ada\u{2060}", "U+2060")] {
            #expect(try Self.refusal("displayName") { try Self.name(text) }.contains(code))
        }
        #expect(try Self.refusal("displayName") { try Self.name("Ada\nLovelace") }.contains("control"))
        #expect(try Self.refusal("displayName") { try Self.name("Ada\u{2028}Lovelace") }.contains("line break"))
        #expect(try Self.refusal("displayName") { try Self.name(" \t ") }.contains("empty"))
        #expect(try Self.refusal("displayName") { try Self.name(String(repeating: "a", count: 101)) }.contains("100 characters"))
        #expect(try Self.refusal("displayName") { try Self.name("x" + String(repeating: "\u{301}", count: 31)) }.contains("combining marks"))
    }

    @Test func namesWithEmojiSequencesAndJoinersAreAccepted() throws {
        let accepted = [
            "\u{1F469}\u{200D}\u{1F4BB}",  // 👩‍💻
            "Ada \u{2764}\u{FE0F}",  // ❤️
            "\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}\u{200D}\u{1F466}",  // a family
            "\u{915}\u{94D}\u{200D}\u{937}",  // Devanagari with a ZWJ
            "\u{645}\u{6CC}\u{200C}\u{62E}\u{648}\u{627}\u{647}\u{645}",  // Persian with a ZWNJ
            "Ada Lovelace",
            "x" + String(repeating: "\u{301}", count: 30),
        ]
        for text in accepted {
            #expect(Array(try Self.name(text).utf8) == Array(text.utf8), "\(text)")
        }
        #expect(Array(try Self.name("  Jose\u{301} ").utf8) == Array("Jos\u{E9}".utf8), "trimmed, in NFC")
    }

    // MARK: Random input

    /// Pieces of random addresses: ASCII, letters of several scripts, combining marks, and the
    /// characters the rules are about.
    static let pieces = [
        "a", "b", "x", "Z", "0", "7", "-", "_", "+", ".", ".", "@", "@", " ",
        "\u{E9}", "e\u{301}", "\u{301}", "\u{DF}", "\u{130}", "\u{3A3}", "\u{3C2}", "\u{212A}", "\u{2126}",
        "\u{430}", "\u{438}", "\u{3B1}", "\u{3BB}", "\u{5C71}", "\u{305F}", "\u{30AB}", "\u{D55C}", "\u{3105}",
        "\u{200B}", "\u{AD}", "\u{200D}", "\u{FE0F}", "\u{202E}", "\u{FF41}", "\u{FB01}", "\u{2010}", "\u{1F469}",
        "\u{0}", "\u{7F}", "\u{E000}", "\u{FFFE}", "\u{10FFFF}", "\u{1E9E}", "\u{1F1}", "\u{345}", "\u{344}",
    ]

    /// Letters of one script each, so that some random addresses are single-script.
    static let alphabets = [
        ["a", "j", "o", "s", "e", "\u{E9}", "e\u{301}", "Z"],
        ["\u{430}", "\u{438}", "\u{432}", "\u{43D}", "\u{418}"],
        ["\u{3B1}", "\u{3BB}", "\u{3AD}", "\u{3A3}", "\u{3C2}"],
        ["\u{5C71}", "\u{305F}", "\u{30AB}", "\u{7530}"],
    ]

    static let topLevelDomains = ["com", "de", "\u{440}\u{444}", "jp"]

    static func randomText(_ alphabet: [String], using random: inout SplitMix64) -> String {
        var text = ""
        let count = 1 + random.below(12)
        for _ in 0..<count {
            if random.chance(5) {
                text.unicodeScalars.append(Unicode.Scalar(UInt32(random.below(0x3_0000))) ?? "?")
            } else if random.chance(80) {
                text += random.pick(alphabet)
            } else {
                text += random.pick(pieces)
            }
        }
        return text
    }

    @Test("random text never crashes the rules, and whatever they accept they accept unchanged")
    func randomTextIsAFixedPoint() {
        var random = SplitMix64(seed: 0x5573_6572_496E_7075)
        var acceptedEmails = 0
        var acceptedNames = 0
        for iteration in 0..<3000 {
            let alphabet = random.pick(Self.alphabets)
            var text = Self.randomText(alphabet, using: &random)
            if random.chance(80) {
                let domain = Self.randomText(alphabet, using: &random)
                text += "@" + domain + "." + random.pick(Self.topLevelDomains)
            }
            if let email = try? UserInput.normalizedEmail(text) {
                acceptedEmails += 1
                let again = try? UserInput.normalizedEmail(email)
                if again.map({ Array($0.utf8) }) != Array(email.utf8) {
                    Issue.record("iteration \(iteration): \(text.unicodeScalars.map { $0.value }) normalises to an address that normalises again to \(String(describing: again))")
                }
            }
            if let name = try? UserInput.displayName(text, maximum: 100, maximumBytes: 400) {
                acceptedNames += 1
                let again = try? UserInput.displayName(name, maximum: 100, maximumBytes: 400)
                if again.map({ Array($0.utf8) }) != Array(name.utf8) {
                    Issue.record("iteration \(iteration): the display name \(text.unicodeScalars.map { $0.value }) is not a fixed point")
                }
            }
        }
        #expect(acceptedEmails >= 100, "the random addresses reach the accepting side (\(acceptedEmails) accepted)")
        #expect(acceptedNames >= 500, "the random names reach the accepting side (\(acceptedNames) accepted)")
    }
}
