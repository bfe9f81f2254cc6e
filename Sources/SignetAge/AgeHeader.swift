import Crypto
import Foundation
import SignetCore

/// The header of an age v1 file (age-encryption.org/v1, "Header"): the version line, one or
/// more recipient stanzas, and the MAC line.
///
/// Parsing is strict, so that one header has one encoding: LF line ends only, stanza
/// arguments of VCHARs, bodies in canonical unpadded base64 wrapped at 64 columns and ended by
/// a shorter (possibly empty) line, a MAC of exactly 32 bytes. The exact bytes up to and
/// including `---` are kept, and the MAC is computed over them, never over a re-encoding.
struct AgeHeader {
    /// The version line, without its LF.
    static let versionLine = "age-encryption.org/v1"
    /// The most stanzas a header may have. age itself sets no limit; this one is far above
    /// what real files hold (one stanza per recipient) and bounds the work a hostile file can
    /// ask of each identity.
    static let maximumStanzas = 1024
    /// The most bytes a header may have, MAC line included.
    static let maximumSize = 1 << 20
    /// The longest stanza argument line, without its LF. The longest native one, a
    /// post-quantum `mlkem768x25519` stanza, is about 1,500 bytes.
    static let maximumArgumentLineLength = 16 * 1024
    /// The width of a full body line (48 bytes of body).
    static let columns = 64
    /// The MAC's length in bytes, and in unpadded base64 characters.
    static let macLength = 32
    private static let encodedMACLength = 43

    /// The stanzas, in order.
    var stanzas: [AgeStanza]
    /// The MAC the header carries.
    var mac: [UInt8]
    /// The header's bytes from its first byte up to and including `---`: what the MAC covers.
    var authenticatedBytes: [UInt8]

    // MARK: Parsing

    /// Reads a header from `input`, leaving `input` just after the MAC line's LF.
    static func parse(from input: AgeBufferedSource, source: String) throws -> AgeHeader {
        var reader = LineReader(input: input, source: source)
        guard let first = try reader.next(limit: maximumArgumentLineLength) else {
            throw AgeError.malformedHeader(source: source, detail: "the file is empty")
        }
        try checkVersion(first, source: source)
        var stanzas: [AgeStanza] = []
        while true {
            guard let line = try reader.next(limit: maximumArgumentLineLength) else {
                throw reader.malformed("the header ends before its MAC line (`--- `)")
            }
            if line.starts(with: [0x2D, 0x2D, 0x2D]) {  // "---"
                let mac = try parseMACLine(line, reader: reader)
                guard !stanzas.isEmpty else { throw reader.malformed("the header has no recipient stanza") }
                // The MAC covers the header up to and including "---", not the space after it.
                let authenticated = Array(reader.consumed.dropLast(line.count + 1 - 3))
                return AgeHeader(stanzas: stanzas, mac: mac, authenticatedBytes: authenticated)
            }
            guard stanzas.count < maximumStanzas else {
                throw reader.malformed("the header has more than \(maximumStanzas) stanzas")
            }
            stanzas.append(try parseStanza(argumentLine: line, reader: &reader))
        }
    }

    /// Parses a whole header held in memory; what follows the MAC line is ignored.
    static func parse(_ bytes: [UInt8], source: String) throws -> AgeHeader {
        try parse(from: AgeBufferedSource(AgeMemorySource(bytes)), source: source)
    }

    private static func checkVersion(_ line: [UInt8], source: String) throws {
        if line == Array(versionLine.utf8) { return }
        let prefix = Array("age-encryption.org/".utf8)
        if line.last == 0x0D, Array(line.dropLast()) == Array(versionLine.utf8) {
            throw AgeError.malformedHeader(source: source, detail: "line 1 ends with CR LF; age headers end lines with LF alone")
        }
        if line.starts(with: prefix), line.count > prefix.count, line.dropFirst(prefix.count).allSatisfy(isVisible) {
            let version = String(decoding: line.dropFirst(prefix.count), as: UTF8.self)
            throw AgeError.unsupported(source: source, detail: "age format version \"\(version)\" (only v1 is known)")
        }
        throw AgeError.malformedHeader(source: source, detail: "line 1 is not \"\(versionLine)\"")
    }

    /// The 32 bytes of `--- <base64>`.
    private static func parseMACLine(_ line: [UInt8], reader: LineReader) throws -> [UInt8] {
        guard line.count > 4, line[3] == 0x20 else {
            throw reader.malformed("the MAC line must be \"--- \" and the MAC's base64")
        }
        let encoded = line[4...]
        guard encoded.count == encodedMACLength, let mac = AgeBase64.decodeUnpadded(encoded), mac.count == macLength else {
            throw reader.malformed("the MAC is not 32 bytes of canonical unpadded base64")
        }
        return mac
    }

