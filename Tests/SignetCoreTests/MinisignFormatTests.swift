import Foundation
import SignetCore
import SignetTestSupport
import Testing

@Suite("minisign formats: files made by minisign 0.11, and refusals")
struct MinisignFormatTests {
    @Test("a public key file parses, names its key id as minisign does, and is written back byte for byte")
    func publicKeyFile() throws {
        let fixture = try MinisignFixture.load()
        let key = try MinisignPublicKey(fileContents: Array(text: fixture.publicKey), source: "u.pub")
        #expect(fixture.publicKey.hasPrefix("untrusted comment: minisign public key \(key.keyID)\n"))
        #expect(key.fileContents == fixture.publicKey)
        let inline = try MinisignPublicKey(base64: String(fixture.publicKey.split(separator: "\n")[1]))
        #expect(inline == key)
        #expect(key.publicKey.kind == .ed25519)
        #expect(key.rawKey.count == 32)
    }

    @Test("minisign's unencrypted secret key (zero checksum) matches its public key and re-encodes")
    func unencryptedSecretKey() throws {
        let fixture = try MinisignFixture.load()
        let file = try MinisignSecretKeyFile(fileContents: Array(text: fixture.secretKey), source: "u.key")
        #expect(!file.isEncrypted)
        let key = try file.decrypt(passphrase: nil)
        let publicKey = try MinisignPublicKey(fileContents: Array(text: fixture.publicKey), source: "u.pub")
        #expect(key.publicKey == publicKey)
        // Written with a real checksum, which minisign ignores for unencrypted keys and we check.
        let rewritten = try key.fileContents(passphrase: nil)
        let again = try MinisignSecretKeyFile(fileContents: rewritten, source: "rewritten").decrypt(passphrase: nil)
        #expect(again.publicKey == publicKey)
    }

    @Test("minisign's signatures parse: prehashed with a trusted comment, and legacy")
    func signatureFiles() throws {
        let fixture = try MinisignFixture.load()
        let hashed = try MinisignSignature(fileContents: Array(text: fixture.prehashedSignature), source: "hashed.minisig")
        #expect(hashed.algorithm == .prehashed)
        #expect(hashed.trustedCommentText == fixture.trustedComment)
        #expect(String(decoding: hashed.untrustedComment, as: UTF8.self) == MinisignFile.defaultUntrustedComment)
        #expect(hashed.fileContents == Array(text: fixture.prehashedSignature))
        let legacy = try MinisignSignature(fileContents: Array(text: fixture.legacySignature), source: "legacy.minisig")
        #expect(legacy.algorithm == .legacy)
        #expect(legacy.trustedCommentText.hasPrefix("timestamp:"))
        #expect(!legacy.trustedCommentText.hasSuffix("\thashed"))
        #expect(legacy.keyID == hashed.keyID)
    }

    @Test("CRLF line endings and a missing final newline are read as minisign reads them")
    func lineEndings() throws {
        let fixture = try MinisignFixture.load()
        let crlf = fixture.prehashedSignature.replacingOccurrences(of: "\n", with: "\r\n")
        let parsed = try MinisignSignature(fileContents: Array(text: crlf), source: "crlf")
        #expect(parsed.trustedCommentText == fixture.trustedComment)
        let bare = String(fixture.publicKey.dropLast())
        #expect(try MinisignPublicKey(fileContents: Array(text: bare), source: "bare") ==
            MinisignPublicKey(fileContents: Array(text: fixture.publicKey), source: "pub"))
    }

    @Test("the key id prints as minisign prints it: the bytes as a little-endian number")
    func keyIDDescription() throws {
        let id = try #require(MinisignKeyID(bytes: [0x9e, 0xf0, 0x58, 0x4e, 0x3c, 0x98, 0x2f, 0x3c]))
        #expect(id.description == "3C2F983C4E58F09E")
        // minisign prints with %PRIX64: no leading zeros (a 0F… id has 15 digits).
        let leadingZero = try #require(MinisignKeyID(bytes: [0x83, 0xe1, 0xae, 0xda, 0x06, 0x0b, 0x31, 0x0f]))
        #expect(leadingZero.description == "F310B06DAAEE183")
        #expect(MinisignKeyID(bytes: [0, 0, 0, 0, 0, 0, 0, 0])?.description == "0")
        #expect(MinisignKeyID(bytes: [1, 0, 0, 0, 0, 0, 0, 0])?.description == "1")
        #expect(MinisignKeyID(bytes: [1, 2, 3]) == nil)
    }

    @Test("libsodium's parameter choice: minisign's limits give N=2^20, r=8, p=1")
    func scryptParameters() {
        #expect(MinisignKDFParameters.sensitive.scrypt == (20, 8, 1))
        // libsodium's INTERACTIVE limits.
        #expect(MinisignKDFParameters(opsLimit: 524_288, memLimit: 16_777_216).scrypt == (14, 8, 1))
        // The opslimit floor of 32768, in the ops-bound branch.
        #expect(MinisignKDFParameters(opsLimit: 1, memLimit: 1 << 30).scrypt == (10, 8, 1))
        #expect(cheapKDF.scrypt == (10, 8, 1))
        // Memory-bound branch with room for p > 1.
        #expect(MinisignKDFParameters(opsLimit: 1 << 24, memLimit: 1 << 20).scrypt == (10, 8, 512))
    }
}

