import SignetCore

/// Minisign files, PHC password-hash strings and checksum lines.
enum CoreTargets {
    /// The passphrase of the encrypted minisign seeds.
    static let passphrase = "signet-test"

    static let all: TargetList = [
        ("minisign-pubkey", { CoreTargets.minisignPublicKey($0) }),
        ("minisign-seckey", { CoreTargets.minisignSecretKey($0) }),
        ("minisign-sig", { CoreTargets.minisignSignature($0) }),
        ("phc", { CoreTargets.phc($0) }),
        ("checksum-line", { CoreTargets.checksumLines($0) }),
    ]

    // MARK: Minisign

    /// `MinisignPublicKey(fileContents:source:)` and `MinisignPublicKey(base64:source:)`.
    /// Invariant: the key's file and key line parse back to it, and ``KeyDecoder`` reads the
    /// file as the same Ed25519 key.
    static func minisignPublicKey(_ bytes: [UInt8]) {
        if let key = try? MinisignPublicKey(fileContents: bytes, source: "fuzz input") {
            checkPublicKey(key)
        }
        if bytes.count <= 2048, let key = try? MinisignPublicKey(base64: Fuzz.text(bytes), source: "fuzz input") {
            checkPublicKey(key)
        }
    }

    static func checkPublicKey(_ key: MinisignPublicKey) {
        let file = Array(key.fileContents.utf8)
        let again = try? MinisignPublicKey(fileContents: file, source: "re-encoded")
        Fuzz.require(again == key, "minisign-pubkey", "the public key file does not parse back to the key")
        let line = try? MinisignPublicKey(base64: key.base64, source: "re-encoded")
        Fuzz.require(line == key, "minisign-pubkey", "the key line does not parse back to the key")
        let decoded = try? KeyDecoder.decode(file, source: "re-encoded", policy: .strict)
        guard case .publicKey(let publicKey)? = decoded else {
            Fuzz.require(false, "minisign-pubkey", "KeyDecoder does not read a minisign public key file")
            return
        }
        Fuzz.require(publicKey == key.publicKey, "minisign-pubkey", "KeyDecoder reads a minisign public key file as another key")
    }

    /// `MinisignSecretKeyFile(fileContents:source:)`, then `decrypt(passphrase:)`: without a
    /// passphrase when the key is stored in the clear, with the seeds' when it is encrypted at
    /// a small scrypt cost. Invariant: a decrypted key, written unencrypted, reads back as
    /// the same key.
    static func minisignSecretKey(_ bytes: [UInt8]) {
        guard let file = try? MinisignSecretKeyFile(fileContents: bytes, source: "fuzz input") else { return }
        let key: MinisignSecretKey
        if file.isEncrypted {
            // Bounded so that one input cannot take long: at most 4 MiB of scrypt memory.
            let (logN, r, p) = file.parameters.scrypt
            guard logN <= 14, r <= 16, p <= 4, UInt64(128 * r * p) << UInt64(logN) <= UInt64(1) << 22 else { return }
            guard let decrypted = try? file.decrypt(passphrase: SecretBytes(Array(passphrase.utf8))) else { return }
            key = decrypted
        } else {
            guard let decrypted = try? file.decrypt(passphrase: nil) else { return }
            key = decrypted
        }
        guard let contents = try? key.fileContents(passphrase: nil) else {
            Fuzz.require(false, "minisign-seckey", "a decrypted secret key cannot be written")
            return
        }
        let again = try? MinisignSecretKeyFile(fileContents: contents, source: "re-encoded").decrypt(passphrase: nil)
        Fuzz.require(
            again?.keyID == key.keyID && again?.publicKey == key.publicKey, "minisign-seckey",
            "a secret key written unencrypted does not read back as itself")
    }

    /// `MinisignSignature(fileContents:source:)`. Invariant: `fileContents` parses back equal.
    static func minisignSignature(_ bytes: [UInt8]) {
        guard let signature = try? MinisignSignature(fileContents: bytes, source: "fuzz input") else { return }
        let again = try? MinisignSignature(fileContents: signature.fileContents, source: "re-encoded")
        Fuzz.require(again == signature, "minisign-sig", "the signature file does not parse back to the signature")
    }

    // MARK: Passwords

    /// `PHCString(parsing:)`, `PasswordHashAlgorithm(phc:)`, `PasswordHasher.needsRehash(_:)`,
    /// and `verify(_:against:)` when the stored cost is small. Invariants: the string's
    /// description parses back equal; the algorithm's own PHC parameters name it again.
    static func phc(_ bytes: [UInt8]) {
        let text = Fuzz.text(bytes)
        guard let phc = try? PHCString(parsing: text) else { return }
        let again = try? PHCString(parsing: phc.description)
        Fuzz.require(again == phc, "phc", "\(phc.description) does not parse back to the same PHC string")
        guard let algorithm = try? PasswordHashAlgorithm(phc: phc) else { return }
        let rebuilt = PHCString(id: algorithm.phcIdentifier, parameters: algorithm.phcParameters, salt: phc.salt, hash: phc.hash)
        let reparsed = try? PasswordHashAlgorithm(phc: rebuilt)
        Fuzz.require(reparsed == algorithm, "phc", "\(algorithm) written as PHC parameters names another algorithm")
        let hasher = PasswordHasher()
        _ = try? hasher.needsRehash(text)
        let cheap: Bool
        switch algorithm {
        case .scrypt(let logN, let r, let p): cheap = logN <= 12 && 128 * r * p << logN <= 1 << 20
        case .pbkdf2SHA256(let iterations): cheap = iterations <= 2000
        }
        if cheap {
            _ = try? hasher.verify(SecretBytes(Array("password".utf8)), against: text)
        }
    }

    // MARK: Checksum lists

    /// `ChecksumList(bytes:source:allowInsecure:)`, as `signet hash --check` reads a list.
    /// Invariant: each entry's line, formatted again (GNU or BSD style), parses equal, and its
    /// digest has its algorithm's length.
    static func checksumLines(_ bytes: [UInt8]) {
        guard let list = try? ChecksumList(bytes: bytes, source: "fuzz input", allowInsecure: true) else { return }
        for entry in list.entries {
            let line = entry.line
            Fuzz.require(line.digest.count == entry.algorithm.byteCount, "checksum-line", "a digest of another length than its algorithm's")
            let hex = Hex.encode(line.digest)
            let formatted: String
            if let algorithm = line.taggedAlgorithm {
                formatted = ChecksumLine.formatTagged(algorithm: algorithm, hex: hex, path: line.path)
            } else {
                formatted = ChecksumLine.format(hex: hex, path: line.path)
            }
            Fuzz.require(
                ChecksumLine.parse(Substring(formatted)) == line, "checksum-line",
                "\(formatted.debugDescription) does not parse back to the same line")
            _ = ChecksumLine.displayName(line.path)
        }
    }
}
