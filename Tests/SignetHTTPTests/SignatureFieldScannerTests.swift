import HTTPTypes
import SignetCore
import SignetTestSupport
import Testing
@testable import SignetHTTP

/// The fast path for canonical `Signature-Input`/`Signature` fields must read exactly what the
/// general reader reads, or decline: over what signers write, over every single-byte change of
/// those, and over the structured-dictionary corpus.
@Suite struct SignatureFieldScannerTests {
    static let canonical: [(String, String)] = [
        (#"sig1=("@method" "@target-uri");created=1618884473;nonce="b3k2pp5k7z";alg="ed25519";keyid="sha256/Uh1F0xe7k4nSetdlVeYW0HiDXk8fyu/AFa0gQy8gYqw=""#,
         "sig1=:ANaSZOlZVUOniXMryPq9LJFr7jQTVDEyPCoF1dESY6yUQ2DuYi74agCYOjVvPx6cPRRK7/iCRRaJ4sqei9MFBQ==:"),
        (#"sig1=("@method" "@target-uri" "content-digest" "content-type");created=1;expires=2;nonce="n";alg="hmac-sha256";keyid="bench-hmac";tag="app""#,
         "sig1=:AAAA:"),
        (#"sig1=();created=0"#, "sig1=:AQID:"),
        (#"a=("@status" "@path" "@query" "@authority" "@scheme" "@request-target"), b=("date");keyid="k""#, "b=:AQ==:, a=:Ag==:"),
    ]

    static func fields(_ input: String, _ signature: String) -> HTTPFields {
        var fields = HTTPFields()
        fields[.signatureInput] = input
        fields[.signature] = signature
        return fields
    }

    @Test func whatSignersWriteTakesTheFastPathAndReadsTheSame() async throws {
        for (input, signature) in Self.canonical {
            let fields = Self.fields(input, signature)
            #expect(SignatureFields.scanned(fields, maximumFieldBytes: 8192, maximumSignatures: 8) != nil, "declined: \(input)")
            #expect(HTTPFuzzing.scannerDisagreement(fields) == nil, "\(input)")
        }
        // And what Signet's own signer writes.
        var request = HTTPRequest(method: .post, scheme: "https", authority: "example.com", path: "/a?b=c")
        let signer = HTTPMessageSigner(key: .hmacSHA256(SecretBytes(Array(repeating: 7, count: 32))), keyID: "k")
        try await signer.sign(&request, body: [1, 2, 3])
        let fields = request.headerFields
        #expect(SignatureFields.scanned(fields, maximumFieldBytes: 8192, maximumSignatures: 8) != nil)
        #expect(HTTPFuzzing.scannerDisagreement(fields) == nil)
    }

    @Test func everySingleByteChangeIsReadTheSameOrDeclined() {
        var declined = 0
        var accepted = 0
        let alphabet = Array(#" "();=,:*\@-_.+/0aAzZ9~"#.utf8) + [0x09, 0x7F, 0xC3]
        for (input, signature) in Self.canonical {
            for (which, text) in [(0, input), (1, signature)] {
                let bytes = Array(text.utf8)
                for index in bytes.indices {
                    for replacement in alphabet where replacement != bytes[index] {
                        var changed = bytes
                        changed[index] = replacement
                        for variant in [changed, Array(changed[..<index]) + changed[(index + 1)...], Array(bytes[..<index]) + [replacement] + bytes[index...]] {
                            let value = String(decoding: variant, as: UTF8.self)
                            let fields = which == 0 ? Self.fields(value, signature) : Self.fields(input, value)
                            if let disagreement = HTTPFuzzing.scannerDisagreement(fields) {
                                Issue.record("\(disagreement): \(value)")
                            }
                            if SignatureFields.scanned(fields, maximumFieldBytes: 8192, maximumSignatures: 8) == nil { declined += 1 } else { accepted += 1 }
                        }
                    }
                }
            }
        }
        #expect(accepted > 500 && declined > 5_000, "accepted \(accepted), declined \(declined)")
    }

    @Test func theStructuredDictionaryCorpusIsReadTheSameOrDeclined() {
        var generator = StructuredDictionaryGenerator(seed: 0x5CA7_7E55)
        var accepted = 0
        for _ in 0..<20_000 {
            let sample = String(decoding: generator.sample().bytes, as: UTF8.self)
            var fields = Self.fields(sample, "")
            let labels = HTTPFuzzing.labels(in: fields)
            fields[.signature] = labels.sorted().map { "\($0)=:AAAA:" }.joined(separator: ", ")
            if let disagreement = HTTPFuzzing.scannerDisagreement(fields) { Issue.record("\(disagreement): \(sample)") }
            if SignatureFields.scanned(fields, maximumFieldBytes: 8192, maximumSignatures: 64) != nil { accepted += 1 }
        }
        #expect(accepted > 0)
    }

    @Test func fieldsOverTheLimitsOrOnSeveralLinesGoToTheGeneralReader() {
        let (input, signature) = Self.canonical[0]
        #expect(SignatureFields.scanned(Self.fields(input, signature), maximumFieldBytes: 20, maximumSignatures: 8) == nil)
        #expect(SignatureFields.scanned(Self.fields(Self.canonical[3].0, Self.canonical[3].1), maximumFieldBytes: 8192, maximumSignatures: 1) == nil)
        var twoLines = Self.fields(input, signature)
        twoLines.append(HTTPField(name: .signatureInput, value: #"sig2=("@method");created=1"#))
        #expect(SignatureFields.scanned(twoLines, maximumFieldBytes: 8192, maximumSignatures: 8) == nil)
        // A label given twice is refused by the general reader, never read by the scanner.
        let twice = Self.fields(#"sig1=("@method");created=1, sig1=("@path");created=1"#, "sig1=:AAAA:")
        #expect(SignatureFields.scanned(twice, maximumFieldBytes: 8192, maximumSignatures: 8) == nil)
        #expect(throws: HTTPSignatureError.self) { try SignatureFields(twice, maximumFieldBytes: 8192, maximumSignatures: 8) }
    }

    @Test func theScannerDeclinesWhatOnlyTheGeneralReaderMayJudge() {
        let params = #";created=1;keyid="k""#
        for input in [
            #"sig1=("@query-param")"# + params, #"sig1=("@unknown")"# + params, #"sig1=("@Method")"# + params,
            #"sig1=("Content-Type")"# + params, #"sig1=("")"# + params, #"sig1=("@method" "@method")"# + params,
            #"sig1=("@method");created=1;created=2"#, #"sig1=("@method");createdx=1"#, #"sig1=("@method");nonce=1"#,
            #"sig1=("@method");created=01"#, #"sig1=("@method");Created=1"#,
        ] {
            #expect(SignatureFieldScanner.inputs(input) == nil, "\(input)")
            #expect(HTTPFuzzing.scannerDisagreement(Self.fields(input, "sig1=:AAAA:")) == nil, "\(input)")
        }
        for signature in ["sig1=:A===:", "sig1=:====:", "sig1=::", "sig1=:AA=A:", "sig1=:AB==:", "sig1=: AAAA:"] {
            #expect(SignatureFieldScanner.signatures(signature) == nil, "\(signature)")
        }
        #expect(SignatureFieldScanner.signatures("sig1=:AQ==:")?.first?.bytes == [1])
        let read = SignatureFieldScanner.inputs(#"sig1=("@method" "x-a!b" "@path");tag="t";expires=5;alg="a";nonce="n";keyid="k";created=4"#)
        #expect(read?.first?.components == [.method, SignatureComponent("x-a!b"), .path])
        #expect(read?.first?.parameters.created == 4 && read?.first?.parameters.expires == 5 && read?.first?.parameters.tag == "t")
    }

    @Test func componentNamesAreLowerCasedOnlyWhenTheyNeedIt() {
        #expect(SignatureComponent("X-Account").name == "x-account")
        #expect(SignatureComponent("x-account").name == "x-account")
        #expect(SignatureComponent("ÄRGER").name == "ärger")
        #expect(SignatureComponent("@method").name == "@method")
        #expect(SignatureComponent("@method").description == #""@method""#)
        #expect(SignatureComponent("@\u{301}X").name == "@\u{301}x", "not a derived component: lower-cased")
        // The switch and the set name the same derived components.
        #expect(SignatureComponent.derived.allSatisfy(SignatureComponent.isKnownDerived))
        for name in ["@methods", "@Method", "@", "method", "@query-params", "@signature-params"] {
            #expect(!SignatureComponent.isKnownDerived(name), "\(name)")
        }
        var base: [UInt8] = []
        SignatureComponent.queryParameter("a b").appendIdentifier(to: &base)
        #expect(String(decoding: base, as: UTF8.self) == SignatureComponent.queryParameter("a b").description)
    }
}
