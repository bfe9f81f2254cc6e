import HTTPTypes
import RawStructuredFieldValues
@testable import SignetHTTP
import Testing

/// The structured-dictionary parser must answer exactly as swift-http-structured-headers does
/// and, beyond that, report a top-level key given twice, which the library silently merges.
/// The differential test over generated inputs is `StructuredDictionaryDifferentialTests`.
@Suite("structured-dictionary parser")
struct StructuredDictionaryParserTests {
    /// The library's verdict: its dictionary, or nil when it refuses the value.
    static func library(_ bytes: [UInt8]) -> OrderedMap<String, ItemOrInnerList>? {
        var parser = StructuredFieldValueParser(bytes)
        return try? parser.parseDictionaryFieldValue()
    }

    /// Values the library accepts, with no key given twice.
    static let accepted: [String] = [
        #"sig1=("@method" "@target-uri" "content-digest");created=1618884473;keyid="test-key-rsa-pss";nonce="b3k2pp5k7z-50gnwp.yemd""#,
        #"sig-b21=();created=1618884473;keyid="test-key-rsa-pss";nonce="b3k2pp5k7z-50gnwp.yemd""#,
        #"sig1=:YWJj+/89=:, sig2=::, sig3=:=a=:"#,
        #"a=1, b;x=?0;y, c=(a b c);p=-42, d=tok/en:x, *e="q\"u\\o", f=T%k*"#,
        "a=1,\tb=2,  c=( 1  2 );z, d=( )",
        #"reqres=("@status" "content-digest" "content-type" "@authority";req "@method";req "@path";req "@query-param";req;name="x")"#,
        "a=1.5, b=-0.001, c=123456789012.123, d=-1.50, e=00.0, f=-0",
        "a=123456789012345, b=-123456789012345, c=@1659578233, d=@-1, e=@123456789012345",
        #"a=%"caf%c3%a9", b=%"\", c=%"%00", d=%"%e2%82%ac %f0%9f%98%80", e=%"", f=%"%7f%25%22""#,
        "a;p=1;p=2, b=(1;x 2;x=?0);q;q=%\"x\", c=(%\"\\\" \"\\\\\")",
        "k*=1, *=2, a-b=3, a_b=4, a.b=5, x9=6",
        "a;  p=1;   q",
        "   a=1 \t ",
        "a=1\t",
        "",
        "   ",
    ]

    /// Values the library refuses.
    static let refused: [String] = [
        "a=1,", "a=1, ", "a=1,\t", ",a=1", "a=1,,b=2", "\ta=1", " \t", "A=1", "1a=1", "a=", "a=1 b=2", "a=1;b=2 ;c",
        "a=(1", "a=(1\t2)", "a=(1,2)", "a=(1 (2))", "a=(1\"x\")", "a=1;p=(1)", "a=1;P", "a=1;p=",
        #"a="unterminated"#, #"a="\x""#, #"a="\"#, "a=\"tab\there\"", "a=\"\u{7F}\"", "a=\u{e9}", "a=\"\u{e9}\"",
        "a=:bad*chars:", "a=:unterminated", "a=?2", "a=?", "a=-", "a=--1", "a=-a",
        "a=1234567890123456", "a=-1234567890123456", "a=1234567890123.1", "a=1.2345", "a=1.", "a=1.2.3", "a=.5",
        "a=@1.5", "a=@", "a=@x", "a=@1234567890123456",
        #"a=%"%C3%A9""#, #"a=%"%ff""#, #"a=%"%c3""#, #"a=%"%ed%a0%80""#, #"a=%"%c0%80""#, #"a=%"%g1""#, #"a=%"%4""#,
        #"a=%"unterminated"#, "a=%abc", "a=%\"tab\there\"", "a=%\"\u{e9}\"",
        // The attack's shape as first reported: the quote after the display string ends the parse.
        #"sig1=("@method");created=1;keyid="k", sig2=%"\"", sig1=("@path");created=2;keyid="k""#,
    ]

    /// Dictionaries in which `sig1` appears twice, hidden from a comma count by strings and
    /// display strings (in a display string a backslash is an ordinary character).
    static let smuggled: [String] = [
        #"sig1=("@method");created=1;keyid="k", sig2=%"\", sig1=("@path");created=2;keyid="k""#,
        #"sig2=%"\", sig1=("@method");created=1;keyid="k", sig1=("@path");created=2;keyid="k""#,
        #"sig1=:YQ==:, sig2=%"a\", sig1=:Yg==:"#,
        #"sig1=("@method");keyid="a\\", sig2=%"\\\", sig1=("@path")"#,
        #"sig1;a=%"\", sig1"#,
        #"sig1=(%"\" "x"), sig1=()"#,
        #"sig1=%"%22\", sig1=1"#,
        "sig1=1,\tsig2=%\"\\\"\t,\tsig1=2",
        #"sig1=("@method");p=%"\";q="\"", sig2="\\", sig1=?1"#,
        #"sig1=:YQ==:, sig1=:Yg==:"#,
        "sig1=1, sig1=1",
    ]

