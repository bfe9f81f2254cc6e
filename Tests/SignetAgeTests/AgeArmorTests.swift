import Foundation
@testable import SignetAge
import SignetCore
import SignetTestSupport
import Testing

/// The ASCII armor: what the encoder writes (checked with Foundation's base64, not ours), and
/// the strict decoder's refusals.
@Suite("age armor")
struct AgeArmorTests {
    static let begin = "-----BEGIN AGE ENCRYPTED FILE-----"
    static let end = "-----END AGE ENCRYPTED FILE-----"

    /// The size of a binary file of no plaintext: the header is of fixed length with the test recipient.
    private func emptyFileSize() throws -> Int {
        try AgeEncryptor(recipients: [PlainRecipient()]).encrypt([]).count
    }

    private func armored(_ plaintext: [UInt8]) throws -> String {
        String(decoding: try AgeEncryptor(recipients: [PlainRecipient()], armor: true).encrypt(plaintext), as: UTF8.self)
    }

    /// The armored file of a plaintext of `size` bytes, as lines (the LF after END gives a last empty one).
    private func armoredLines(_ size: Int) throws -> (lines: [String], plaintext: [UInt8]) {
        let plaintext = patternBytes(size, seed: UInt64(size))
        return (try armored(plaintext).components(separatedBy: "\n"), plaintext)
    }

    private func join(_ lines: [String]) -> [UInt8] { Array(lines.joined(separator: "\n").utf8) }

    @Test("the encoder writes strict PEM: full 64-column lines, a shorter last one, or END right after a full one")
    func encoderLayout() throws {
        let base = try emptyFileSize()
        let aligned = (48 - base % 48) % 48  // plaintext sizes giving a binary file of whole lines
        for size in [0, aligned, aligned + 1, aligned + 2, aligned + 48 * 3, 70_000, 3 * 65_536 + aligned] {
            let (lines, plaintext) = try armoredLines(size)
            #expect(lines.first == Self.begin)
            #expect(lines.suffix(2) == [Self.end, ""])
            let body = Array(lines.dropFirst().dropLast(2))
            #expect(body.dropLast().allSatisfy { $0.count == 64 }, "size \(size)")
            #expect((1...64).contains(body.last?.count ?? 0), "size \(size)")
            let binary = try #require(Data(base64Encoded: body.joined()), "size \(size)")
            #expect((binary.count % 48 == 0) == (body.last?.count == 64), "size \(size)")
            #expect(try HandMade.open(Array(binary)).plaintext == plaintext, "size \(size)")
            #expect(try AgeDecryptor(identities: [PlainIdentity()]).decrypt(join(lines), source: "a.age") == plaintext)
            let streamed = streamingDecrypt(join(lines), piece: 7)
            #expect(streamed.error == nil)
            #expect(streamed.written == plaintext)
        }
    }

    @Test("CR LF line ends and white space before BEGIN and after END are accepted")
    func tolerated() throws {
        let (lines, plaintext) = try armoredLines(100)
        let decryptor = AgeDecryptor(identities: [PlainIdentity()])
        let crlf = Array(lines.joined(separator: "\r\n").utf8)
        #expect(try decryptor.decrypt(crlf, source: "a.age") == plaintext)
        let padded = Array("\n\r   \t\n".utf8) + join(lines) + Array("\n\r   \t\n".utf8)
        #expect(try decryptor.decrypt(padded, source: "a.age") == plaintext)
        let noFinalNewline = join(Array(lines.dropLast()))
        #expect(try decryptor.decrypt(noFinalNewline, source: "a.age") == plaintext)
    }

