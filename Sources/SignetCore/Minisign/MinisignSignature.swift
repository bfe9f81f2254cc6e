/// A minisign signature file (`FILE.minisig`).
///
/// Four lines:
///
/// ```
/// untrusted comment: signature from minisign secret key
/// RUQXjrlgXEAJSWGs4eYrSr9to0Uv+2b1PisocQIg14dsOxVhe0y0f3kgaQzARoSq6uFN4PxzwRKd2l8DEaje7aqPpml7d/yDyw0=
/// trusted comment: timestamp:1795397658	file:f.txt	hashed
/// Svs3XX1C0RuBi6wWrz4Ln1Q6dsoxE/Q+98rk2r42fs566aNKQUVnVK1yGK8jvWOusyw7cvKJzbW0Itm9VH/xCg==
/// ```
///
/// Line 2 is base64 of algorithm (2 bytes) ‖ key id (8) ‖ Ed25519 signature (64) over the
/// file (``Algorithm/prehashed``: over its BLAKE2b-512 digest); line 4 is the global
/// signature, Ed25519 over the file signature ‖ the trusted comment's bytes. The untrusted
/// comment is covered by nothing.
public struct MinisignSignature: Sendable, Equatable {
    /// What the file signature covers.
    public enum Algorithm: Sendable, Equatable {
        /// `"ED"`: the BLAKE2b-512 digest of the file (minisign's default; any size, streamed).
        case prehashed
        /// `"Ed"`: the whole file (minisign `-l`; the file must fit in memory).
        case legacy

        /// The two bytes in the file.
        public var bytes: [UInt8] { Array((self == .prehashed ? "ED" : "Ed").utf8) }

        init?(bytes: some Collection<UInt8>) {
            if bytes.elementsEqual("ED".utf8) {
                self = .prehashed
            } else if bytes.elementsEqual("Ed".utf8) {
                self = .legacy
            } else {
                return nil
            }
        }

        /// Two algorithm bytes for a message: as text when printable, else hex.
        static func describe(_ bytes: some Collection<UInt8>) -> String {
            if bytes.allSatisfy({ (0x21...0x7e).contains($0) }) { return "\"\(String(decoding: bytes, as: UTF8.self))\"" }
            return "0x" + Hex.encode(bytes)
        }
    }

    /// What the file signature covers.
    public var algorithm: Algorithm
    /// The id of the key that signed.
    public var keyID: MinisignKeyID
    /// The Ed25519 signature over the file (or its digest).
    public var signature: [UInt8]
    /// The first line's text, after `untrusted comment: ` (not signed).
    public var untrustedComment: [UInt8]
    /// The third line's text, after `trusted comment: ` (signed by ``globalSignature``).
    public var trustedComment: [UInt8]
    /// Ed25519 over ``signature`` ‖ ``trustedComment``.
    public var globalSignature: [UInt8]

    static let encodedLength = 2 + MinisignKeyID.byteCount + 64
    /// The longest trusted comment minisign writes and reads.
    public static let maximumTrustedCommentLength = MinisignText.maximumTrustedLineLength - 17
    /// The longest untrusted comment minisign reads back.
    public static let maximumUntrustedCommentLength = MinisignText.maximumUntrustedLineLength - 19

    /// A signature from its parts (``MinisignFile/sign(path:signer:keyID:options:progress:)`` makes them).
    public init(
        algorithm: Algorithm, keyID: MinisignKeyID, signature: [UInt8], untrustedComment: [UInt8], trustedComment: [UInt8],
        globalSignature: [UInt8]
    ) {
        self.algorithm = algorithm
        self.keyID = keyID
        self.signature = signature
        self.untrustedComment = untrustedComment
        self.trustedComment = trustedComment
        self.globalSignature = globalSignature
    }

    /// Parses a `.minisig` file.
    public init(fileContents: [UInt8], source: String) throws {
        let lines = try MinisignText.lines(fileContents, count: 4, what: "a minisign signature file", source: source)
        untrustedComment = try MinisignText.comment(
            lines[0], prefix: MinisignText.untrustedCommentPrefix, maximumLength: MinisignText.maximumUntrustedLineLength,
            number: 1, source: source)
        let decoded = try MinisignText.base64(lines[1], count: Self.encodedLength, what: "a minisign signature", number: 2, source: source)
        guard let algorithm = Algorithm(bytes: decoded[0..<2]) else {
            throw SignetCoreError.unsupported(
                source: source, detail: "signature algorithm \(Algorithm.describe(decoded[0..<2])) (minisign signatures are \"ED\" or legacy \"Ed\")")
        }
        self.algorithm = algorithm
        keyID = MinisignKeyID(checked: Array(decoded[2..<10]))
        signature = Array(decoded[10...])
        guard lines[2].starts(with: MinisignText.trustedCommentPrefix) else {
            throw SignetCoreError.malformed(source: source, detail: "line 3 should start with \"trusted comment: \" (the trusted comment is missing)")
        }
        trustedComment = try MinisignText.comment(
            lines[2], prefix: MinisignText.trustedCommentPrefix, maximumLength: MinisignText.maximumTrustedLineLength,
            number: 3, source: source)
        globalSignature = try MinisignText.base64(lines[3], count: 64, what: "a global signature", number: 4, source: source)
    }

    /// Reads a `.minisig` file (`-`: standard input).
    public static func read(path: String) throws -> MinisignSignature {
        let input = try FileInput(path: path)
        return try MinisignSignature(fileContents: input.readAll(limit: MinisignText.maximumFileSize), source: input.displayName)
    }

    /// The file's bytes, as minisign writes them.
    public var fileContents: [UInt8] {
        var text = MinisignText.untrustedCommentPrefix + untrustedComment + [UInt8(ascii: "\n")]
        text += Array(Base64.encode(algorithm.bytes + keyID.bytes + signature).utf8) + [UInt8(ascii: "\n")]
        text += MinisignText.trustedCommentPrefix + trustedComment + [UInt8(ascii: "\n")]
        text += Array(Base64.encode(globalSignature).utf8) + [UInt8(ascii: "\n")]
        return text
    }

    /// The trusted comment as text.
    public var trustedCommentText: String { String(decoding: trustedComment, as: UTF8.self) }

    /// What the global signature covers: the file signature ‖ the trusted comment.
    var globalMessage: [UInt8] { signature + trustedComment }
}
