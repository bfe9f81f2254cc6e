import Foundation
import SignetCore
import Testing
@testable import SignetBundle

@Suite struct JSONTextParserTests {
    // MARK: Helpers

    private func value(_ text: String) throws -> CanonicalJSON {
        try CanonicalJSON.parse(Array(text.utf8), source: "t.json")
    }

    /// Requires `CanonicalJSON.parse` to refuse `bytes` as malformed JSON and returns the detail.
    private func refusal(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let error = try BundleTest.thrown(sourceLocation: sourceLocation) { try CanonicalJSON.parse(bytes, source: "t.json") }
        guard case .malformed(let source, let detail) = error else {
            Issue.record("not .malformed: \(error)", sourceLocation: sourceLocation)
            return ""
        }
        #expect(source == "t.json", sourceLocation: sourceLocation)
        #expect(detail.hasPrefix("not valid JSON: "), "\(detail)", sourceLocation: sourceLocation)
        #expect(error.category == .malformedInput, sourceLocation: sourceLocation)
        return detail
    }

    /// The parser's own error for `bytes`, or nil (recorded as an issue) if it parses.
    private func directError(_ bytes: [UInt8], maximumDepth: Int = 16, sourceLocation: SourceLocation = #_sourceLocation) -> JSONSyntaxError? {
        do {
            let parsed = try CanonicalJSON.parse(bytes, maximumDepth: maximumDepth)
            Issue.record("parsed as \(parsed)", sourceLocation: sourceLocation)
            return nil
        } catch {
            return error
        }
    }

    private func nested(_ depth: Int) -> String { String(repeating: "[", count: depth) + String(repeating: "]", count: depth) }

    // MARK: Accepted

    @Test("every JSON whitespace byte between and around tokens")
    func whitespace() throws {
        let ws = " \t\n\r"
        let text = "\(ws){\(ws)\"a\"\(ws):\(ws)[\(ws)1\(ws),\(ws)true\(ws),\(ws){\(ws)}\(ws)]\(ws),\(ws)\"b\"\(ws):\(ws)null\(ws)}\(ws)"
        #expect(try value(text) == .object(["a": .array([.integer(1), .bool(true), .object([:])]), "b": .null]))
        #expect(try value(text).bytes == Array(#"{"a":[1,true,{}],"b":null}"#.utf8))
    }

    @Test("every escape, upper and lower case hex, a surrogate pair and \\u0000")
    func escapes() throws {
        #expect(try value(#""\"\\\/\b\f\n\r\t\u00e9\u00E9\ud83d\ude00\uD83D\uDE00""#) == .string("\"\\/\u{8}\u{C}\n\r\téé😀😀"))
        #expect(try value(#""\u0000\u001f\u007f""#) == .string("\u{0}\u{1F}\u{7F}"))
        #expect(try value(#"{"\u0061\/":"x"}"#) == .object(["a/": .string("x")]))
    }

    @Test("raw multi-byte UTF-8 and DEL in strings and member names")
    func rawUTF8() throws {
        #expect(try value("{\"é€😀\":\"ü中🎉\u{7F}\"}") == .object(["é€😀": .string("ü中🎉\u{7F}")]))
    }

