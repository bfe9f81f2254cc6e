import Crypto
import SignetCore

/// SSH keys as age recipients and identities: parsing `authorized_keys` lines, choosing the
/// recipient or identity type for a key, and the stanza tags.
public enum AgeSSH {
    /// The key types whose lines are SSH public keys, recognised to give a precise refusal.
    static let sshKeyTypePrefixes = ["ssh-", "ecdsa-sha2-", "sk-ssh-", "sk-ecdsa-"]

    /// Whether `string` looks like an OpenSSH public key line (possibly after options).
    static func looksLikeSSHKey(_ string: String) -> Bool {
        (try? keyFields(of: string)) != nil
    }

    /// The recipient of an OpenSSH public key line as in `authorized_keys`: `[OPTIONS] TYPE
    /// BASE64 [COMMENT]`, for `ssh-rsa` (2048 bits or more) and `ssh-ed25519` keys.
    ///
    /// Options are skipped exactly as OpenSSH's `sshkey_advance_past_options` does, so that the
    /// key taken is the one `ssh-keygen -l` and sshd read from the same line.
    ///
    /// - Throws: ``AgeError/invalidKey(source:detail:)`` for a line that is not a valid key;
    ///   ``AgeError/unsupported(source:detail:)`` for key types age cannot encrypt to (ECDSA,
    ///   security keys, DSA).
    public static func recipient(line: String, source: String) throws -> any AgeRecipient {
        guard let (type, blob) = try? keyFields(of: line) else {
            throw AgeError.invalidKey(source: source, detail: "not an OpenSSH public key line ([options] type base64 [comment])")
        }
        return try recipient(type: type, blob: blob, source: source)
    }

    /// The recipient of the key `type` and `blob` taken from a key line by ``keyFields(of:)``.
    static func recipient(type: String, blob: String, source: String) throws -> any AgeRecipient {
        guard type == SSHRSARecipient.stanzaType || type == SSHEd25519Recipient.stanzaType else {
            throw AgeError.unsupported(
                source: source, detail: "\(PrintableText.escaped(type, limit: 40, marksCut: true)) keys as recipients (age encrypts to ssh-rsa and ssh-ed25519 keys only)")
        }
        let decoded: DecodedKey
        do {
            decoded = try KeyDecoder.decode(Array("\(type) \(blob)".utf8), source: source)
        } catch {
            throw converted(error, source: source)
        }
        guard case .publicKey(let key) = decoded else {
            throw AgeError.invalidKey(source: source, detail: "not an OpenSSH public key line")
        }
        return try recipient(publicKey: key, source: source)
    }

    /// Why a line is not a key line.
    struct NotAKeyLine: Error {}

    /// The key type and base64 blob of an `authorized_keys` line: its first two fields when the
    /// first is a key type, else the two fields after the options, which end at the first blank
    /// outside double quotes, where `\"` is a quote that does not open or close (OpenSSH's
    /// rule). A line whose quotes do not close is not a key line.
    static func keyFields(of line: String) throws(NotAKeyLine) -> (type: String, blob: String) {
        func isKeyType(_ field: Substring) -> Bool { sshKeyTypePrefixes.contains { field.hasPrefix($0) } }
        let blanks: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        let text = line.drop(while: blanks)
        let plain = text.split(maxSplits: 2, whereSeparator: blanks)
        if plain.count >= 2, isKeyType(plain[0]) { return (String(plain[0]), String(plain[1])) }
        // Skip the options as sshkey_advance_past_options does.
        var index = text.startIndex
        var quoted = false
        while index < text.endIndex, quoted || !blanks(text[index]) {
            let next = text.index(after: index)
            if text[index] == "\\", next < text.endIndex, text[next] == "\"" {
                index = text.index(after: next)
                continue
            }
            if text[index] == "\"" { quoted.toggle() }
            index = next
        }
        guard !quoted else { throw NotAKeyLine() }
        let rest = text[index...].drop(while: blanks).split(maxSplits: 2, whereSeparator: blanks)
        guard rest.count >= 2, isKeyType(rest[0]) else { throw NotAKeyLine() }
        return (String(rest[0]), String(rest[1]))
    }

    /// The recipient for `key`: `ssh-rsa` for RSA keys, `ssh-ed25519` for Ed25519 keys.
    ///
    /// - Throws: ``AgeError/unsupported(source:detail:)`` for ECDSA keys;
    ///   ``AgeError/invalidKey(source:detail:)`` for RSA keys under 2048 bits.
    public static func recipient(publicKey key: PublicKey, source: String) throws -> any AgeRecipient {
        if key.rsaKey != nil { return try SSHRSARecipient(publicKey: key, source: source) }
        if key.ed25519Key != nil { return try SSHEd25519Recipient(publicKey: key, source: source) }
        throw AgeError.unsupported(source: source, detail: "\(key.kind) as a recipient (age encrypts to RSA and Ed25519 keys only)")
    }

    /// The identity for `key`: `ssh-rsa` for RSA keys, `ssh-ed25519` for Ed25519 keys.
    ///
    /// - Throws: ``AgeError/unsupported(source:detail:)`` for ECDSA keys.
    public static func identity(privateKey key: PrivateKey, source: String) throws -> any AgeKeyPairIdentity {
        if key.rsaKey != nil { return try SSHRSAIdentity(privateKey: key, source: source) }
        if key.ed25519Key != nil { return try SSHEd25519Identity(privateKey: key, source: source) }
        throw AgeError.unsupported(source: source, detail: "\(key.kind) as an identity (age decrypts with RSA and Ed25519 keys only)")
    }

    /// The stanza tag of a key: the canonical unpadded base64 of the first four bytes of
    /// SHA-256 over its SSH wire format.
    static func tag(_ wireFormat: [UInt8]) -> String {
        Base64.encodeUnpadded(Array(SHA256.hash(data: wireFormat).prefix(4)))
    }

    /// The error for a stanza tagged for this key that does not open.
    static func doesNotOpen(type: String, source: String) -> AgeError {
        .stanzaDoesNotOpen(
            source: source, detail: "the \(type) stanza for this key does not open with it (the file was altered or damaged)")
    }

    /// A key line quoted for messages: escaped and cut short.
    static func quoted(_ line: String) -> String {
        "\"" + PrintableText.escaped(line, limit: 60, marksCut: true) + "\""
    }

    /// SignetCore's error about a key, as this module's.
    static func converted(_ error: any Error, source: String) -> AgeError {
        guard let error = error as? SignetCoreError else {
            return error as? AgeError ?? .invalidKey(source: source, detail: String(describing: error))
        }
        switch error {
        case .weakKey(_, let bits):
            return .invalidKey(
                source: source, detail: "an RSA key of \(bits) bits is too small: age requires \(SSHRSARecipient.minimumBits) or more")
        case .unsupported(_, let detail): return .unsupported(source: source, detail: detail)
        case .malformed(_, let detail): return .invalidKey(source: source, detail: detail)
        default: return .invalidKey(source: source, detail: error.description)
        }
    }
}