    @Test("column width: lines wider than 64, or a short line that is not the last")
    func columnWidth() throws {
        let (lines, _) = try armoredLines(500)
        let body = lines.dropFirst().dropLast(2).joined()
        func wrapped(_ width: Int) -> [String] {
            var rows: [String] = []
            var rest = Substring(body)
            while !rest.isEmpty {
                rows.append(String(rest.prefix(width)))
                rest = rest.dropFirst(width)
            }
            return [Self.begin] + rows + [Self.end, ""]
        }
        try expectRefusal(join(wrapped(76)), "malformedHeader", mentioning: ["longer than 64"])
        try expectRefusal(join(wrapped(60)), "malformedHeader", mentioning: ["shorter than 64"])
        var spaced = lines
        spaced[1] += " "
        try expectRefusal(join(spaced), "malformedHeader", mentioning: ["armor line 2"])
        var indented = lines
        indented[2] = " " + indented[2]
        try expectRefusal(join(indented), "malformedHeader", mentioning: ["armor line 3"])
    }

    @Test("padding: missing, too much, inside a line, split across lines; non-canonical trailing bits")
    func padding() throws {
        let base = try emptyFileSize()
        // A binary size of 1 modulo 3 ends the armor with "==".
        let size = (3 - (base - 1) % 3) % 3 + 30
        let (lines, _) = try armoredLines(size)
        let last = lines.count - 3
        #expect(lines[last].hasSuffix("=="))

        var missing = lines
        missing[last] = String(missing[last].dropLast(2))
        try expectRefusal(join(missing), "malformedHeader", mentioning: ["base64"])
        var extra = lines
        extra[last] += "="
        try expectRefusal(join(extra), "malformedHeader", mentioning: ["base64"])
        var split = lines
        split[last] = String(split[last].dropLast(1))
        split.insert("=", at: last + 1)
        try expectRefusal(join(split), "malformedHeader")
        var early = lines
        early[1] = String(early[1].dropLast(4)) + "AA=="
        try expectRefusal(join(early), "malformedHeader", mentioning: ["shorter than 64"])

        var characters = Array(lines[last].utf8)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        let index = characters.count - 3  // the character before "==", which has 4 unused bits
        characters[index] = alphabet[alphabet.firstIndex(of: characters[index])! | 1]
        var noncanonical = lines
        noncanonical[last] = String(decoding: characters, as: UTF8.self)
        try expectRefusal(join(noncanonical), "malformedHeader", mentioning: ["canonical"])
    }

    @Test("around the armor: garbage before or after, too much white space, no END, empty lines, headers, another label")
    func surroundings() throws {
        let (lines, _) = try armoredLines(200)
        try expectRefusal(Array("garbage\n".utf8) + join(lines), "malformedHeader")
        try expectRefusal(Array("  ".utf8) + join(lines), "malformedHeader", mentioning: ["BEGIN"])
        try expectRefusal(join(lines) + Array("garbage\n".utf8), "malformedHeader", mentioning: ["after the END line"])
        try expectRefusal(join(lines) + [UInt8](repeating: 0x20, count: 2000), "malformedHeader", mentioning: ["white space"])
        try expectRefusal([UInt8](repeating: 0x0A, count: 2000) + join(lines), "malformedHeader")
        try expectRefusal(join(Array(lines.dropLast(2))), "malformedHeader", mentioning: ["END"])
        var emptyInside = lines
        emptyInside.insert("", at: 2)
        try expectRefusal(join(emptyInside), "malformedHeader", mentioning: ["empty line"])
        var emptyBeforeEnd = lines
        emptyBeforeEnd.insert("", at: lines.count - 2)
        try expectRefusal(join(emptyBeforeEnd), "malformedHeader")
        var headers = lines
        headers.insert(contentsOf: ["Version: 1", ""], at: 1)
        try expectRefusal(join(headers), "malformedHeader")
        var label = lines
        label[0] = "-----BEGIN AGE ENCRYPTED MESSAGE-----"
        try expectRefusal(join(label), "malformedHeader", mentioning: ["BEGIN"])
        var lowercase = lines
        lowercase[lines.count - 2] = "-----END age ENCRYPTED FILE-----"
        try expectRefusal(join(lowercase), "malformedHeader")
        try expectRefusal(Array((Self.begin + "\n" + Self.end + "\n").utf8), "malformedHeader", mentioning: ["empty"])
    }
}