    @Test("literals, empty and nested containers")
    func structure() throws {
        #expect(try value("true") == .bool(true))
        #expect(try value("false") == .bool(false))
        #expect(try value("null") == .null)
        #expect(try value("{}") == .object([:]))
        #expect(try value("[]") == .array([]))
        #expect(try value(#""""#) == .string(""))
        #expect(try value(#"[[],{},[[{"a":[{}]}]],"s",-1]"#)
            == .array([.array([]), .object([:]), .array([.array([.object(["a": .array([.object([:])])])])]), .string("s"), .integer(-1)]))
    }

    @Test("integers, including exponents and fractions that come out whole")
    func integers() throws {
        let cases: [(String, Int64)] = [
            ("0", 0), ("-0", 0), ("7", 7), ("-5", -5), (String(Int64.max), .max), (String(Int64.min), .min),
            ("1e3", 1000), ("1E+2", 100), ("1e-0", 1), ("1e18", 1_000_000_000_000_000_000), ("10.0", 10), ("2.50e1", 25),
            ("100e-2", 1), ("0.0", 0), ("-0.0e5", 0), ("0e99999", 0), ("10000000000000000000e-1", 1_000_000_000_000_000_000),
            ("9.223372036854775807e18", .max), ("-92233720368547758.08e2", .min),
        ]
        for (text, expected) in cases {
            #expect(try value(text) == .integer(expected), "\(text)")
            #expect(try value("[\(text)]") == .array([.integer(expected)]), "\(text) in an array")
        }
        #expect(try value("-0").bytes == Array("0".utf8))
    }

    @Test("a member name given twice is refused, also when the two are equal only after Unicode normalisation")
    func duplicates() throws {
        for text in [#"{"a":1,"b":0,"a":2}"#, #"{"a":{"x":1},"a":[]}"#, "{\"caf\u{E9}\":1,\"cafe\u{301}\":2}", #"{"caf\u00e9":1,"cafe\u0301":2}"#] {
            let error = try #require(directError(Array(text.utf8)), "\(text)")
            #expect(error.message.hasSuffix("appears twice in one object"), "\(text): \(error.message)")
        }
        // The same name in different objects is fine.
        #expect(try value(#"{"a":{"a":1},"b":{"a":2}}"#) == .object(["a": .object(["a": .integer(1)]), "b": .object(["a": .integer(2)])]))
    }

    @Test("a formatted manifest-like document re-serialises to its canonical form")
    func canonicalForm() throws {
        let text = """
            {
              "version": 7,
              "name": "app",
              "files": [ { "size": 3, "path": "z\\/a.txt", "sha256": "ab" } ],
              "note": "caf\\u00e9 \\"q\\" \\u0001 \\t",
              "expires": null,
              "big": 1e3
            }
            """
        let parsed = try value(text)
        let canonical = #"{"big":1000,"expires":null,"files":[{"path":"z/a.txt","sha256":"ab","size":3}],"name":"app","note":"café \"q\" \u0001 \u0009","version":7}"#
        #expect(String(decoding: parsed.bytes, as: UTF8.self) == canonical)
        #expect(try CanonicalJSON.parse(parsed.bytes, source: "t") == parsed)
        #expect(try CanonicalJSON.parse(parsed.bytes, source: "t").bytes == parsed.bytes)
    }

    @Test("every control character, quote and backslash round-trips through canonical bytes")
    func controlRoundTrip() throws {
        let text = String(decoding: Array(UInt8(0)..<0x20) + Array("\"\\/é😀".utf8), as: UTF8.self)
        let original = CanonicalJSON.object([text: .array([.string(text)])])
        #expect(try CanonicalJSON.parse(original.bytes, source: "t") == original)
    }

    // MARK: Nesting

    @Test("16 levels of nesting are accepted, 17 refused")
    func nestingBound() throws {
        var sixteen = CanonicalJSON.array([])
        for _ in 1..<16 { sixteen = .array([sixteen]) }
        #expect(try value(nested(16)) == sixteen)
        let withScalar = String(repeating: "[", count: 16) + "1" + String(repeating: "]", count: 16)
        #expect(try value(withScalar).bytes == Array(withScalar.utf8))
        #expect(try refusal(Array(nested(17).utf8)).contains("nested too deeply"))
        #expect(directError(Array(nested(17).utf8))?.offset == 16)
        let objects = { (depth: Int) in String(repeating: #"{"a":"#, count: depth) + "1" + String(repeating: "}", count: depth) }
        #expect(try value(objects(16)).bytes == Array(objects(16).utf8))
        #expect(try refusal(Array(objects(17).utf8)).contains("nested too deeply"))
        #expect(try refusal(Array((String(repeating: #"{"a":["#, count: 8) + "{}" + String(repeating: "]}", count: 8)).utf8)).contains("nested too deeply"))
    }

    @Test("the nesting bound is a parameter")
    func customDepth() {
        let parsedTwo = try? CanonicalJSON.parse(Array("[[1]]".utf8), maximumDepth: 2)
        #expect(parsedTwo == .array([.array([.integer(1)])]))
        #expect(directError(Array("[[[1]]]".utf8), maximumDepth: 2)?.message == "nested too deeply")
        let parsedZero = try? CanonicalJSON.parse(Array("1".utf8), maximumDepth: 0)
        #expect(parsedZero == .integer(1))
        #expect(directError(Array("{}".utf8), maximumDepth: 0)?.offset == 0)
    }

    // MARK: Refused

    @Test("every proper prefix of a document is refused, never a crash")
    func truncated() throws {
        let documents = [
            #"{"a":[1,"x\u00e9",true,null],"b":{"c":-5}}"#,
            " [ {\"é😀\" : \"\\ud83d\\ude00\\/\" , \"n\":-12.0e1 } , false ]",
        ]
        #expect(try value(documents[0]) == .object(["a": .array([.integer(1), .string("xé"), .bool(true), .null]), "b": .object(["c": .integer(-5)])]))
        #expect(try value(documents[1]) == .array([.object(["é😀": .string("😀/"), "n": .integer(-120)]), .bool(false)]))
        for document in documents {
            let bytes = Array(document.utf8)
            for length in 0..<bytes.count {
                let prefix = Array(bytes[..<length])
                _ = try refusal(prefix)
                if let error = directError(prefix) { #expect(error.offset <= length, "prefix \(length): \(error.message)") }
            }
        }
    }

    @Test(
        "malformed JSON text is refused with the reason",
        arguments: [
            ("", "unexpected end of text"), (" \t\r\n", "unexpected end of text"),
            ("{} x", "unexpected text after the value"), ("[1]]", "unexpected text after the value"), ("nulll", "unexpected text after the value"),
            ("1\u{B}", "unexpected text after the value"), ("\u{C}1", "not a JSON value"), ("\u{A0}1", "not a JSON value"),
            ("01", "leading zero"), ("-01", "leading zero"), ("[00]", "leading zero"),
            ("1.", "fraction has no digits"), ("1.e5", "fraction has no digits"), (".5", "not a JSON value"),
            ("1e", "exponent has no digits"), ("1e+", "exponent has no digits"), ("-", "not a JSON value"), ("+1", "not a JSON value"),
            ("- 1", "not a JSON value"), ("NaN", "not a JSON value"), ("Infinity", "not a JSON value"),
            ("1.5", "numbers must be integers"), ("12e-1", "numbers must be integers"), ("0.5", "numbers must be integers"),
            ("1e-99999999999", "numbers must be integers"),
            ("9223372036854775808", "out of range"), ("-9223372036854775809", "out of range"), ("1e19", "out of range"),
            ("18446744073709551616", "out of range"), ("1e99999999999999999999", "out of range"),
            ("\"a\u{1}b\"", "a control character in a string"), ("\"a\nb\"", "a control character in a string"),
            ("\"a\tb\"", "a control character in a string"), ("\"\u{0}\"", "a control character in a string"),
            (#""\ud800""#, "lone surrogate"), (#""\udc00""#, "lone surrogate"), (#""\ud800\u0041""#, "lone surrogate"),
            (#"["\ud800"]"#, "lone surrogate"), (#""\ud800\n""#, "lone surrogate"), (#""\ude00\ud83d""#, "lone surrogate"),
            (#""\ud83d\ud83d""#, "lone surrogate"),
            (#""\x""#, "an unknown escape"), (#""\U0041""#, "an unknown escape"), (#""\'""#, "an unknown escape"),
            (#""\u12""#, "escape is cut short"), (#"["\u12"]"#, "needs four hex digits"), (#""\u12G4""#, "needs four hex digits"),
            (#""abc"#, "a string is not closed"), (#""abc\"#, "a string is not closed"),
            ("tru", "not a JSON value"), ("nul", "not a JSON value"), ("fals", "not a JSON value"), ("True", "not a JSON value"),
            ("'a'", "not a JSON value"), ("{'a':1}", "expected a member name"), ("{a:1}", "expected a member name"),
            ("{1:1}", "expected a member name"), (#"{"a" 1}"#, "expected ':'"), (#"{"a"}"#, "expected ':'"),
            ("[1 2]", "expected ',' or ']'"), (#"{"a":1 "b":2}"#, "expected ',' or '}'"), ("[1;2]", "expected ',' or ']'"),
            ("[1,]", "not a JSON value"), ("[,1]", "not a JSON value"), (#"{"a":1,}"#, "expected a member name"), (#"{,}"#, "expected a member name"),
        ])
    func refused(text: String, phrase: String) throws {
        let detail = try refusal(Array(text.utf8))
        #expect(detail.contains(phrase), "\(detail)")
    }

    @Test("strings that are not valid UTF-8 are refused")
    func invalidUTF8() throws {
        let quote = UInt8(ascii: "\"")
        let bodies: [[UInt8]] = [[0xFF], [0xE2, 0x82], [0x61, 0xE2, 0x82], [0x80], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xF0, 0x9F, 0x98]]
        for body in bodies {
            let detail = try refusal([quote] + body + [quote])
            #expect(detail.contains("a string is not valid UTF-8"), "\(body): \(detail)")
            let member = try refusal(Array("{\"".utf8) + body + Array("\":1}".utf8))
            #expect(member.contains("a string is not valid UTF-8"), "\(body) as a name: \(member)")
        }
        #expect(try refusal([0xFF]).contains("not a JSON value"))
        #expect(try refusal(Array("[1]".utf8) + [0xEF, 0xBB, 0xBF]).contains("unexpected text after the value"))
        #expect(try refusal([0xEF, 0xBB, 0xBF] + Array("[1]".utf8)).contains("not a JSON value"))
    }

    @Test("errors name the byte where the text went wrong")
    func offsets() throws {
        #expect(directError(Array("[1,2,x]".utf8))?.offset == 5)
        #expect(directError(Array("{} x".utf8))?.offset == 3)
        #expect(directError(Array("[1.5]".utf8))?.offset == 1)
        #expect(directError([])?.offset == 0)
        #expect(directError(Array("[1,2,x]".utf8))?.message == "not a JSON value")
        #expect(try refusal(Array("[1,2,x]".utf8)) == "not valid JSON: not a JSON value (byte 5)")
    }
}
