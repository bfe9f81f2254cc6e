import SignetCore

/// Key decoding: the auto-detecting ``KeyDecoder`` and each format's decoder on its own.
///
/// Invariant: a key that decodes, re-encoded in every format that fits it, decodes to the same
/// key (compared by its public key's DER SPKI).
enum KeyTargets {
    /// Weak (1024–2047-bit) RSA keys are decoded too, so the fuzzer explores that path; the
    /// round trip uses the same policy.
    static let policy = KeyPolicy(allowWeakRSA: true)
    /// The passphrase of the encrypted seeds (as in Tests/SignetCoreTests/Vectors/keys).
    static let passphrase = "signet-test"
    /// PBKDF2 costs above this are not decrypted (OpenSSL writes 2048).
    static let maximumIterations = 4096

    static let all: TargetList = [
        ("key-auto", { KeyTargets.auto($0) }),
        ("key-pem", { KeyTargets.pem($0) }),
        ("key-der", { KeyTargets.format($0, .der, "key-der") }),
        ("key-pkcs1", { KeyTargets.format($0, .pkcs1, "key-pkcs1") }),
        ("key-pkcs8", { KeyTargets.format($0, .pkcs8, "key-pkcs8") }),
        ("key-pkcs8-encrypted", { KeyTargets.encrypted($0) }),
        ("key-sec1", { KeyTargets.format($0, .sec1, "key-sec1") }),
        ("key-spki", { KeyTargets.format($0, .spki, "key-spki") }),
        ("key-openssh", { KeyTargets.format($0, .openssh, "key-openssh") }),
        ("key-openssh-private", { KeyTargets.format($0, .opensshPrivate, "key-openssh-private") }),
        ("key-jwk", { KeyTargets.format($0, .jwk, "key-jwk") }),
        ("key-ios", { KeyTargets.format($0, .ios, "key-ios") }),
    ]

    /// `KeyDecoder.decode(_:source:policy:)`, then an encrypted key decrypted with the seeds'
    /// passphrase.
    static func auto(_ bytes: [UInt8]) {
        guard let decoded = try? KeyDecoder.decode(bytes, source: "fuzz input", policy: policy) else { return }
        roundTrip(decoded, "key-auto")
        if case .encryptedPrivateKey(let key) = decoded {
            decrypt(key, "key-auto")
        }
    }

    /// `PEM.decode(_:source:)` (every block re-encodes to itself), then the PEM key decoder.
    static func pem(_ bytes: [UInt8]) {
        let text = Fuzz.text(bytes)
        if let blocks = try? PEM.decode(text, source: "fuzz input") {
            for block in blocks {
                let again = try? PEM.decode(PEM.encode(label: block.label, der: block.der), source: "re-encoded")
                Fuzz.require(
                    again?.count == 1 && again?.first?.label == block.label && again?.first?.der == block.der, "key-pem",
                    "PEM block \"\(block.label)\" does not survive PEM.encode")
            }
        }
        format(bytes, .pem, "key-pem")
    }

    /// One format's decoder alone (`CoreFuzzing.decodeKey(_:as:policy:)`).
    static func format(_ bytes: [UInt8], _ format: CoreFuzzing.KeyFormat, _ target: String) {
        guard let decoded = try? CoreFuzzing.decodeKey(bytes, as: format, policy: policy) else { return }
        roundTrip(decoded, target)
        if case .encryptedPrivateKey(let key) = decoded {
            decrypt(key, target)
        }
    }

    /// `EncryptedPrivateKey(der:source:)` on DER, or on the first block of a PEM document,
    /// then decryption with the seeds' passphrase.
    static func encrypted(_ bytes: [UInt8]) {
        var der = bytes
        let text = Fuzz.text(bytes)
        if PEM.looksLikePEM(text) {
            guard let block = try? PEM.decode(text, source: "fuzz input").first else { return }
            der = block.der
        }
        guard let key = try? EncryptedPrivateKey(der: der, source: "fuzz input") else { return }
        decrypt(key, "key-pkcs8-encrypted")
    }

    static func decrypt(_ key: EncryptedPrivateKey, _ target: String) {
        let secret = SecretBytes(Array(passphrase.utf8))
        guard let decrypted = try? CoreFuzzing.decrypt(key, passphrase: secret, maximumIterations: maximumIterations, policy: policy)
        else { return }
        Fuzz.require(!decrypted.needsPassphrase, target, "a decrypted key still needs a passphrase")
        roundTrip(decrypted, target)
    }

    /// Re-encodes `decoded` in every format that fits it and decodes each with ``KeyDecoder``.
    static func roundTrip(_ decoded: DecodedKey, _ target: String) {
        switch decoded {
        case .publicKey(let key):
            for format in PublicKeyFormat.allCases {
                guard let encoded = try? key.encoded(as: format) else { continue }
                let again = try? KeyDecoder.decode(encoded, source: "re-encoded", policy: policy)
                guard case .publicKey(let back)? = again else {
                    Fuzz.require(false, target, "a \(key.kind) public key written as \(format.rawValue) does not decode as a public key")
                    return
                }
                Fuzz.require(back == key, target, "a \(key.kind) public key written as \(format.rawValue) decodes to another key")
            }
        case .privateKey(let key):
            let publicKey = key.publicKey
            for format in PrivateKeyFormat.allCases {
                guard let encoded = try? key.encoded(as: format) else { continue }
                let again = try? KeyDecoder.decode(encoded, source: "re-encoded", policy: policy)
                guard case .privateKey(let back)? = again else {
                    Fuzz.require(false, target, "a \(key.kind) private key written as \(format.rawValue) does not decode as a private key")
                    return
                }
                Fuzz.require(back.publicKey == publicKey, target, "a \(key.kind) private key written as \(format.rawValue) decodes to another key")
            }
        case .encryptedPrivateKey:
            break
        }
    }
}