    /// A stanza: its `-> ` line, then body lines up to the first shorter than 64 columns.
    private static func parseStanza(argumentLine line: [UInt8], reader: inout LineReader) throws -> AgeStanza {
        guard line.starts(with: [0x2D, 0x3E]) else {  // "->"
            throw reader.malformed("a line must start a stanza (\"-> \") or be the MAC line (\"--- \")")
        }
        let fields = line.dropFirst(2).split(separator: 0x20, omittingEmptySubsequences: false)
        guard fields.count >= 2, fields[0].isEmpty else {
            throw reader.malformed("a stanza line must be \"-> \" followed by at least one argument")
        }
        var arguments: [String] = []
        for field in fields.dropFirst() {
            guard !field.isEmpty, field.allSatisfy(isVisible) else {
                throw reader.malformed("stanza arguments must be non-empty and of visible ASCII characters, separated by one space")
            }
            arguments.append(String(decoding: field, as: UTF8.self))
        }
        var body: [UInt8] = []
        while true {
            // Read with the larger bound, so that a stanza line where a body line should be is
            // named as such rather than as an over-long line.
            guard let bodyLine = try reader.next(limit: maximumArgumentLineLength) else {
                throw reader.malformed("the header ends inside a stanza body")
            }
            if bodyLine.starts(with: [0x2D, 0x2D, 0x2D]) || bodyLine.starts(with: [0x2D, 0x3E]) {
                throw reader.malformed("a stanza body must end with a line shorter than 64 columns (an empty one if need be)")
            }
            guard bodyLine.count <= columns else {
                throw reader.malformed("a stanza body line is longer than 64 columns")
            }
            guard let decoded = AgeBase64.decodeUnpadded(bodyLine) else {
                throw reader.malformed("a stanza body line is not canonical unpadded base64")
            }
            body += decoded
            if bodyLine.count < columns { break }
        }
        let type = arguments.removeFirst()
        return AgeStanza(type: type, arguments: arguments, body: body)
    }

    /// VCHAR (RFC 5234): the visible ASCII characters, 0x21 to 0x7E.
    static func isVisible(_ byte: UInt8) -> Bool { byte >= 0x21 && byte <= 0x7E }

    /// The header's lines one by one, counting them and keeping the bytes read for the MAC.
    private struct LineReader {
        let input: AgeBufferedSource
        let source: String
        private(set) var number = 0
        private(set) var consumed: [UInt8] = []

        init(input: AgeBufferedSource, source: String) {
            self.input = input
            self.source = source
        }

        /// The next line without its LF; nil at the end of the input. Refuses a line with no
        /// LF, one over `limit` bytes, and a header over ``AgeHeader/maximumSize``.
        mutating func next(limit: Int) throws -> [UInt8]? {
            guard let line = try input.readLine(limit: limit) else { return nil }
            number += 1
            guard line.bytes.count <= limit else {
                throw malformed("the line is longer than \(limit) bytes")
            }
            guard line.terminated else {
                throw malformed("the header ends inside a line (no LF)")
            }
            guard consumed.count + line.bytes.count + 1 <= AgeHeader.maximumSize else {
                throw malformed("the header is larger than \(AgeHeader.maximumSize) bytes")
            }
            consumed += line.bytes
            consumed.append(0x0A)
            return line.bytes
        }

        /// A malformed-header error naming the current line.
        func malformed(_ detail: String) -> AgeError {
            .malformedHeader(source: source, detail: "header line \(number): \(detail)")
        }
    }

    // MARK: Writing

    /// Encodes `stanzas` and the MAC under `fileKey`: the complete header, its LF included.
    static func encode(stanzas: [AgeStanza], fileKey: SecretBytes) throws -> [UInt8] {
        guard !stanzas.isEmpty else { throw AgeError.invalidArgument(detail: "an age header needs at least one stanza") }
        guard stanzas.count <= maximumStanzas else {
            throw AgeError.invalidArgument(detail: "an age file can have at most \(maximumStanzas) recipient stanzas")
        }
        var output = Array((versionLine + "\n").utf8)
        for stanza in stanzas {
            for argument in [stanza.type] + stanza.arguments {
                guard !argument.isEmpty, argument.utf8.allSatisfy(isVisible) else {
                    throw AgeError.invalidArgument(detail: "a recipient made a stanza argument that is empty or not visible ASCII")
                }
            }
            let argumentLine = Array(("-> " + ([stanza.type] + stanza.arguments).joined(separator: " ")).utf8)
            guard argumentLine.count <= maximumArgumentLineLength else {
                throw AgeError.invalidArgument(detail: "a recipient made a stanza line longer than \(maximumArgumentLineLength) bytes")
            }
            output += argumentLine
            output.append(0x0A)
            let encoded = AgeBase64.encodeUnpadded(stanza.body)
            var offset = 0
            // Full lines, then the shorter last one, which is empty when the body fills its lines.
            while encoded.count - offset >= columns {
                output += encoded[offset..<(offset + columns)]
                output.append(0x0A)
                offset += columns
            }
            output += encoded[offset...]
            output.append(0x0A)
        }
        output += Array("---".utf8)
        let mac = authenticationCode(over: output, fileKey: fileKey)
        output += Array(" ".utf8) + AgeBase64.encodeUnpadded(mac)
        output.append(0x0A)
        guard output.count <= maximumSize else {
            throw AgeError.invalidArgument(detail: "the header would be larger than \(maximumSize) bytes")
        }
        return output
    }

    // MARK: MAC

    /// HMAC-SHA-256 over `bytes`, keyed with HKDF-SHA-256(file key, salt: empty, info: "header").
    static func authenticationCode(over bytes: [UInt8], fileKey: SecretBytes) -> [UInt8] {
        let ikm = fileKey.withUnsafeBytes { SymmetricKey(data: $0) }
        let key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: ikm, salt: [UInt8](), info: Array("header".utf8), outputByteCount: 32)
        return Array(HMAC<SHA256>.authenticationCode(for: bytes, using: key))
    }

    /// Checks the header's MAC under `fileKey`, in constant time.
    func verifyMAC(fileKey: SecretBytes, source: String) throws {
        guard ConstantTime.equals(Self.authenticationCode(over: authenticatedBytes, fileKey: fileKey), mac) else {
            throw AgeError.headerMACMismatch(source: source)
        }
    }
}
