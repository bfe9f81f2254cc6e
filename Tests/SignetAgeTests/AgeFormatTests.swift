import Crypto
import Foundation
@testable import SignetAge
import SignetCore
import SignetTestSupport
import Testing

/// The age v1 format itself (header, MAC, STREAM payload) with a test-only recipient whose
/// stanza carries the file key in the clear: round trips at the chunk boundaries, checked
/// against an independent opener, and every refusal the header and payload rules call for.
@Suite("age format")
struct AgeFormatTests {
    static let chunk = 64 * 1024
    static let sizes = [0, 1, chunk - 1, chunk, chunk + 1, 3 * chunk, (1 << 20) + 123]

    @Test("round trips at the chunk boundaries, in the layout the spec gives", arguments: AgeFormatTests.sizes)
    func roundTrip(size: Int) throws {
        let plaintext = patternBytes(size)
        let file = try AgeEncryptor(recipients: [PlainRecipient()]).encrypt(plaintext)
        let header = try #require(HandMade.headerLength(file))
        let chunks = max(1, (size + Self.chunk - 1) / Self.chunk)
        #expect(file.count == header + 16 + size + 16 * chunks)

        let independent = try HandMade.open(file)
        #expect(independent.plaintext == plaintext)
        #expect(independent.chunks == chunks)
        #expect(try AgeDecryptor(identities: [PlainIdentity()]).decrypt(file, source: "f.age") == plaintext)
        // A reader that hands out odd little pieces: the buffering must not change anything.
        let streamed = streamingDecrypt(file, piece: 1000)
        #expect(streamed.error == nil)
        #expect(streamed.written == plaintext)
    }

    @Test("streaming encryption reads odd pieces, seals batches in order and writes bounded pieces")
    func streamingEncryption() throws {
        let plaintext = patternBytes(5 * (1 << 20) + 17, seed: 11)
        var offset = 0
        var file: [UInt8] = []
        var largestWrite = 0
        try AgeEncryptor(recipients: [PlainRecipient()]).encrypt(
            read: { buffer in
                let count = min(buffer.count, 40_000, plaintext.count - offset)
                buffer.copyBytes(from: plaintext[offset..<(offset + count)])
                offset += count
                return count
            },
            write: { piece in
                largestWrite = max(largestWrite, piece.count)
                file += piece
            })
        #expect(try HandMade.open(file).plaintext == plaintext)
        // At most one sealed chunk, or the header, at a time: memory stays bounded.
        #expect(largestWrite <= Self.chunk + 16 + 4096)
    }

    @Test("two files of the same plaintext differ (fresh file key and nonce), and several recipients each open it")
    func freshKeysAndRecipients() throws {
        let encryptor = try AgeEncryptor(recipients: [PlainRecipient(), PlainRecipient()])
        let first = try encryptor.encrypt(Array("same".utf8))
        let second = try encryptor.encrypt(Array("same".utf8))
        #expect(first != second)
        #expect(String(decoding: first.prefix(22), as: UTF8.self) == "age-encryption.org/v1\n")
        #expect(try AgeDecryptor(identities: [PlainIdentity()]).decrypt(first, source: "f.age") == Array("same".utf8))
    }

    @Test("the encryptor refuses no recipient, and a passphrase with another recipient")
    func encryptorArguments() throws {
        let none = try thrown(AgeError.self) { try AgeEncryptor(recipients: []) }
        expectError(none, is: "invalidArgument", mentioning: ["recipient"])
        let mixed = try thrown(AgeError.self) { try AgeEncryptor(recipients: [PlainRecipient(passphrase: true), PlainRecipient()]) }
        expectError(mixed, is: "invalidArgument", mentioning: ["passphrase"])
        _ = try AgeEncryptor(recipients: [PlainRecipient(passphrase: true)])
    }

    @Test("the hand-made baseline decrypts, so each refusal below is caused by its one change")
    func handMadeBaseline() throws {
        let file = HandMade.file([(Array("age".utf8), true)])
        #expect(try AgeDecryptor(identities: [PlainIdentity()]).decrypt(file, source: "f.age") == Array("age".utf8))
        let parsed = try AgeHeader.parse(file, source: "f.age")
        #expect(parsed.stanzas == [AgeStanza(type: "test", arguments: [], body: HandMade.fileKey)])
        // Encoding the parsed stanzas gives the same bytes back.
        #expect(try AgeHeader.encode(stanzas: parsed.stanzas, fileKey: SecretBytes(HandMade.fileKey)) == HandMade.standardHeader)
    }

