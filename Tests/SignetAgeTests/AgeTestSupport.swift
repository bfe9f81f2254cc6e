import Crypto
import Foundation
@testable import SignetAge
import SignetCore
import SignetTestSupport
import Testing

/// A recipient for format tests only: its `-> test` stanza carries the file key in the clear,
/// so a test can build and take apart files by hand. Never a real recipient.
struct PlainRecipient: AgeRecipient {
    /// Whether it claims to be a passphrase, to test that a passphrase stands alone.
    var passphrase = false

    var isPassphrase: Bool { passphrase }

    func wrap(fileKey: SecretBytes) throws -> [AgeStanza] {
        [AgeStanza(type: "test", arguments: [], body: fileKey.bytes)]
    }
}

/// The identity of ``PlainRecipient``: takes the file key out of the first `-> test` stanza.
struct PlainIdentity: AgeIdentity {
    func unwrap(stanzas: [AgeStanza], source: String) throws -> SecretBytes? {
        for stanza in stanzas where stanza.type == "test" {
            guard stanza.arguments.isEmpty, stanza.body.count == 16 else {
                throw AgeError.malformedHeader(source: source, detail: "a test stanza holds 16 bytes and no argument")
            }
            return SecretBytes(stanza.body)
        }
        return nil
    }
}

/// Age files built by hand with swift-crypto and Foundation's base64, independently of the code
/// under test: headers with valid MACs around whatever lines a test wants, and payloads whose
/// chunks carry whatever counters and last flags a test wants.
enum HandMade {
    static let fileKey: [UInt8] = (1...16).map { UInt8($0) }
    static let nonce = [UInt8](repeating: 0xA5, count: 16)
    static let chunkSize = 64 * 1024

    /// Unpadded standard base64.
    static func b64(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "=", with: "")
    }

    /// The two lines of the `-> test` stanza carrying `fileKey`.
    static var testStanza: String { "-> test\n" + b64(fileKey) + "\n" }

    /// HMAC-SHA-256 keyed with HKDF-SHA-256(`key`, "", "header").
    static func mac(over bytes: [UInt8], key: [UInt8] = HandMade.fileKey) -> [UInt8] {
        let macKey = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: key), salt: [UInt8](), info: Array("header".utf8), outputByteCount: 32)
        return Array(HMAC<SHA256>.authenticationCode(for: bytes, using: macKey))
    }

    /// `lines` (the header from its version line up to, not including, `---`) and a valid MAC line.
    static func header(_ lines: String, macKey: [UInt8] = HandMade.fileKey) -> [UInt8] {
        let covered = Array((lines + "---").utf8)
        return covered + Array((" " + b64(mac(over: covered, key: macKey)) + "\n").utf8)
    }

    /// A well-formed header with the test stanza alone.
    static var standardHeader: [UInt8] { header("age-encryption.org/v1\n" + testStanza) }

    /// The payload key for `nonce`.
    static func payloadKey(nonce: [UInt8] = HandMade.nonce, fileKey: [UInt8] = HandMade.fileKey) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: fileKey), salt: nonce, info: Array("payload".utf8), outputByteCount: 32)
    }

    /// One chunk sealed as chunk `counter` with the last flag `last`: ciphertext ‖ tag.
    static func seal(_ plaintext: [UInt8], key: SymmetricKey, counter: UInt64, last: Bool) -> [UInt8] {
        let box = try! ChaChaPoly.seal(plaintext, using: key, nonce: ChaChaPoly.Nonce(data: nonceBytes(counter, last)))
        return Array(box.ciphertext) + Array(box.tag)
    }

    /// The nonce, then each chunk sealed in order (counters from 0) with its own last flag.
    static func payload(_ chunks: [(plaintext: [UInt8], last: Bool)]) -> [UInt8] {
        let key = payloadKey()
        var bytes = nonce
        for (index, chunk) in chunks.enumerated() {
            bytes += seal(chunk.plaintext, key: key, counter: UInt64(index), last: chunk.last)
        }
        return bytes
    }

    /// A whole file: the standard header and `chunks`.
    static func file(_ chunks: [(plaintext: [UInt8], last: Bool)]) -> [UInt8] {
        standardHeader + payload(chunks)
    }

    /// The length of the header of `file`, through the LF that ends the MAC line.
    static func headerLength(_ file: [UInt8]) -> Int? {
        let marker = Array("\n--- ".utf8)
        guard file.count > marker.count else { return nil }
        for start in 0...(file.count - marker.count) where file[start] == 0x0A && Array(file[start..<(start + marker.count)]) == marker {
            guard let end = file[(start + 1)...].firstIndex(of: 0x0A) else { return nil }
            return end + 1
        }
        return nil
    }

    /// Opens a binary file made for a ``PlainRecipient`` without the code under test, requiring
    /// the layout the spec gives: full chunks flagged 0, then one final chunk flagged 1, short
    /// and non-empty unless it is the only one. Returns the plaintext and the chunk count.
    static func open(_ file: [UInt8]) throws -> (plaintext: [UInt8], chunks: Int) {
        guard let length = headerLength(file) else { throw VectorError(description: "no MAC line") }
        let lines = String(decoding: file[0..<length], as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count == 5, lines[1] == "-> test", let key = Data(base64Encoded: String(lines[2]) + "=="), key.count == 16 else {
            throw VectorError(description: "not a file with one test stanza")
        }
        let covered = Array(file[0..<(length - 45)])
        guard String(lines[3]) == "--- " + b64(mac(over: covered, key: Array(key))) else {
            throw VectorError(description: "the MAC does not verify")
        }
        let nonce = Array(file[length..<(length + 16)])
        let chunkKey = payloadKey(nonce: nonce, fileKey: Array(key))
        var plaintext: [UInt8] = []
        var offset = length + 16
        var counter: UInt64 = 0
        while true {
            let end = min(offset + chunkSize + 16, file.count)
            let last = end == file.count
            let sealed = Array(file[offset..<end])
            guard sealed.count >= 16 else { throw VectorError(description: "chunk \(counter) is shorter than a tag") }
            let box = try ChaChaPoly.SealedBox(
                nonce: ChaChaPoly.Nonce(data: nonceBytes(counter, last)),
                ciphertext: Array(sealed.dropLast(16)), tag: Array(sealed.suffix(16)))
            let opened = try ChaChaPoly.open(box, using: chunkKey)
            plaintext += opened
            if last {
                guard sealed.count > 16 || counter == 0 else { throw VectorError(description: "an empty final chunk after data") }
                return (plaintext, Int(counter) + 1)
            }
            offset = end
            counter += 1
        }
    }

    /// The ChaCha20-Poly1305 nonce of chunk `counter`.
    static func nonceBytes(_ counter: UInt64, _ last: Bool) -> [UInt8] {
        var nonce = [UInt8](repeating: 0, count: 12)
        for index in 0..<8 { nonce[10 - index] = UInt8(truncatingIfNeeded: counter >> (8 * UInt64(index))) }
        nonce[11] = last ? 1 : 0
        return nonce
    }
}