@Suite("minisign formats: hostile and damaged files are refused precisely")
struct MinisignParserRefusalTests {
    static func fixture() throws -> MinisignFixture { try MinisignFixture.load() }

    /// Replaces line `index` (0-based) of `text`.
    static func replacing(line index: Int, of text: String, with replacement: String) -> [UInt8] {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        lines[index] = replacement
        return Array(text: lines.joined(separator: "\n"))
    }

    /// Re-encodes the base64 line `index` after `change` edits its bytes.
    static func editing(line index: Int, of text: String, _ change: (inout [UInt8]) -> Void) throws -> [UInt8] {
        let lines = text.split(separator: "\n").map(String.init)
        var bytes = try #require(Base64.decode(lines[index]))
        change(&bytes)
        return replacing(line: index, of: text, with: Base64.encode(bytes))
    }

    @Test("signature files: truncated, missing trusted comment, bad base64, wrong algorithm, oversized lines, extra content")
    func signatureRefusals() throws {
        let text = try Self.fixture().prehashedSignature
        let lines = text.split(separator: "\n").map(String.init)
        let parse = { (bytes: [UInt8]) throws -> Void in _ = try MinisignSignature(fileContents: bytes, source: "s.minisig") }
        expectMinisignError(.malformedInput, "s.minisig", "truncated") { try parse(Array(text: lines[0...1].joined(separator: "\n") + "\n")) }
        expectMinisignError(.malformedInput, "truncated") { try parse([]) }
        expectMinisignError(.malformedInput, "trusted comment is missing") {
            try parse(Self.replacing(line: 2, of: text, with: "comment: " + (try Self.fixture().trustedComment)))
        }
        expectMinisignError(.malformedInput, "line 1", "untrusted comment: ") { try parse(Self.replacing(line: 0, of: text, with: "hello")) }
        expectMinisignError(.malformedInput, "line 2", "base64") { try parse(Self.replacing(line: 1, of: text, with: "RUS*not base64*")) }
        expectMinisignError(.malformedInput, "line 2", "base64") { try parse(Self.replacing(line: 1, of: text, with: String(lines[1].dropLast(4)))) }
        expectMinisignError(.malformedInput, "line 4", "base64") { try parse(Self.replacing(line: 3, of: text, with: lines[3] + "AAAA")) }
        expectMinisignError(.malformedInput, "unsupported", "\"EX\"") {
            try parse(try Self.editing(line: 1, of: text) { $0[1] = UInt8(ascii: "X") })
        }
        expectMinisignError(.malformedInput, "0x0000") { try parse(try Self.editing(line: 1, of: text) { $0[0] = 0; $0[1] = 0 }) }
        expectMinisignError(.malformedInput, "line 3", "8190") {
            try parse(Self.replacing(line: 2, of: text, with: "trusted comment: " + String(repeating: "x", count: 8174)))
        }
        expectMinisignError(.malformedInput, "line 1", "1022") {
            try parse(Self.replacing(line: 0, of: text, with: "untrusted comment: " + String(repeating: "x", count: 1004)))
        }
        expectMinisignError(.malformedInput, "after line 4") { try parse(Array(text: text + "extra\n")) }
        // Blank lines at the end are harmless.
        _ = try MinisignSignature(fileContents: Array(text: text + "\n\n"), source: "s.minisig")
        // The longest comments minisign writes still parse.
        let longest = Self.replacing(line: 2, of: text, with: "trusted comment: " + String(repeating: "x", count: 8173))
        #expect(try MinisignSignature(fileContents: longest, source: "s").trustedComment.count == 8173)
    }