    // MARK: Header rules

    /// A file whose header lines (before `---`) are `lines`, with a valid MAC and payload.
    private func file(header lines: String) -> [UInt8] {
        HandMade.header(lines) + HandMade.payload([(Array("age".utf8), true)])
    }

    private let version = "age-encryption.org/v1\n"

    @Test("stanza bodies: padded, non-canonical, over 64 columns, without their short last line, or a short line too many")
    func bodyRules() throws {
        let key = HandMade.b64(HandMade.fileKey)  // 22 characters; the last has 4 unused bits
        try expectRefusal(file(header: version + "-> test\n" + key + "==\n"), "malformedHeader", mentioning: ["base64"])
        var characters = Array(key.utf8)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        characters[21] = alphabet[alphabet.firstIndex(of: characters[21])! | 1]
        try expectRefusal(file(header: version + "-> test\n" + String(decoding: characters, as: UTF8.self) + "\n"), "malformedHeader", mentioning: ["canonical"])
        let full = String(repeating: "A", count: 64)
        try expectRefusal(file(header: version + HandMade.testStanza + "-> x\n" + full + "AAAA\n\n"), "malformedHeader", mentioning: ["64"])
        try expectRefusal(file(header: version + HandMade.testStanza + "-> x\n" + full + "\n"), "malformedHeader", mentioning: ["shorter than 64"])
        try expectRefusal(file(header: version + "-> x\n" + full + "\n" + HandMade.testStanza), "malformedHeader", mentioning: ["shorter than 64"])
        try expectRefusal(file(header: version + HandMade.testStanza + "-> x\nAAAA\nAAAA\n"), "malformedHeader", mentioning: ["stanza"])
        try expectRefusal(file(header: version + HandMade.testStanza + "-> x\n"), "malformedHeader")
        try expectRefusal(file(header: version + HandMade.testStanza + "-> x\nAAAA\rAAA\n"), "malformedHeader", mentioning: ["base64"])
        // A body that fills its lines ends with an empty line, and decodes.
        let ninetySix = version + HandMade.testStanza + "-> x\n" + full + "\n" + full + "\n\n"
        #expect(try AgeHeader.parse(file(header: ninetySix), source: "f").stanzas[1].body == [UInt8](repeating: 0, count: 96))
        #expect(try AgeDecryptor(identities: [PlainIdentity()]).decrypt(file(header: ninetySix), source: "f") == Array("age".utf8))
    }

    @Test("stanza arguments: empty, non-VCHAR, none at all, over the line bound; every VCHAR is fine")
    func argumentRules() throws {
        try expectRefusal(file(header: version + HandMade.testStanza + "-> x  y\n\n"), "malformedHeader", mentioning: ["argument"])
        try expectRefusal(file(header: version + HandMade.testStanza + "-> x y \n\n"), "malformedHeader", mentioning: ["argument"])
        try expectRefusal(file(header: version + HandMade.testStanza + "-> x \u{E8}\n\n"), "malformedHeader", mentioning: ["argument"])
        try expectRefusal(file(header: version + HandMade.testStanza + "-> x\ty\n\n"), "malformedHeader", mentioning: ["argument"])
        try expectRefusal(file(header: version + HandMade.testStanza + "->\n\n"), "malformedHeader", mentioning: ["argument"])
        try expectRefusal(file(header: version + HandMade.testStanza + "-> \n\n"), "malformedHeader", mentioning: ["argument"])
        try expectRefusal(file(header: version + HandMade.testStanza + "->x\n\n"), "malformedHeader")
        try expectRefusal(file(header: version + HandMade.testStanza + "-- x\n\n"), "malformedHeader", mentioning: ["stanza"])
        let long = String(repeating: "a", count: AgeHeader.maximumArgumentLineLength)
        try expectRefusal(file(header: version + HandMade.testStanza + "-> x " + long + "\n\n"), "malformedHeader", mentioning: ["longer than"])
        let visible = (0x21...0x7E).map { String(UnicodeScalar(UInt8($0))) }.joined()
        let grease = version + "-> " + visible + " " + visible + "\n\n" + HandMade.testStanza
        #expect(try AgeDecryptor(identities: [PlainIdentity()]).decrypt(file(header: grease), source: "f") == Array("age".utf8))
    }

