import Crypto

/// A minisign public key: an Ed25519 public key and its ``MinisignKeyID``.
///
/// The file minisign writes has two lines:
///
/// ```
/// untrusted comment: minisign public key 3C2F983C4E58F09E
/// RWSe8FhOPJgvPFpdrd4Lxwk4bJQFm4ToT37JnVqsCEs+QqFCiij0ukza
/// ```
///
/// The second line (also what `minisign -P` takes) is base64 of `"Ed"` ‖ key id (8 bytes) ‖
/// the Ed25519 public key (32 bytes).
public struct MinisignPublicKey: Sendable, Equatable {
    /// The key pair's id.
    public let keyID: MinisignKeyID
    /// The raw 32-byte Ed25519 public key.
    public let rawKey: [UInt8]
    let key: Curve25519.Signing.PublicKey

    /// The signature algorithm bytes every minisign key carries.
    static let algorithm = Array("Ed".utf8)
    /// The length of the decoded key line.
    static let encodedLength = 2 + MinisignKeyID.byteCount + 32

    /// A key from its id and raw Ed25519 public key.
    public init(keyID: MinisignKeyID, rawKey: [UInt8]) throws {
        guard rawKey.count == 32, let key = try? Curve25519.Signing.PublicKey(rawRepresentation: rawKey) else {
            throw SignetCoreError.malformed(source: "minisign public key", detail: "an Ed25519 public key is 32 bytes, not \(rawKey.count)")
        }
        self.keyID = keyID
        self.rawKey = rawKey
        self.key = key
    }

    /// Parses the base64 key line (what `minisign -P` takes).
    public init(base64 text: String, source: String = "public key") throws {
        let line = Array(text.utf8)
        guard line.count <= 1024 else { throw SignetCoreError.tooLarge(source: source, limit: 1024) }
        try self.init(line: line[...], number: 1, source: source)
    }

    /// Parses the contents of a public key file.
    public init(fileContents: [UInt8], source: String) throws {
        let lines = try MinisignText.lines(fileContents, count: 2, what: "a minisign public key file", source: source)
        _ = try MinisignText.comment(
            lines[0], prefix: MinisignText.untrustedCommentPrefix, maximumLength: MinisignText.maximumUntrustedLineLength,
            number: 1, source: source)
        try self.init(line: lines[1], number: 2, source: source)
    }

    private init(line: ArraySlice<UInt8>, number: Int, source: String) throws {
        let decoded = try MinisignText.base64(line, count: Self.encodedLength, what: "a minisign public key", number: number, source: source)
        guard decoded.starts(with: Self.algorithm) else {
            throw SignetCoreError.unsupported(
                source: source, detail: "signature algorithm \(MinisignSignature.Algorithm.describe(decoded.prefix(2))) (minisign keys are \"Ed\")")
        }
        do {
            try self.init(keyID: MinisignKeyID(checked: Array(decoded[2..<10])), rawKey: Array(decoded[10...]))
        } catch {
            throw SignetCoreError.malformed(source: source, detail: String(describing: error))
        }
    }

    /// Reads a public key file (`-`: standard input).
    public static func read(path: String) throws -> MinisignPublicKey {
        let input = try FileInput(path: path)
        return try MinisignPublicKey(fileContents: input.readAll(limit: MinisignText.maximumFileSize), source: input.displayName)
    }

    /// The base64 key line, as `minisign -P` takes it.
    public var base64: String {
        Base64.encode(Self.algorithm + keyID.bytes + rawKey)
    }

    /// The file minisign writes: the comment line naming the key id, then the key line.
    public var fileContents: String {
        "untrusted comment: minisign public key \(keyID)\n\(base64)\n"
    }

    /// The same key as a Signet ``PublicKey`` (for `signet verify`, fingerprints, other formats).
    public var publicKey: PublicKey { PublicKey(.ed25519(key)) }

    /// Whether `signature` is a valid Ed25519 signature of `message` under this key.
    func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        key.isValidSignature(signature, for: message)
    }

    /// Two keys are equal when their key ids and Ed25519 keys are.
    public static func == (lhs: MinisignPublicKey, rhs: MinisignPublicKey) -> Bool {
        lhs.keyID == rhs.keyID && lhs.rawKey == rhs.rawKey
    }
}