    @Test("public keys: wrong algorithm, wrong length, bad base64, no comment line, oversized input")
    func publicKeyRefusals() throws {
        let text = try Self.fixture().publicKey
        let parse = { (bytes: [UInt8]) throws -> Void in _ = try MinisignPublicKey(fileContents: bytes, source: "k.pub") }
        expectMinisignError(.malformedInput, "k.pub", "unsupported", "\"ED\"") {
            try parse(try Self.editing(line: 1, of: text) { $0[1] = UInt8(ascii: "D") })
        }
        expectMinisignError(.malformedInput, "line 2", "41 bytes") { try parse(try Self.editing(line: 1, of: text) { $0.removeLast() }) }
        expectMinisignError(.malformedInput, "line 2", "base64") { try parse(Self.replacing(line: 1, of: text, with: "RWS!")) }
        expectMinisignError(.malformedInput, "truncated") { try parse(Array(text: text.split(separator: "\n")[1] + "\n")) }
        expectMinisignError(.malformedInput, "line 1", "untrusted comment: ") {
            try parse(Self.replacing(line: 0, of: text, with: "trusted comment: x"))
        }
        expectMinisignError(.malformedInput, "-P") { _ = try MinisignPublicKey(base64: "RWQ=", source: "-P") }
        expectMinisignError(.malformedInput, "too large") { _ = try MinisignPublicKey(base64: String(repeating: "A", count: 2000), source: "-P") }
    }

    @Test("secret keys: unknown KDF, checksum or algorithm, damaged checksum, damaged public half, hostile scrypt limits")
    func secretKeyRefusals() throws {
        let text = try Self.fixture().secretKey
        let parse = { (bytes: [UInt8]) throws -> MinisignSecretKeyFile in try MinisignSecretKeyFile(fileContents: bytes, source: "k.key") }
        expectMinisignError(.malformedInput, "key derivation function", "\"Ar\"") {
            _ = try parse(try Self.editing(line: 1, of: text) { $0[2] = UInt8(ascii: "A"); $0[3] = UInt8(ascii: "r") })
        }
        expectMinisignError(.malformedInput, "checksum function", "\"B3\"") {
            _ = try parse(try Self.editing(line: 1, of: text) { $0[5] = UInt8(ascii: "3") })
        }
        expectMinisignError(.malformedInput, "signature algorithm", "\"ED\"") {
            _ = try parse(try Self.editing(line: 1, of: text) { $0[1] = UInt8(ascii: "D") })
        }
        expectMinisignError(.malformedInput, "line 2", "159 bytes") { _ = try parse(try Self.editing(line: 1, of: text) { $0.append(0) }) }
        // A non-zero checksum must match.
        expectMinisignError(.malformedInput, "checksum does not match") {
            _ = try parse(try Self.editing(line: 1, of: text) { $0[157] = 1 }).decrypt(passphrase: nil)
        }
        // A public half that is not the seed's: the checksum catches it, and so does the
        // seed check when the checksum is recomputed to match.
        let key = try parse(Array(text: text)).decrypt(passphrase: nil)
        let rewritten = String(decoding: try key.fileContents(passphrase: nil), as: UTF8.self)
        let damaged = try Self.editing(line: 1, of: rewritten) { $0[54 + 8 + 40] ^= 1 }
        expectMinisignError(.malformedInput, "checksum does not match") { _ = try parse(damaged).decrypt(passphrase: nil) }
        let consistent = try Self.editing(line: 1, of: rewritten) { bytes in
            bytes[54 + 8 + 40] ^= 1
            let checksum = try! BLAKE2b.hash(Array("Ed".utf8) + bytes[54..<126], digestLength: 32)
            bytes.replaceSubrange(126..<158, with: checksum)
        }
        expectMinisignError(.malformedInput, "public half does not match") { _ = try parse(consistent).decrypt(passphrase: nil) }
        // Hostile limits in an encrypted key: refused before any memory is spent.
        let encrypted = try Self.fixture().encryptedSecretKey
        func withLimits(ops: UInt64, mem: UInt64) throws -> [UInt8] {
            try Self.editing(line: 1, of: encrypted) { bytes in
                for index in 0..<8 {
                    bytes[38 + index] = UInt8(truncatingIfNeeded: ops >> UInt64(8 * index))
                    bytes[46 + index] = UInt8(truncatingIfNeeded: mem >> UInt64(8 * index))
                }
            }
        }
        expectMinisignError(.malformedInput, "N=2^21", "1 GiB") { _ = try parse(try withLimits(ops: 1 << 26, mem: 1 << 31)) }
        expectMinisignError(.malformedInput, "needs more than 1 GiB") { _ = try parse(try withLimits(ops: 1 << 40, mem: 0)) }
        expectMinisignError(.malformedInput, "needs more than 1 GiB") { _ = try parse(try withLimits(ops: .max, mem: .max)) }
        // An encrypted key without a passphrase.
        expectMinisignError(.environment, "encrypted") { _ = try parse(Array(text: encrypted)).decrypt(passphrase: nil) }
    }