    @Test("the version line, CR LF, no stanza, too many stanzas, a header over its size bound")
    func headerShape() throws {
        try expectRefusal([], "malformedHeader", mentioning: ["empty"])
        try expectRefusal(file(header: "age-encryption.org/v2\n" + HandMade.testStanza), "unsupported", mentioning: ["v2"])
        try expectRefusal(file(header: "age-encryption.org/v1 \n" + HandMade.testStanza), "malformedHeader", mentioning: ["line 1"])
        try expectRefusal(file(header: "age-encryption.org/v1\r\n" + HandMade.testStanza), "malformedHeader", mentioning: ["CR"])
        let crlf = (version + HandMade.testStanza).replacingOccurrences(of: "\n", with: "\r\n")
        try expectRefusal(file(header: crlf), "malformedHeader")
        try expectRefusal(file(header: version), "malformedHeader", mentioning: ["no recipient stanza"])
        let many = version + HandMade.testStanza + String(repeating: "-> x\n\n", count: AgeHeader.maximumStanzas)
        try expectRefusal(file(header: many), "malformedHeader", mentioning: ["\(AgeHeader.maximumStanzas) stanzas"])
        let bulky = String(repeating: String(repeating: "A", count: 64) + "\n", count: 200) + "\n"
        let huge = version + HandMade.testStanza + String(repeating: "-> x\n" + bulky, count: 90)
        try expectRefusal(file(header: huge), "malformedHeader", mentioning: ["larger than \(AgeHeader.maximumSize)"])
        // Binary garbage and a truncated header.
        try expectRefusal(patternBytes(300_000), "malformedHeader")
        try expectRefusal(Array(HandMade.standardHeader.prefix(30)), "malformedHeader")
    }

    @Test("the MAC line: missing, no space, two spaces, trailing space, truncated, padded, non-canonical")
    func macLineRules() throws {
        let body = Array((version + HandMade.testStanza).utf8)
        let payload = HandMade.payload([(Array("age".utf8), true)])
        let mac = HandMade.b64(HandMade.mac(over: body + Array("---".utf8)))
        func variant(_ line: String) -> [UInt8] { body + Array(line.utf8) + payload }
        try expectRefusal(body, "malformedHeader", mentioning: ["MAC"])
        try expectRefusal(variant("---" + mac + "\n"), "malformedHeader", mentioning: ["MAC"])
        try expectRefusal(variant("---  " + mac + "\n"), "malformedHeader", mentioning: ["MAC"])
        try expectRefusal(variant("--- " + mac + " \n"), "malformedHeader", mentioning: ["MAC"])
        try expectRefusal(variant("--- " + String(mac.prefix(20)) + "\n"), "malformedHeader", mentioning: ["MAC"])
        try expectRefusal(variant("--- " + mac + "=\n"), "malformedHeader", mentioning: ["MAC"])
        try expectRefusal(variant("--- " + mac + "AAA\n"), "malformedHeader", mentioning: ["MAC"])
        try expectRefusal(variant("---\n"), "malformedHeader", mentioning: ["MAC"])
        var characters = Array(mac.utf8)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        characters[42] = alphabet[alphabet.firstIndex(of: characters[42])! ^ 1]  // the last character's unused bit
        try expectRefusal(variant("--- " + String(decoding: characters, as: UTF8.self) + "\n"), "malformedHeader", mentioning: ["canonical"])
        #expect(try AgeDecryptor(identities: [PlainIdentity()]).decrypt(variant("--- " + mac + "\n"), source: "f") == Array("age".utf8))
    }

    @Test("a wrong MAC and an altered header are refused before the payload is touched")
    func macMismatch() throws {
        let wrongKey = HandMade.header(version + HandMade.testStanza, macKey: [UInt8](repeating: 9, count: 16))
        try expectRefusal(wrongKey + HandMade.payload([(Array("age".utf8), true)]), "headerMACMismatch")
        // A stanza added after the MAC was computed; the payload is garbage, which is never reached.
        let original = HandMade.standardHeader
        let cut = original.count - 48
        let altered = Array(original[0..<cut]) + Array("-> grease\n\n".utf8) + Array(original[cut...])
        try expectRefusal(altered + patternBytes(100), "headerMACMismatch")
    }

