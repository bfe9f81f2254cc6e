import Crypto

/// A minisign secret key file as read, before it is decrypted.
///
/// ```swift
/// let file = try MinisignSecretKeyFile.read(path: "minisign.key")
/// let key = try file.decrypt(passphrase: file.isEncrypted ? passphrase : nil)
/// ```
///
/// Layout (base64 on the second line, 158 bytes): `"Ed"`, kdf (`"Sc"`, or two zero bytes for
/// a key stored in the clear), `"B2"`, salt (32), opslimit (8, little-endian), memlimit (8),
/// then key id (8) ‖ Ed25519 secret key (64) ‖ checksum (32), XORed with scrypt's output when
/// encrypted. Decryption checks the checksum (a wrong passphrase fails there) and that the
/// public half matches the secret seed.
public struct MinisignSecretKeyFile: Sendable {
    /// Whether a passphrase is needed (kdf `"Sc"`).
    public let isEncrypted: Bool
    /// The scrypt limits stored in the file (zero for an unencrypted key).
    public let parameters: MinisignKDFParameters
    /// Where the key came from, for messages.
    public let source: String
    let salt: [UInt8]
    let material: SecretBytes

    static let scryptAlgorithm = Array("Sc".utf8)
    static let noKDF: [UInt8] = [0, 0]
    static let checksumAlgorithm = Array("B2".utf8)
    static let saltLength = 32
    static let materialLength = MinisignKeyID.byteCount + 64 + 32
    static let encodedLength = 2 + 2 + 2 + saltLength + 8 + 8 + materialLength

    /// Parses the contents of a secret key file.
    public init(fileContents: [UInt8], source: String) throws {
        self.source = source
        let lines = try MinisignText.lines(fileContents, count: 2, what: "a minisign secret key file", source: source)
        _ = try MinisignText.comment(
            lines[0], prefix: MinisignText.untrustedCommentPrefix, maximumLength: MinisignText.maximumUntrustedLineLength,
            number: 1, source: source)
        var decoded = try MinisignText.base64(lines[1], count: Self.encodedLength, what: "a minisign secret key", number: 2, source: source)
        defer { SecretBytes.zero(&decoded) }
        guard decoded.starts(with: MinisignPublicKey.algorithm) else {
            throw SignetCoreError.unsupported(
                source: source, detail: "signature algorithm \(MinisignSignature.Algorithm.describe(decoded[0..<2])) (minisign keys are \"Ed\")")
        }
        guard decoded[4..<6].elementsEqual(Self.checksumAlgorithm) else {
            throw SignetCoreError.unsupported(
                source: source, detail: "checksum function \(MinisignSignature.Algorithm.describe(decoded[4..<6])) (minisign uses \"B2\")")
        }
        let kdf = decoded[2..<4]
        if kdf.elementsEqual(Self.scryptAlgorithm) {
            isEncrypted = true
        } else if kdf.elementsEqual(Self.noKDF) {
            isEncrypted = false
        } else {
            throw SignetCoreError.unsupported(
                source: source, detail: "key derivation function \(MinisignSignature.Algorithm.describe(kdf)) (minisign uses \"Sc\" or none)")
        }
        salt = Array(decoded[6..<38])
        func littleEndian(_ bytes: ArraySlice<UInt8>) -> UInt64 {
            bytes.reversed().reduce(0) { $0 << 8 | UInt64($1) }
        }
        parameters = MinisignKDFParameters(opsLimit: littleEndian(decoded[38..<46]), memLimit: littleEndian(decoded[46..<54]))
        if isEncrypted { try parameters.validate(source: source) }
        material = SecretBytes(decoded[54...])
    }

    /// Reads a secret key file (`-`: standard input).
    public static func read(path: String) throws -> MinisignSecretKeyFile {
        let input = try FileInput(path: path)
        var bytes = try input.readAll(limit: MinisignText.maximumFileSize)
        defer { SecretBytes.zero(&bytes) }
        return try MinisignSecretKeyFile(fileContents: bytes, source: input.displayName)
    }

    /// The key, decrypted with `passphrase` when ``isEncrypted`` (ignored otherwise).
    ///
    /// Throws ``SignetCoreError/wrongPassphrase(source:)`` when the checksum does not match
    /// after decryption, ``SignetCoreError/passphraseUnavailable(source:detail:)`` when an
    /// encrypted key gets no passphrase.
    public func decrypt(passphrase: SecretBytes?) throws -> MinisignSecretKey {
        var plain = material.bytes
        defer { SecretBytes.zero(&plain) }
        if isEncrypted {
            guard let passphrase else {
                throw SignetCoreError.passphraseUnavailable(source: source, detail: "the key is encrypted and no passphrase was given")
            }
            let stream = try parameters.keyStream(passphrase: passphrase, salt: salt, length: plain.count, source: source)
            stream.withUnsafeBytes { stream in
                for index in plain.indices { plain[index] ^= stream[index] }
            }
        }
        var computed = MinisignSecretKey.checksum(keyIDAndSecret: plain[0..<72])
        defer { SecretBytes.zero(&computed) }
        let stored = plain[72..<104]
        // minisign -G -W leaves the checksum of an unencrypted key zero; any other value must match.
        let checksumOK = ConstantTime.equals(computed, stored) || (!isEncrypted && stored.allSatisfy { $0 == 0 })
        guard checksumOK else {
            if isEncrypted { throw SignetCoreError.wrongPassphrase(source: source) }
            throw SignetCoreError.malformed(source: source, detail: "the secret key's checksum does not match (the file is damaged)")
        }
        let key: Curve25519.Signing.PrivateKey
        do {
            key = try Curve25519.Signing.PrivateKey(rawRepresentation: plain[8..<40])
        } catch {
            throw SignetCoreError.malformed(source: source, detail: "not an Ed25519 secret key: \(error)")
        }
        guard key.publicKey.rawRepresentation.elementsEqual(plain[40..<72]) else {
            throw SignetCoreError.malformed(source: source, detail: "the secret key's public half does not match its seed (the file is damaged)")
        }
        return MinisignSecretKey(keyID: MinisignKeyID(checked: Array(plain[0..<8])), key: key)
    }
}
