import Foundation
import HTTPTypes
import SignetCore
@testable import SignetHTTP
import SignetTestSupport
import Testing

/// Fields built to make a verifier (or a server signing its answer over them) work in
/// proportion to the square of their size are refused at the limit, by the parse itself
/// (issue 28: a request of a few thousand labels cost the server a minute of CPU).
@Suite("Oversized signature fields are refused at their limits")
struct OversizedSignatureTests {
    /// A Signature-Input and a Signature of `count` made-up labels, each a plausible input.
    static func labelled(_ count: Int) -> HTTPRequest {
        var request = HTTPTestSupport.sampleRequest()
        let labels = (0..<count).map { "l\($0)" }
        request.headerFields[.signatureInput] = labels.map { "\($0)=(\"@method\");created=\(HTTPTestSupport.now);keyid=\"client-1\"" }
            .joined(separator: ", ")
        request.headerFields[.signature] = labels.map { "\($0)=:AAAA:" }.joined(separator: ", ")
        return request
    }

    @Test("thousands of labels: the parse stops after the limit", arguments: [9, 100, 2000])
    func tooManyLabels(count: Int) async throws {
        let fixture = try SigningFixture.make(.ed25519)
        var policy = HTTPSignaturePolicy()
        policy.maximumFieldBytes = 1 << 20
        let verifier = NegativeTests.verifier(fixture, policy: policy)
        let request = Self.labelled(count)
        await #expect(throws: HTTPSignatureError.tooLarge(what: "the number of signatures", limit: 8)) {
            _ = try await verifier.verify(request, body: nil)
        }
        // What a responder would cover: none of them.
        #expect(request.headerFields.signatureLabels(maximumSignatures: 8, maximumFieldBytes: 1 << 20).isEmpty)
        #expect(Self.labelled(8).headerFields.signatureLabels(maximumSignatures: 8, maximumFieldBytes: 1 << 20).count == 8)
    }

    @Test func theDictionaryParserStopsAtItsMemberLimit() throws {
        let many = (0..<5000).map { "k\($0)=1" }.joined(separator: ", ")
        #expect(throws: StructuredDictionaryParser.Failure.tooManyMembers) { try StructuredDictionaryParser.parse(many, limits: .init(members: 8)) }
        #expect(try StructuredDictionaryParser.parse(many).members.count == 5000)
        // A repeated key is not a new member.
        #expect(try StructuredDictionaryParser.parse("a=1, a=2, b=3", limits: .init(members: 2)).repeatedKey == "a")
        // Parameters and inner lists stop at theirs.
        let parameters = "a=1" + (0..<5000).map { ";p\($0)" }.joined()
        #expect(throws: StructuredDictionaryParser.Failure.tooManyParameters) { try StructuredDictionaryParser.parse(parameters, limits: .init(parameters: 16)) }
        let list = "a=(" + (0..<5000).map { "\($0)" }.joined(separator: " ") + ")"
        #expect(throws: StructuredDictionaryParser.Failure.innerListTooLong) { try StructuredDictionaryParser.parse(list, limits: .init(innerListItems: 64)) }
    }

    @Test("one signature over thousands of components is refused", arguments: [65, 1500])
    func tooManyComponents(count: Int) async throws {
        let fixture = try SigningFixture.make(.ed25519)
        let components = (0..<count).map { "\"x-h\($0)\"" }.joined(separator: " ")
        var request = HTTPTestSupport.sampleRequest()
        request.headerFields[.signatureInput] = "sig1=(\(components));created=\(HTTPTestSupport.now);keyid=\"client-1\""
        request.headerFields[.signature] = "sig1=:AAAA:"
        var policy = HTTPSignaturePolicy()
        policy.maximumFieldBytes = 1 << 20
        await #expect(throws: HTTPSignatureError.tooLarge(what: "the number of components one signature covers", limit: 64)) {
            _ = try await NegativeTests.verifier(fixture, policy: policy).verify(request, body: nil)
        }
    }

    @Test func sixtyFourDistinctComponentsAreAcceptedAndARepeatIsRefused() async throws {
        let fixture = try SigningFixture.make(.ed25519)
        let names = (0..<64).map { SignatureComponent("x-h\($0)") }
        var request = HTTPTestSupport.sampleRequest()
        for index in 0..<64 { request.headerFields[HTTPField.Name("x-h\(index)")!] = "\(index)" }
        var signer = NegativeTests.signer(fixture)
        signer.components = names
        try await signer.sign(&request)
        var policy = HTTPSignaturePolicy()
        policy.requiredComponents = []
        _ = try await NegativeTests.verifier(fixture, policy: policy).verify(request, body: nil)
        #expect(throws: HTTPSignatureError.self) { try SignatureInput.checkDistinct(names + [names[40]], field: "Signature-Input") }
    }

    @Test func aContentDigestOfThousandsOfMembersIsRefused() {
        let many = (0..<1000).map { "x\($0)=:AAAA:" }.joined(separator: ", ")
        #expect(throws: HTTPSignatureError.tooLarge(what: "the Content-Digest field", limit: 4096)) { try ContentDigest.parse(many) }
        let fitting = (0..<100).map { "x\($0)=:A:" }.joined(separator: ",")
        #expect(throws: HTTPSignatureError.tooLarge(what: "the number of Content-Digest members", limit: 16)) { try ContentDigest.parse(fitting) }
    }

    @Test("thousands of parameters on a signature or a component are refused", arguments: ["signature", "component"])
    func parameterBombs(on target: String) async throws {
        let fixture = try SigningFixture.make(.ed25519)
        let bomb = (0..<1500).map { ";p\($0)" }.joined()
        var request = HTTPTestSupport.sampleRequest()
        request.headerFields[.signatureInput] = target == "signature"
            ? "sig1=(\"@method\");created=\(HTTPTestSupport.now);keyid=\"client-1\"\(bomb)"
            : "sig1=(\"@method\"\(bomb));created=\(HTTPTestSupport.now);keyid=\"client-1\""
        request.headerFields[.signature] = "sig1=:AAAA:"
        var policy = HTTPSignaturePolicy()
        policy.maximumFieldBytes = 1 << 20
        await #expect(throws: HTTPSignatureError.tooLarge(what: "the number of parameters of one component or signature", limit: 16)) {
            _ = try await NegativeTests.verifier(fixture, policy: policy).verify(request, body: nil)
        }
        #expect(request.headerFields.signatureLabels(maximumSignatures: 8, maximumFieldBytes: 1 << 20).isEmpty)
    }
}