    @Test("scrypt stanzas stand alone; no matching identity names the stanza types; the nonce must be whole")
    func stanzaSetRules() throws {
        let scrypt = "-> scrypt AAAAAAAAAAAAAAAAAAAAAA 10\n" + HandMade.b64([UInt8](repeating: 0, count: 32)) + "\n"
        try expectRefusal(file(header: version + scrypt + HandMade.testStanza), "malformedHeader", mentioning: ["scrypt"])
        try expectRefusal(file(header: version + "-> other one\n\n-> X25519 abc\n\n"), "noMatchingIdentity", mentioning: ["other", "X25519"])
        try expectRefusal(HandMade.file([(Array("age".utf8), true)]), "noMatchingIdentity", mentioning: ["no identity"], identities: [])
        try expectRefusal(HandMade.standardHeader, "malformedHeader", mentioning: ["nonce"])
        try expectRefusal(HandMade.standardHeader + Array(HandMade.nonce.prefix(12)), "malformedHeader", mentioning: ["nonce"])
    }

    // MARK: Payload rules

    @Test("truncation at every chunk boundary and inside every chunk is refused, releasing only whole authenticated chunks")
    func truncation() throws {
        let plaintext = patternBytes(3 * Self.chunk + 100)
        let file = try AgeEncryptor(recipients: [PlainRecipient()]).encrypt(plaintext)
        let start = try #require(HandMade.headerLength(file)) + 16
        let sealed = Self.chunk + 16
        for boundary in 0...3 {
            let cut = Array(file[0..<(start + boundary * sealed)])
            let outcome = streamingDecrypt(cut)
            let error = try #require(outcome.error)
            expectError(error, is: "payloadInvalid", mentioning: [boundary == 0 ? "no chunk" : "not flagged last"])
            #expect(outcome.written == Array(plaintext.prefix(boundary * Self.chunk)))
        }
        for chunkIndex in 0...3 {
            let length = chunkIndex == 3 ? 116 : sealed
            for inside in [1, 15, 16, 17, length / 2, length - 1] {
                let outcome = streamingDecrypt(Array(file[0..<(start + chunkIndex * sealed + inside)]))
                let error = try #require(outcome.error)
                expectError(error, is: "payloadInvalid", mentioning: ["chunk \(chunkIndex + 1)"])
                #expect(outcome.written == Array(plaintext.prefix(chunkIndex * Self.chunk)))
            }
        }
    }

    @Test("last flags: a final chunk not flagged, a flagged chunk followed by more, an empty final chunk after data")
    func lastFlags() throws {
        let full = patternBytes(Self.chunk)
        let short = Array("tail".utf8)
        try expectRefusal(HandMade.file([(short, false)]), "payloadInvalid", mentioning: ["not flagged last"])
        try expectRefusal(HandMade.file([(full, false), (short, false)]), "payloadInvalid", mentioning: ["not flagged last"])
        try expectRefusal(HandMade.file([(full, false)]), "payloadInvalid", mentioning: ["not flagged last"])
        try expectRefusal(HandMade.file([(full, true), (short, true)]), "payloadInvalid", mentioning: ["flagged last"])
        try expectRefusal(HandMade.file([(full, true), (short, false)]), "payloadInvalid", mentioning: ["flagged last"])
        try expectRefusal(HandMade.file([(short, true), (short, true)]), "payloadInvalid", mentioning: ["authenticate"])
        try expectRefusal(HandMade.file([(full, false), ([], true)]), "payloadInvalid", mentioning: ["empty"])
        // What the spec allows: an empty file's single empty chunk, and a full final chunk.
        let decryptor = AgeDecryptor(identities: [PlainIdentity()])
        #expect(try decryptor.decrypt(HandMade.file([([], true)]), source: "f").isEmpty)
        #expect(try decryptor.decrypt(HandMade.file([(full, false), (full, true)]), source: "f") == full + full)
    }

