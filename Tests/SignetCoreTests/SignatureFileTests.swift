import SignetCore
import Testing

/// Signature files: raw bytes as openssl writes them, or their base64, told apart by content.
@Suite("signature files: raw or base64")
struct SignatureFileTests {
    static let raw: [UInt8] = (0..<64).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 200) }

    @Test("raw bytes stay raw; base64 text (with line breaks, CRLF, spaces) is decoded")
    func detect() throws {
        #expect(try FileSignature.decodeSignatureFile(Self.raw, source: "s") == Self.raw)
        let text = Base64.encode(Self.raw)
        for variant in [text, text + "\n", String(text.prefix(40)) + "\r\n" + String(text.dropFirst(40)) + "\r\n", " " + text] {
            #expect(try FileSignature.decodeSignatureFile(Array(variant.utf8), source: "s") == Self.raw, "\(variant.debugDescription)")
        }
        // Text that looks like base64 but does not decode is taken as raw bytes (and then fails verification).
        #expect(try FileSignature.decodeSignatureFile(Array("abc".utf8), source: "s") == Array("abc".utf8))
    }

    @Test("an empty file, and text that is not base64 when base64 is required, are refused with the file named")
    func refusals() {
        #expect(throws: SignetCoreError.malformed(source: "sig", detail: "the signature file is empty")) {
            try FileSignature.decodeSignatureFile([], source: "sig")
        }
        #expect(throws: SignetCoreError.malformed(source: "sig", detail: "not valid base64")) {
            try FileSignature.decodeSignatureFile(Self.raw, source: "sig", encoding: .base64)
        }
        #expect(throws: SignetCoreError.malformed(source: "sig", detail: "not valid base64")) {
            try FileSignature.decodeSignatureFile(Array("abc".utf8), source: "sig", encoding: .base64)
        }
    }
}
