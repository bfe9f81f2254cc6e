import SignetCore
import SignetTestSupport
import Testing

/// The strict JSON parser bundles and pin files share: the RFC 8259 grammar, members in
/// document order, numbers as written, and every refusal with its reason and byte.
@Suite("StrictJSON")
struct StrictJSONTests {
    // MARK: Helpers

    func parse(_ text: String, maximumDepth: Int = 16, numbers: JSONNumberRule = .anyNumber) throws -> JSONValue {
        try StrictJSON.parse(Array(text.utf8), maximumDepth: maximumDepth, numbers: numbers)
    }

    /// Requires `bytes` to be refused and returns the error.
    func refusal(
        bytes: [UInt8], maximumDepth: Int = 16, numbers: JSONNumberRule = .anyNumber, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> JSONSyntaxError {
        try thrown(JSONSyntaxError.self, sourceLocation: sourceLocation) {
            try StrictJSON.parse(bytes, maximumDepth: maximumDepth, numbers: numbers)
        }
    }

    /// Requires `text` to be refused and returns the error.
    func refusal(
        _ text: String, maximumDepth: Int = 16, numbers: JSONNumberRule = .anyNumber, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> JSONSyntaxError {
        try refusal(bytes: Array(text.utf8), maximumDepth: maximumDepth, numbers: numbers, sourceLocation: sourceLocation)
    }

    func nested(_ depth: Int) -> String { String(repeating: "[", count: depth) + String(repeating: "]", count: depth) }

    // MARK: Accepted

    @Test("a document of every kind of value, with every JSON whitespace byte around the tokens")
    func validDocument() throws {
        let ws = " \t\n\r"
        let text = "\(ws){\(ws)\"a\"\(ws):\(ws)[\(ws)1\(ws),\(ws)-2.5e3\(ws),\(ws)true\(ws),\(ws)false\(ws),\(ws)null\(ws),\(ws)\"x\"\(ws)]\(ws),"
            + "\(ws)\"b\"\(ws):\(ws){\(ws)}\(ws),\(ws)\"c\"\(ws):\(ws)[\(ws)]\(ws),\(ws)\"d\"\(ws):\(ws)\"\"\(ws)}\(ws)"
        let expected = JSONValue.object([
            JSONMember("a", .array([.number("1"), .number("-2.5e3"), .bool(true), .bool(false), .null, .string("x")])),
            JSONMember("b", .object([])),
            JSONMember("c", .array([])),
            JSONMember("d", .string("")),
        ])
        #expect(try parse(text) == expected)
        #expect(try parse("true") == .bool(true))
        #expect(try parse("false") == .bool(false))
        #expect(try parse(" null ") == .null)
        #expect(try parse(#""s""#) == .string("s"))
        #expect(try parse("0") == .number("0"))
        #expect(try parse("{}") == .object([]))
        #expect(try parse("[]") == .array([]))
        #expect(try parse(#"[[],{},[[{"a":[{}]}]],"s",-1]"#)
            == .array([.array([]), .object([]), .array([.array([.object([JSONMember("a", .array([.object([])]))])])]), .string("s"), .number("-1")]))
    }

    @Test("object members are kept in document order, and written back in it")
    func memberOrder() throws {
        let text = #"{"z":1,"a":2,"m":{"y":3,"b":4},"é":5,"A":6}"#
        let value = try parse(text)
        guard case .object(let members) = value else {
            Issue.record("not an object: \(value)")
            return
        }
        #expect(members.map(\.name) == ["z", "a", "m", "é", "A"])
        guard case .object(let inner) = members[2].value else {
            Issue.record("not an object: \(members[2].value)")
            return
        }
        #expect(inner.map(\.name) == ["y", "b"])
        #expect(value.bytes(pretty: false) == Array(text.utf8))
    }

    @Test("every escape, either case of hex, and raw multi-byte UTF-8")
    func escapes() throws {
        #expect(try parse(#""\"\\\/\b\f\n\r\t\u00e9\u00E9""#) == .string("\"\\/\u{8}\u{C}\n\r\téé"))
        #expect(try parse(#""\u0000\u001f\u007f\u0800\uffff""#) == .string("\u{0}\u{1F}\u{7F}\u{800}\u{FFFF}"))
        #expect(try parse("\"é€😀中\u{7F}\"") == .string("é€😀中\u{7F}"))
        #expect(try parse(#""caf\u00e9 😀\t""#) == .string("café 😀\t"), "raw bytes before and after an escape")
        #expect(try parse(#"{"\u0061\/":"x"}"#) == .object([JSONMember("a/", .string("x"))]))
    }

    @Test("surrogate pairs are accepted, in either case of hex")
    func surrogatePairs() throws {
        #expect(try parse(#""\ud83d\ude00""#) == .string("😀"))
        #expect(try parse(#""\uD83D\uDE00""#) == .string("😀"))
        #expect(try parse(#""\ud834\udd1e and \udbff\udfff""#) == .string("\u{1D11E} and \u{10FFFF}"))
        #expect(try parse(#"{"\ud800\udc00":[]}"#) == .object([JSONMember("\u{10000}", .array([]))]))
    }

    // MARK: Member names

    @Test("a member name given twice in one object is refused at the second, naming it")
    func duplicateNames() throws {
        let plain = try refusal(#"{"a":1,"a":2}"#)
        #expect(plain.message == #"the member name "a" appears twice in one object"#)
        #expect(plain.offset == 7)
        #expect(plain.duplicateMemberName == "a")

        let deeper = try refusal(#"[{"a":{"x":1},"b":0,"a":[]}]"#)
        #expect(deeper.message == #"the member name "a" appears twice in one object"#)
        #expect(deeper.offset == 20)

        // Refused when the second name is read, before its value.
        let early = try refusal(#"{"a":1,"a":"#)
        #expect(early.duplicateMemberName == "a")
        #expect(early.offset == 7)

        // A name with control characters is quoted with them escaped.
        let control = try refusal(#"{"a\u0001":1,"a\u0001":2}"#)
        #expect(control.message == #"the member name "a\u{1}" appears twice in one object"#)
        #expect(control.duplicateMemberName == "a\u{1}")

        // Other problems leave the name unset.
        #expect(try refusal("{").duplicateMemberName == nil)
    }

    @Test("two names equal only as Swift strings (canonically equivalent Unicode) are refused too")
    func canonicallyEquivalentNames() throws {
        let precomposedFirst = try refusal("{\"caf\u{E9}\":1,\"cafe\u{301}\":2}")
        #expect(precomposedFirst.message.hasSuffix("appears twice in one object"), "\(precomposedFirst.message)")
        #expect(precomposedFirst.offset == 11)
        #expect(precomposedFirst.duplicateMemberName == "café")
        #expect(precomposedFirst.duplicateMemberName?.unicodeScalars.count == 5, "the second name, decomposed, is the one named")

        let decomposedFirst = try refusal("{\"cafe\u{301}\":1,\"caf\u{E9}\":2}")
        #expect(decomposedFirst.duplicateMemberName?.unicodeScalars.count == 4)

        let escaped = try refusal(#"{"caf\u00e9":1,"cafe\u0301":2}"#)
        #expect(escaped.message.hasSuffix("appears twice in one object"), "\(escaped.message)")
        #expect(escaped.duplicateMemberName == "caf\u{E9}")

        let hangul = try refusal("{\"\u{D55C}\":1,\"\u{1112}\u{1161}\u{11AB}\":2}")
        #expect(hangul.duplicateMemberName == "\u{D55C}")
    }

    @Test("large objects are checked for repeated names as well as small ones")
    func duplicatesInLargeObjects() throws {
        let names = (0..<40).map { "k\($0)" }
        func object(_ names: [String]) -> String { "{" + names.map { "\"\($0)\":0" }.joined(separator: ",") + "}" }

        guard case .object(let members) = try parse(object(names)) else {
            Issue.record("not an object")
            return
        }
        #expect(members.map(\.name) == names)

        for (position, repeated) in [(8, "k0"), (9, "k8"), (40, "k0"), (40, "k39"), (40, "k17")] {
            var withRepeat = names
            withRepeat.insert(repeated, at: position)
            let error = try refusal(object(withRepeat))
            #expect(error.duplicateMemberName == repeated, "\(repeated) at \(position)")
        }
        let suffixed: [String] = names.map { $0 + "x" }
        let withEquivalent: [String] = names + ["caf\u{E9}"] + suffixed + ["cafe\u{301}"]
        let equivalent = try refusal(object(withEquivalent))
        #expect(equivalent.duplicateMemberName == "café")
    }

    @Test("the same name in different objects, and repeated array elements, are fine")
    func sameNameElsewhere() throws {
        #expect(
            try parse(#"{"a":{"a":1},"b":{"a":2}}"#)
                == .object([JSONMember("a", .object([JSONMember("a", .number("1"))])), JSONMember("b", .object([JSONMember("a", .number("2"))]))]))
        #expect(try parse(#"[{"a":1},{"a":1}]"#) == .array([.object([JSONMember("a", .number("1"))]), .object([JSONMember("a", .number("1"))])]))
        #expect(try parse(#"["a","a"]"#) == .array([.string("a"), .string("a")]))
    }

    // MARK: Strings

    @Test(
        "lone surrogates are refused",
        arguments: [
            (#""\ud800""#, 7), (#""\udc00""#, 7), (#""\ud800\u0041""#, 13), (#""\ud800x""#, 7), (#""\ude00\ud83d""#, 7),
            (#""\ud83d\ud83d""#, 13), (#""\ud800\n""#, 7), (#"{"\ud800":1}"#, 8), (#"["\udfff"]"#, 8),
        ])
    func loneSurrogates(text: String, offset: Int) throws {
        let error = try refusal(text)
        #expect(error.message == "a lone surrogate in a string", "\(text)")
        #expect(error.offset == offset, "\(text)")
    }

    @Test("a surrogate written as raw UTF-8 is not valid UTF-8")
    func rawSurrogate() throws {
        let quote = UInt8(ascii: "\"")
        #expect(try refusal(bytes: [quote, 0xED, 0xA0, 0x80, quote]).message == "a string is not valid UTF-8")
        #expect(try refusal(bytes: [quote, 0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80, quote]).message == "a string is not valid UTF-8")
    }

    @Test("strings that are not valid UTF-8 are refused, as values, names and after escapes")
    func invalidUTF8() throws {
        let quote = UInt8(ascii: "\"")
        let bodies: [[UInt8]] = [[0xFF], [0xE2, 0x82], [0x61, 0xE2, 0x82], [0x80], [0xC0, 0xAF], [0xF4, 0x90, 0x80, 0x80], [0xF0, 0x9F, 0x98], [0xF8, 0x88, 0x80, 0x80, 0x80]]
        for body in bodies {
            let value = try refusal(bytes: [quote] + body + [quote])
            #expect(value.message == "a string is not valid UTF-8", "\(body)")
            #expect(value.offset == body.count + 2, "\(body)")
            let name = try refusal(bytes: Array("{\"".utf8) + body + Array("\":1}".utf8))
            #expect(name.message == "a string is not valid UTF-8", "\(body) as a name")
            let afterEscape = try refusal(bytes: Array("[\"\\n".utf8) + body + Array("\"]".utf8))
            #expect(afterEscape.message == "a string is not valid UTF-8", "\(body) after an escape")
        }
        #expect(try refusal(bytes: [0xFF]).message == "not a JSON value")
        #expect(try refusal(bytes: [0xEF, 0xBB, 0xBF] + Array("[1]".utf8)).message == "not a JSON value", "a byte order mark")
        #expect(try refusal(bytes: Array("[1]".utf8) + [0xEF, 0xBB, 0xBF]).message == "unexpected text after the value")
    }

    @Test("a raw control character in a string is refused; DEL is not a control character here")
    func controlCharacters() throws {
        let quote = UInt8(ascii: "\"")
        for byte in UInt8(0)..<0x20 {
            let plain = try refusal(bytes: [quote, UInt8(ascii: "a"), byte, quote])
            #expect(plain.message == "a control character in a string", "\(byte)")
            #expect(plain.offset == 3, "\(byte)")
            let afterEscape = try refusal(bytes: [quote, UInt8(ascii: "\\"), UInt8(ascii: "n"), byte, quote])
            #expect(afterEscape.message == "a control character in a string", "\(byte) after an escape")
            #expect(afterEscape.offset == 4, "\(byte) after an escape")
            let name = try refusal(bytes: [UInt8(ascii: "{"), quote, byte, quote, UInt8(ascii: ":"), UInt8(ascii: "1"), UInt8(ascii: "}")])
            #expect(name.message == "a control character in a string", "\(byte) in a name")
        }
        #expect(try StrictJSON.parse([quote, 0x7F, quote]) == .string("\u{7F}"))
    }

    // MARK: Numbers

    @Test(
        "numbers are kept exactly as written",
        arguments: [
            "0", "-0", "7", "-5", "1e3", "1E+2", "1e-0", "2.50", "10.0", "-12.0e-1", "0.000001", "1.5", "0e99999",
            "123456789012345678901234567890", "1e99999999999999999999", "-0.0E-0",
        ])
    func numbersAsWritten(text: String) throws {
        #expect(try parse(text) == .number(text))
        #expect(try parse("[\(text)]") == .array([.number(text)]))
        #expect(try parse(" {\"n\" : \(text) } ") == .object([JSONMember("n", .number(text))]))
        #expect(JSONValue.number(text).bytes(pretty: false) == Array(text.utf8))
    }

    static let int64Cases: [(String, Int64)] = [
        ("0", 0), ("-0", 0), ("7", 7), ("-5", -5), (String(Int64.max), Int64.max), (String(Int64.min), Int64.min),
        ("1e3", 1000), ("1E+2", 100), ("1e-0", 1), ("10.0", 10), ("2.50e1", 25), ("100e-2", 1), ("0.0", 0), ("-0.0e5", 0),
        ("0e99999", 0), ("10000000000000000000e-1", 1_000_000_000_000_000_000), ("9.223372036854775807e18", Int64.max),
        ("-92233720368547758.08e2", Int64.min),
    ]

    @Test("the int64 rule accepts whole numbers within Int64, however they are written", arguments: StrictJSONTests.int64Cases)
    func int64Rule(text: String, expected: Int64) throws {
        #expect(try parse(text, numbers: .int64) == .number(text), "the text is kept under the rule too")
        #expect(JSONValue.number(text).int64Value == expected, "\(text)")
    }

    @Test(
        "the int64 rule refuses fractions and numbers out of range, at the byte the bundle parser named",
        arguments: [
            ("1.5", "numbers must be integers", 0), ("[1.5]", "numbers must be integers", 1), ("12e-1", "numbers must be integers", 0),
            ("0.5", "numbers must be integers", 0), ("1e-99999999999", "numbers must be integers", 0),
            ("9223372036854775808", "a number is out of range", 19), ("-9223372036854775809", "a number is out of range", 20),
            ("1e19", "a number is out of range", 0), ("18446744073709551616", "a number is out of range", 0),
            ("[1e99999999999999999999]", "a number is out of range", 1),
        ])
    func int64RuleRefusals(text: String, message: String, offset: Int) throws {
        let error = try refusal(text, numbers: .int64)
        #expect(error.message == message, "\(text)")
        #expect(error.offset == offset, "\(text)")
        _ = try parse(text)  // any number is fine without the rule
    }

    @Test("int64Value is nil for what is not an integral JSON number")
    func int64ValueNil() {
        for text in ["1.5", "1e19", "abc", "", " 1", "1 ", "01", "+1", "1.", "-", "0x10", "1e"] {
            #expect(JSONValue.number(text).int64Value == nil, "\(text)")
        }
        #expect(JSONValue.string("1").int64Value == nil)
        #expect(JSONValue.bool(true).int64Value == nil)
        #expect(JSONValue.null.int64Value == nil)
    }

    // MARK: Nesting

    @Test("16 levels of nesting are accepted by default, 17 refused at the 17th")
    func depthBound() throws {
        _ = try parse(nested(16))
        let deep = try refusal(nested(17))
        #expect(deep.message == "nested too deeply")
        #expect(deep.offset == 16)
        let objects = { (depth: Int) in String(repeating: #"{"a":"#, count: depth) + "1" + String(repeating: "}", count: depth) }
        _ = try parse(objects(16))
        #expect(try refusal(objects(17)).message == "nested too deeply")
        let mixed = String(repeating: #"{"a":["#, count: 8) + "{}" + String(repeating: "]}", count: 8)
        #expect(try refusal(mixed).message == "nested too deeply")
        #expect(try refusal(nested(10_000)).message == "nested too deeply", "deep input is refused, not recursed into")
    }

    @Test("the nesting bound is a parameter")
    func customDepth() throws {
        #expect(try parse("[[1]]", maximumDepth: 2) == .array([.array([.number("1")])]))
        let three = try refusal("[[[1]]]", maximumDepth: 2)
        #expect(three.message == "nested too deeply")
        #expect(three.offset == 2)
        #expect(try parse("1", maximumDepth: 0) == .number("1"))
        #expect(try parse(#""s""#, maximumDepth: 0) == .string("s"))
        #expect(try refusal("{}", maximumDepth: 0).offset == 0)
        #expect(try refusal("[]", maximumDepth: 0).message == "nested too deeply")
    }

    // MARK: Refused

    @Test(
        "text after the value is refused",
        arguments: [("{} x", 3), ("[1]]", 3), ("nulll", 4), ("1 2", 2), (#""a""b""#, 3), ("1\u{B}", 1), ("{}\u{0}", 2), ("true false", 5)])
    func trailingText(text: String, offset: Int) throws {
        let error = try refusal(text)
        #expect(error.message == "unexpected text after the value", "\(text)")
        #expect(error.offset == offset, "\(text)")
    }

    @Test("every proper prefix of a document is refused, at a byte within it")
    func truncated() throws {
        let documents = [
            #"{"a":[1,"x\u00e9",true,null],"b":{"c":-5.5e-3}}"#,
            " [ {\"é😀\" : \"\\ud83d\\ude00\\/\" , \"n\":-12.0e1 } , false ]",
        ]
        for document in documents {
            let bytes = Array(document.utf8)
            _ = try StrictJSON.parse(bytes)
            for length in 0..<bytes.count {
                let error = try refusal(bytes: Array(bytes[..<length]))
                #expect(error.offset <= length, "prefix \(length): \(error.message)")
            }
        }
        #expect(try refusal("").message == "unexpected end of text")
        #expect(try refusal(" \t\r\n").message == "unexpected end of text")
        #expect(try refusal(#"{"a":"#).message == "unexpected end of text")
        #expect(try refusal("[1,").message == "unexpected end of text")
        #expect(try refusal("[1").message == "unexpected end of text")
        #expect(try refusal(#""abc"#).message == "a string is not closed")
        #expect(try refusal(#""abc\"#).message == "a string is not closed")
        #expect(try refusal(#""\u12"#).message == "a \\u escape is cut short")
        #expect(try refusal(#""\ud83d\ude"#).message == "a \\u escape is cut short")
        #expect(try refusal("tru").message == "not a JSON value")
    }

    @Test(
        "malformed JSON text is refused with the reason",
        arguments: [
            ("\u{C}1", "not a JSON value"), ("\u{A0}1", "not a JSON value"),
            ("01", "a number has a leading zero"), ("-01", "a number has a leading zero"), ("[00]", "a number has a leading zero"),
            ("1.", "a number's fraction has no digits"), ("1.e5", "a number's fraction has no digits"), (".5", "not a JSON value"),
            ("1e", "a number's exponent has no digits"), ("1e+", "a number's exponent has no digits"), ("-", "not a JSON value"),
            ("+1", "not a JSON value"), ("- 1", "not a JSON value"), ("NaN", "not a JSON value"), ("Infinity", "not a JSON value"),
            (#""\x""#, "an unknown escape in a string"), (#""\U0041""#, "an unknown escape in a string"), (#""\'""#, "an unknown escape in a string"),
            (#"["\u12"]"#, "a \\u escape needs four hex digits"), (#""\u12G4""#, "a \\u escape needs four hex digits"),
            ("nul", "not a JSON value"), ("fals", "not a JSON value"), ("True", "not a JSON value"), ("'a'", "not a JSON value"),
            ("{'a':1}", "expected a member name"), ("{a:1}", "expected a member name"), ("{1:1}", "expected a member name"),
            (#"{"a" 1}"#, "expected ':'"), (#"{"a"}"#, "expected ':'"), ("[1 2]", "expected ',' or ']'"), ("[1;2]", "expected ',' or ']'"),
            (#"{"a":1 "b":2}"#, "expected ',' or '}'"), ("[1,]", "not a JSON value"), ("[,1]", "not a JSON value"),
            (#"{"a":1,}"#, "expected a member name"), ("{,}", "expected a member name"),
        ])
    func malformed(text: String, message: String) throws {
        #expect(try refusal(text).message == message, "\(text)")
    }

    @Test("errors name the byte where the text went wrong")
    func offsets() throws {
        #expect(try refusal("[1,2,x]") == JSONSyntaxError(message: "not a JSON value", offset: 5))
        #expect(try refusal("[01]").offset == 1)
        #expect(try refusal(#"{"a" 1}"#).offset == 5)
        #expect(try refusal(#""\q""#).offset == 3)
        #expect(try refusal(#""\u12G4""#).offset == 5)
        #expect(try refusal(bytes: []).offset == 0)
    }
}