    @Test("appended bytes, reordered or altered chunks, and an altered nonce are refused; nothing unauthenticated is written")
    func tampering() throws {
        let plaintext = patternBytes(3 * Self.chunk)
        let file = try AgeEncryptor(recipients: [PlainRecipient()]).encrypt(plaintext)
        let start = try #require(HandMade.headerLength(file)) + 16
        let sealed = Self.chunk + 16
        for extra in [1, 15, 16, 17, 1000] {
            let outcome = streamingDecrypt(file + patternBytes(extra, seed: 3))
            expectError(try #require(outcome.error), is: "payloadInvalid", mentioning: ["data follows chunk 3"])
        }
        let small = try AgeEncryptor(recipients: [PlainRecipient()]).encrypt(Array("short".utf8))
        try expectRefusal(small + [0], "payloadInvalid", mentioning: ["authenticate"])

        var swapped = file
        swapped.replaceSubrange((start + sealed)..<(start + 2 * sealed), with: file[start..<(start + sealed)])
        let reordered = streamingDecrypt(swapped)
        expectError(try #require(reordered.error), is: "payloadInvalid", mentioning: ["chunk 2"])
        #expect(reordered.written == Array(plaintext.prefix(Self.chunk)))

        let altered = streamingDecrypt(TestBytes.flipped(file, at: start + sealed + 500))
        expectError(try #require(altered.error), is: "payloadInvalid", mentioning: ["chunk 2"])
        #expect(altered.written == Array(plaintext.prefix(Self.chunk)))

        let nonce = streamingDecrypt(TestBytes.flipped(file, at: start - 1))
        expectError(try #require(nonce.error), is: "payloadInvalid", mentioning: ["chunk 1"])
        #expect(nonce.written.isEmpty)
    }

    // MARK: I/O and codes

    @Test("errors thrown by the caller's reader and writer become io errors naming the input and the output")
    func callerErrors() throws {
        struct Broken: Error, CustomStringConvertible { var description: String { "the disk is on fire" } }
        let encryptor = try AgeEncryptor(recipients: [PlainRecipient()])
        let reading = try thrown(AgeError.self) { try encryptor.encrypt(read: { _ in throw Broken() }, write: { _ in }) }
        #expect(reading == .io(path: "input", detail: "the disk is on fire"))
        let writing = try thrown(AgeError.self) { try encryptor.encrypt(read: { _ in 0 }, write: { _ in throw Broken() }) }
        #expect(writing == .io(path: "output", detail: "the disk is on fire"))

        let file = try encryptor.encrypt(Array("secret".utf8))
        let decryptor = AgeDecryptor(identities: [PlainIdentity()])
        let source = try thrown(AgeError.self) {
            try decryptor.decrypt(read: { _ in throw Broken() }, write: { _ in }, source: "in.age")
        }
        #expect(source == .io(path: "in.age", detail: "the disk is on fire"))
        let sink = try thrown(AgeError.self) {
            var offset = 0
            try decryptor.decrypt(
                read: { buffer in
                    let count = min(buffer.count, file.count - offset)
                    buffer.copyBytes(from: file[offset..<(offset + count)])
                    offset += count
                    return count
                }, write: { _ in throw SignetCoreError.io(path: "out.txt", detail: "no space left on the device") }, source: "in.age")
        }
        #expect(sink == .io(path: "out.txt", detail: "no space left on the device"))
    }

    @Test("one code per AgeError case, named after it, in the age domain; messages name no flag")
    func stableCodes() {
        let samples: [(AgeError, String)] = [
            (.malformedHeader(source: "s", detail: "d"), "malformedHeader"), (.headerMACMismatch(source: "s"), "headerMACMismatch"),
            (.noMatchingIdentity(source: "s", detail: "d"), "noMatchingIdentity"), (.wrongPassphrase(source: "s"), "wrongPassphrase"),
            (.stanzaDoesNotOpen(source: "s", detail: "d"), "stanzaDoesNotOpen"),
            (.payloadInvalid(source: "s", detail: "d"), "payloadInvalid"), (.invalidKey(source: "s", detail: "d"), "invalidKey"),
            (.workFactorTooHigh(source: "s", logN: 30, maximum: 22), "workFactorTooHigh"),
            (.unsupported(source: "s", detail: "d"), "unsupported"), (.invalidArgument(detail: "d"), "invalidArgument"),
            (.io(path: "p", detail: "d"), "io"),
        ]
        expectStableCodes(samples, domain: "age")
    }
}
