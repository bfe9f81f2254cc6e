extension FileSignature {
    /// How a signature file's bytes are taken.
    public enum FileEncoding: Sendable, Equatable {
        /// Raw bytes (as `openssl dgst -sign` writes them), or their base64, told apart by
        /// their content: text that is all base64 and decodes is base64.
        case detect
        /// Base64 text (whitespace and line breaks allowed); anything else is refused.
        case base64
    }

    /// The largest signature file read: an RSA-16384 signature is 2 KiB, its base64 less
    /// than 3.
    public static let maximumSignatureFileSize = 64 << 10

    /// The signature a signature file holds. A raw signature that happens to be made only of
    /// base64 characters and decode (vanishingly unlikely for 64 or more random bytes) would be
    /// taken as base64; `.base64` removes any doubt for text.
    ///
    /// - Throws: ``SignetCoreError/malformed(source:detail:)`` for an empty file, or text that
    ///   is not base64 with `.base64`.
    public static func decodeSignatureFile(_ bytes: [UInt8], source: String, encoding: FileEncoding = .detect) throws -> [UInt8] {
        guard !bytes.isEmpty else { throw SignetCoreError.malformed(source: source, detail: "the signature file is empty") }
        let isBase64Text = bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "+"), UInt8(ascii: "/"), UInt8(ascii: "="), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: " "):
                return true
            default: return false
            }
        }
        if isBase64Text || encoding == .base64 {
            if let decoded = Base64.decode(String(decoding: bytes, as: UTF8.self)), !decoded.isEmpty { return decoded }
            if encoding == .base64 { throw SignetCoreError.malformed(source: source, detail: "not valid base64") }
        }
        return bytes
    }

    /// Reads and decodes the signature file at `path` (`-`: standard input), at most
    /// ``maximumSignatureFileSize`` bytes.
    public static func readSignatureFile(path: String, encoding: FileEncoding = .detect) throws -> [UInt8] {
        let bytes = try FileInput.readAll(path: path, limit: maximumSignatureFileSize)
        return try decodeSignatureFile(bytes, source: path == "-" ? "standard input" : path, encoding: encoding)
    }
}
