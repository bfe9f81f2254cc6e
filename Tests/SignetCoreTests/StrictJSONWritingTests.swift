import SignetCore
import SignetTestSupport
import Testing

/// StrictJSON writing (compact and pretty, string escaping), random round trips, a
/// manifest-sized document, and PrintableText.
extension StrictJSONTests {
    // MARK: Writing

    @Test("values are written compact or pretty, and parse back equal")
    func writing() throws {
        let value = JSONValue.object([
            JSONMember("b", .array([.number("1"), .string("x\ny\u{1}\"\\/é")])),
            JSONMember("a", .object([])),
            JSONMember("e", .array([])),
            JSONMember("n", .object([JSONMember("t", .bool(true)), JSONMember("z", .null)])),
        ])
        let compact = #"{"b":[1,"x\ny\u0001\"\\/é"],"a":{},"e":[],"n":{"t":true,"z":null}}"#
        #expect(String(decoding: value.bytes(pretty: false), as: UTF8.self) == compact)
        let pretty = #"""
            {
              "b": [
                1,
                "x\ny\u0001\"\\/é"
              ],
              "a": {},
              "e": [],
              "n": {
                "t": true,
                "z": null
              }
            }
            """# + "\n"
        #expect(String(decoding: value.bytes(pretty: true), as: UTF8.self) == pretty)
        #expect(try StrictJSON.parse(value.bytes(pretty: false)) == value)
        #expect(try StrictJSON.parse(value.bytes(pretty: true)) == value)
        #expect(JSONValue.array([]).bytes(pretty: true) == Array("[]\n".utf8))
    }

    @Test("strings are written with only quote, backslash and control characters escaped; a line feed as \\n on request")
    func writingStrings() {
        let text = "a\"b\\c\n\u{0}\u{1F}\t/é😀"
        var minimal: [UInt8] = []
        StrictJSON.appendString(text, to: &minimal)
        #expect(String(decoding: minimal, as: UTF8.self) == #""a\"b\\c\u000a\u0000\u001f\u0009/é😀""#)
        var readable: [UInt8] = []
        StrictJSON.appendString(text, to: &readable, lineFeedAsN: true)
        #expect(String(decoding: readable, as: UTF8.self) == #""a\"b\\c\n\u0000\u001f\u0009/é😀""#)
        var del: [UInt8] = [0x5B]
        StrictJSON.appendString("\u{7F}", to: &del)
        #expect(del == [0x5B, 0x22, 0x7F, 0x22], "appends, and writes DEL as itself")
    }

    @Test("random values round-trip through both layouts; mutated text never crashes the parser")
    func randomRoundTrip() throws {
        var random = SplitMix64(seed: 0x4A53_4F4E_0000_0001)
        var accepted = 0
        for iteration in 0..<300 {
            let value = Self.randomValue(depth: 0, using: &random)
            for pretty in [false, true] {
                let bytes = value.bytes(pretty: pretty)
                #expect(try StrictJSON.parse(bytes) == value, "iteration \(iteration)")
                for _ in 0..<4 {
                    let mutated = Self.mutate(bytes, using: &random)
                    guard let reparsed = try? StrictJSON.parse(mutated) else { continue }
                    accepted += 1
                    #expect(try StrictJSON.parse(reparsed.bytes(pretty: false)) == reparsed, "iteration \(iteration)")
                }
            }
        }
        #expect(accepted < 300 * 2 * 4, "most mutations are refused")
    }

    @Test("a manifest-sized document (10,000 entries) parses")
    func largeDocument() throws {
        let entries = (0..<10_000).map { #"{"path":"dir/file-\#($0).txt","sha256":"\#(String(repeating: "ab", count: 32))","size":\#($0)}"# }
        let text = #"{"files":["# + entries.joined(separator: ",") + "]}"
        guard case .object(let members) = try parse(text), case .array(let files)? = members.first?.value else {
            Issue.record("not the expected shape")
            return
        }
        #expect(files.count == 10_000)
        #expect(files.last == JSONValue.object([
            JSONMember("path", .string("dir/file-9999.txt")), JSONMember("sha256", .string(String(repeating: "ab", count: 32))),
            JSONMember("size", .number("9999")),
        ]))
        let wide = "{" + (0..<10_000).map { "\"m\($0)\":\($0)" }.joined(separator: ",") + "}"
        guard case .object(let wideMembers) = try parse(wide) else {
            Issue.record("not an object")
            return
        }
        #expect(wideMembers.count == 10_000)
    }

    // MARK: PrintableText

    @Test("PrintableText escapes control characters and cuts long text")
    func printableText() {
        #expect(PrintableText.escaped("a\u{1}b\u{7F}c\u{85}é\n") == "a\\u{1}b\\u{7f}c\\u{85}é\\u{a}")
        let long = String(repeating: "x", count: 301)
        #expect(PrintableText.escaped(long) == String(repeating: "x", count: 300))
        #expect(PrintableText.escaped(long, limit: 200, marksCut: true) == String(repeating: "x", count: 200) + "…")
        #expect(PrintableText.escaped(String(repeating: "x", count: 200), limit: 200, marksCut: true) == String(repeating: "x", count: 200))
    }

    // MARK: Random values

    /// String pieces for random values: escapes, multi-byte and combining characters, but no
    /// digit or ':' (names are made unique by a "<n>:" prefix).
    private static let units = ["a", "Z", " ", "é", "e\u{301}", "😀", "中", "\n", "\t", "\u{1}", "\u{1F}", "\"", "\\", "/", "\u{7F}", "\u{85}"]

    static func randomString(using random: inout SplitMix64) -> String {
        random.string(from: units, fewerThan: 8)
    }

    private static let numberTexts = ["0", "-1", "1e3", "2.50", "-0.5E-7", "12345678901234567890123"]
    private static let mutationBytes: [UInt8] = [0x22, 0x5C, 0x7B, 0x5B, 0x2C, 0x3A, 0x00, 0xFF]

    static func randomValue(depth: Int, using random: inout SplitMix64) -> JSONValue {
        let kind = depth >= 4 ? 2 + random.below(4) : random.below(6)
        switch kind {
        case 0:
            let count = random.below(5)
            var members: [JSONMember] = []
            for position in 0..<count {
                let name = "\(position):" + randomString(using: &random)
                let value = randomValue(depth: depth + 1, using: &random)
                members.append(JSONMember(name, value))
            }
            return .object(members)
        case 1:
            let count = random.below(5)
            var elements: [JSONValue] = []
            for _ in 0..<count { elements.append(randomValue(depth: depth + 1, using: &random)) }
            return .array(elements)
        case 2:
            return .string(randomString(using: &random))
        case 3:
            if random.chance(30) { return .number("1" + random.digits(among: [0, 4, 17])) }
            return .number(random.pick(numberTexts))
        case 4:
            return .bool(random.chance(50))
        default:
            return .null
        }
    }

    static func mutate(_ input: [UInt8], using random: inout SplitMix64) -> [UInt8] {
        var bytes = input
        switch random.below(4) {
        case 0:
            let length = random.below(max(1, bytes.count))
            bytes = Array(bytes.prefix(length))
        case 1:
            if !bytes.isEmpty {
                let position = random.below(bytes.count)
                bytes[position] ^= UInt8(truncatingIfNeeded: random.next() | 1)
            }
        case 2:
            let position = random.below(bytes.count + 1)
            bytes.insert(UInt8(truncatingIfNeeded: random.next()), at: position)
        default:
            if !bytes.isEmpty {
                let position = random.below(bytes.count)
                bytes[position] = random.pick(mutationBytes)
            }
        }
        return bytes
    }

    @Test("JSONValue escapes DEL, C1 and bidi controls as \\u: the same value, safe on a terminal")
    func displayStringsAreTerminalSafe() throws {
        let value = JSONValue.object([JSONMember("la\u{202e}bel", .string("a\u{7f}b\u{9b}2J\u{1b}c\nd\"é"))])
        let text = String(decoding: value.bytes(pretty: false), as: UTF8.self)
        #expect(text == #"{"la\u202ebel":"a\u007fb\u009b2J\u001bc\nd\"é"}"#, "\(text)")
        #expect(!text.unicodeScalars.contains { PrintableText.mustEscape($0) })
    }
}