    @Test("accepts what the library accepts, with an equal result", arguments: accepted)
    func agrees(_ value: String) throws {
        let library = try #require(Self.library(Array(value.utf8)), "the library should accept \(value.debugDescription)")
        let parsed = try StructuredDictionaryParser.parse(value)
        #expect(parsed.members == library)
        #expect(!parsed.duplicateKey)
        let fromBytes = try StructuredDictionaryParser.parse(Array(value.utf8))
        #expect(fromBytes.members == library)
    }

    @Test("refuses what the library refuses", arguments: refused)
    func refuses(_ value: String) {
        #expect(Self.library(Array(value.utf8)) == nil, "the library accepts \(value.debugDescription)")
        #expect(throws: StructuredDictionaryParser.Failure.self) { try StructuredDictionaryParser.parse(value) }
    }

    @Test("reports a key given twice, however the strings and display strings around it are quoted", arguments: smuggled)
    func duplicate(_ value: String) throws {
        let library = try #require(Self.library(Array(value.utf8)), "the library should accept \(value.debugDescription)")
        let parsed = try StructuredDictionaryParser.parse(value)
        #expect(parsed.duplicateKey)
        #expect(parsed.repeatedKey == "sig1")
        #expect(parsed.members == library)
    }

    @Test("of a key or parameter given twice the last value stands, in the first one's place, as in the library")
    func lastValueInFirstPlace() throws {
        let value = "a=1, b=2;p=1;q;p=3, a=(x);r"
        let parsed = try StructuredDictionaryParser.parse(value)
        #expect(parsed.members == Self.library(Array(value.utf8)))
        #expect(parsed.repeatedKey == "a")
        #expect(parsed.members.map(\.0) == ["a", "b"])
        guard case .item(let b)? = parsed.members["b"] else {
            Issue.record("b is not an item: \(parsed.members)")
            return
        }
        #expect(b.rfc9651Parameters.map(\.0) == ["p", "q"])
        #expect(b.rfc9651Parameters["p"] == RFC9651BareItem.integer(3))
        guard case .innerList(let a)? = parsed.members["a"] else {
            Issue.record("a is not an inner list: \(parsed.members)")
            return
        }
        #expect(a.rfc9651Parameters["r"] == RFC9651BareItem.bool(true))
    }

    @Test("decimals keep their written precision, as the library's PseudoDecimal does")
    func decimals() throws {
        let parsed = try StructuredDictionaryParser.parse("a=-1.50, b=0.5, c=123456789012.999")
        let expected: [(String, PseudoDecimal)] = [
            ("a", PseudoDecimal(mantissa: -150, exponent: -2)), ("b", PseudoDecimal(mantissa: 5, exponent: -1)),
            ("c", PseudoDecimal(mantissa: 123_456_789_012_999, exponent: -3)),
        ]
        let noParameters: OrderedMap<String, RFC9651BareItem> = [:]
        for (key, decimal) in expected {
            let member = ItemOrInnerList.item(Item(bareItem: RFC9651BareItem.decimal(decimal), parameters: noParameters))
            #expect(parsed.members[key] == member, "\(key)")
        }
    }

    @Test("a signed request with a second Signature-Input member of its label, hidden behind a display string, is refused")
    func hiddenDuplicateLabel() async throws {
        let fixture = try SigningFixture.make(.ed25519)
        let signed = try await NegativeTests.signed(fixture)
        let verifier = NegativeTests.verifier(fixture)
        _ = try await verifier.verify(signed, body: NegativeTests.body)
        let other = #"sig1=("@method");created=1700000000;keyid="client-1""#
        let edits: [(String) -> String] = [
            { $0 + #", sig2=%"\", "# + other },
            { other + #", sig2=%"\", "# + $0 },
            { $0 + ",\tsig2=%\"%22\\\",\t" + other },
            { $0 + #", sig2=("@method");p=%"\\\";q="\"", "# + other },
        ]
        for edit in edits {
            let request = try NegativeTests.rewritten(signed, edit)
            let value = try #require(request.headerFields[.signatureInput])
            // The premise: the library takes the field, and keeps one sig1 of the two.
            let library = try #require(Self.library(Array(value.utf8)), "the library should accept \(value.debugDescription)")
            #expect(library.count == 2)
            let error = try await HTTPTestSupport.thrown { try await verifier.verify(request, body: NegativeTests.body) }
            #expect(error == .malformedField(field: "Signature-Input", detail: "the label sig1 appears twice"))
        }
    }

    @Test("a dictionary serialised from its members is byte for byte what the library's serialiser writes", arguments: accepted)
    func serialisationMatchesTheLibrary(value: String) throws {
        let parsed = try StructuredDictionaryParser.parse(Array(value.utf8), limits: SignedMessage.componentFieldLimits)
        var serializer = StructuredFieldValueSerializer()
        let library = String(decoding: try serializer.writeDictionaryFieldValue(parsed.members), as: UTF8.self)
        #expect(try SignedMessage.serialize(parsed.entries) == library, "\(value)")
    }
}