    @Test("seeded random damage to every format never crashes, and most of it is refused")
    func fuzz() throws {
        let fixture = try Self.fixture()
        // Seeded (SplitMix64), so a failure replays: the messages name the seed, format and iteration.
        let seed: UInt64 = 0x6D69_6E69_7369_676E
        var random = SplitMix64(seed: seed)
        let formats = [
            ("public key", fixture.publicKey), ("secret key", fixture.secretKey),
            ("prehashed signature", fixture.prehashedSignature), ("legacy signature", fixture.legacySignature),
        ]
        for (format, text) in formats {
            let original = Array(text: text)
            // The format's own parser accepts the undamaged file (else the count below means nothing).
            #expect(Self.ownParserAccepts(format, original), "\(format): the undamaged fixture is refused")
            var refused = 0
            for iteration in 0..<300 {
                let replay = "seed \(seed), \(format), iteration \(iteration)"
                var bytes = original
                for _ in 0..<(1 + Int(random.next() % 4)) {
                    bytes[Int(random.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: random.next())
                }
                if random.next() & 1 == 1 { bytes = Array(bytes.prefix(Int(random.next() % UInt64(bytes.count + 1)))) }
                // Every parser sees every damaged format; a refusal must say something.
                for parser in ["public key", "prehashed signature", "secret key"] {
                    if let error = Self.refusal(parser, bytes) {
                        #expect(!error.description.isEmpty, "\(replay), parsed as \(parser)")
                    }
                }
                if !Self.ownParserAccepts(format, bytes) { refused += 1 }
            }
            // About half the inputs are truncated, which no format survives: the damage reaches the parser.
            #expect(refused >= 60, "\(format): only \(refused) of 300 damaged files refused (seed \(seed))")
        }
    }

    /// Whether the parser for `format` accepts `bytes` (a secret key must also open).
    static func ownParserAccepts(_ format: String, _ bytes: [UInt8]) -> Bool {
        refusal(format, bytes) == nil
    }

    /// The error the parser for `format` throws for `bytes`, or nil when it accepts them.
    static func refusal(_ format: String, _ bytes: [UInt8]) -> SignetCoreError? {
        do {
            switch format {
            case "public key": _ = try MinisignPublicKey(fileContents: bytes, source: "fuzz")
            case "secret key": _ = try MinisignSecretKeyFile(fileContents: bytes, source: "fuzz").decrypt(passphrase: nil)
            default: _ = try MinisignSignature(fileContents: bytes, source: "fuzz")
            }
            return nil
        } catch let error as SignetCoreError {
            return error
        } catch {
            Issue.record("the \(format) parser threw \(type(of: error)), not a SignetCoreError: \(error)")
            return nil
        }
    }
}
