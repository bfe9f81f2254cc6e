import RawStructuredFieldValues
@testable import SignetHTTP
import Testing

/// The fast dictionary parser must agree with swift-http-structured-headers wherever it
/// answers, and leave every input it does not fully understand to the library.
@Suite("fast structured-dictionary parser")
struct FastDictionaryParserTests {
    static let agreeing = [
        #"sig1=("@method" "@target-uri" "content-digest");created=1618884473;keyid="test-key-rsa-pss";nonce="b3k2pp5k7z-50gnwp.yemd""#,
        #"sig-b21=();created=1618884473;keyid="test-key-rsa-pss";nonce="b3k2pp5k7z-50gnwp.yemd""#,
        #"sig1=:YWJj+/89=:, sig2=::"#,
        #"a=1, b;x=?0;y, c=(a b c);p=-42, d=tok/en:x, *e="q\"u\\o""#,
        "a=1,\tb=2,  c=( 1  2 );z",
        #"reqres=("@status" "content-digest" "content-type" "@authority";req "@method";req "@path";req "@query-param";req;name="x")"#,
        "",
    ]

    static let leftToTheLibrary = [
        "a=1.5", "a=@1659578233", #"a=%"caf%c3%a9""#, "A=1", "a=1,", "a=(1", #"a="unterminated"#, "a=:bad*chars:", "a=1 b=2",
        "a=1234567890123456", "a=-", "a=?2", #"a="\x""#, "a=\u{e9}",
    ]

    @Test("answers exactly as the library does", arguments: agreeing)
    func agrees(_ value: String) throws {
        let fast = try #require(FastDictionaryParser.parse(value), "the fast path should handle \(value.debugDescription)")
        var parser = StructuredFieldValueParser(Array(value.utf8))
        let library = try parser.parseDictionaryFieldValue()
        #expect(fast.members == library)
        #expect(!fast.duplicateKey)
    }

    @Test("leaves what it does not handle, valid or not, to the library", arguments: leftToTheLibrary)
    func declines(_ value: String) {
        #expect(FastDictionaryParser.parse(value) == nil)
    }

    @Test("reports a key given twice, which the library merges")
    func duplicate() throws {
        let fast = try #require(FastDictionaryParser.parse(#"sig1=:YQ==:, sig1=:Yg==:"#))
        #expect(fast.duplicateKey)
        #expect(fast.members.count == 1)
    }
}