/// `count` bytes of a fixed pattern (so that a misplaced chunk shows).
func patternBytes(_ count: Int, seed: UInt64 = 7) -> [UInt8] {
    var generator = SplitMix64(seed: seed)
    var bytes = [UInt8](repeating: 0, count: count)
    var index = 0
    while index < count {
        var word = generator.next()
        for _ in 0..<min(8, count - index) {
            bytes[index] = UInt8(truncatingIfNeeded: word)
            word >>= 8
            index += 1
        }
    }
    return bytes
}

/// Decrypts `file` with `identities` and requires an ``AgeError``, which it returns.
func decryptionError(
    _ file: [UInt8], identities: [any AgeIdentity] = [PlainIdentity()], sourceLocation: SourceLocation = #_sourceLocation
) throws -> AgeError {
    try thrown(AgeError.self, sourceLocation: sourceLocation) {
        try AgeDecryptor(identities: identities).decrypt(file, source: "hostile.age")
    }
}

/// Requires decrypting `file` to fail with `code`, the message naming the file and `fragments`.
func expectRefusal(
    _ file: [UInt8], _ code: SignetErrorCode<AgeError>, mentioning fragments: [String] = [],
    identities: [any AgeIdentity] = [PlainIdentity()], sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let error = try decryptionError(file, identities: identities, sourceLocation: sourceLocation)
    expectError(error, is: code, mentioning: ["hostile.age"] + fragments, sourceLocation: sourceLocation)
}

/// Decrypts `file` streaming, handing the reader at most `piece` bytes at a time; returns what
/// was written before the end or the error, and the error.
func streamingDecrypt(
    _ file: [UInt8], identities: [any AgeIdentity] = [PlainIdentity()], piece: Int = .max, source: String = "streamed.age"
) -> (written: [UInt8], error: AgeError?) {
    var offset = 0
    var written: [UInt8] = []
    do {
        try AgeDecryptor(identities: identities).decrypt(
            read: { buffer in
                let count = min(buffer.count, piece, file.count - offset)
                buffer.copyBytes(from: file[offset..<(offset + count)])
                offset += count
                return count
            },
            write: { written += $0 }, source: source)
        return (written, nil)
    } catch let error as AgeError {
        return (written, error)
    } catch {
        Issue.record("decrypting threw \(type(of: error)), not an AgeError: \(error)")
        return (written, nil)
    }
}
