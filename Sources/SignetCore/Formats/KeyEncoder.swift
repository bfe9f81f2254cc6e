/// Output formats for private keys.
public enum PrivateKeyFormat: String, CaseIterable, Sendable {
    /// PKCS#8 PEM (`PRIVATE KEY`, or `ENCRYPTED PRIVATE KEY` with a passphrase). The default.
    case pem
    /// PKCS#8 DER.
    case der
    /// PKCS#1 `RSA PRIVATE KEY` PEM (RSA only).
    case pkcs1
    /// PKCS#1 DER (RSA only).
    case pkcs1DER = "pkcs1-der"
    /// SEC1 `EC PRIVATE KEY` PEM (P-256/P-384 only).
    case sec1
    /// SEC1 DER (P-256/P-384 only).
    case sec1DER = "sec1-der"
    /// A private JWK.
    case jwk
    /// Base64 of what iOS's `SecKeyCopyExternalRepresentation` returns for a private key:
    /// PKCS#1 for RSA, `04‖X‖Y‖D` for EC.
    case ios
}

/// Output formats for public keys.
public enum PublicKeyFormat: String, CaseIterable, Sendable {
    /// SPKI PEM (`PUBLIC KEY`). The default.
    case pem
    /// SPKI DER.
    case der
    /// PKCS#1 `RSA PUBLIC KEY` PEM (RSA only).
    case pkcs1
    /// PKCS#1 DER (RSA only).
    case pkcs1DER = "pkcs1-der"
    /// OpenSSH one-line format.
    case openssh
    /// A public JWK, with the SPKI fingerprint as `kid`.
    case jwk
    /// Base64 of what iOS's `SecKeyCopyExternalRepresentation` returns for a public key:
    /// PKCS#1 `RSAPublicKey` for RSA, the X9.63 point `04‖X‖Y` for EC, and the raw 32 bytes
    /// (CryptoKit's `rawRepresentation`) for Ed25519.
    case ios

    /// Whether the output is binary (and so unfit for a terminal).
    public var isBinary: Bool { self == .der || self == .pkcs1DER }
}

extension PrivateKeyFormat {
    /// Whether the output is binary (and so unfit for a terminal).
    public var isBinary: Bool { self == .der || self == .pkcs1DER || self == .sec1DER }
}

extension PrivateKey {
    /// Encodes the key. With a `passphrase`, the result is an encrypted PKCS#8 key (only
    /// the `pem` and `der` formats can be encrypted).
    public func encoded(as format: PrivateKeyFormat, passphrase: SecretBytes? = nil) throws -> [UInt8] {
        if passphrase != nil, format != .pem, format != .der {
            throw SignetCoreError.invalidArgument(detail: "only PKCS#8 keys (the pem or der format) can be encrypted")
        }
        switch format {
        case .pem, .der:
            var der = KeyMaterial.pkcs8DER(self)
            defer { SecretBytes.zero(&der) }
            if let passphrase {
                let encrypted = try EncryptedPrivateKey.encrypt(pkcs8: der, passphrase: passphrase)
                return format == .der ? encrypted : Array(PEM.encode(label: "ENCRYPTED PRIVATE KEY", der: encrypted).utf8)
            }
            return format == .der ? der : Array(PEM.encode(label: "PRIVATE KEY", der: der).utf8)
        case .pkcs1, .pkcs1DER:
            guard let der = KeyMaterial.rsaPKCS1PrivateDER(self) else { throw notFor(format) }
            return format == .pkcs1DER ? der : Array(PEM.encode(label: "RSA PRIVATE KEY", der: der).utf8)
        case .sec1, .sec1DER:
            let der = KeyMaterial.sec1DER(self)
            guard !der.isEmpty else { throw notFor(format) }
            return format == .sec1DER ? der : Array(PEM.encode(label: "EC PRIVATE KEY", der: der).utf8)
        case .jwk:
            return Array(try JWK.encode(self).utf8)
        case .ios:
            switch storage {
            case .rsa: return Array((Base64.encode(KeyMaterial.rsaPKCS1PrivateDER(self) ?? []) + "\n").utf8)
            case .p256(let k): return Array((Base64.encode(Array(k.x963Representation)) + "\n").utf8)
            case .p384(let k): return Array((Base64.encode(Array(k.x963Representation)) + "\n").utf8)
            case .ed25519:
                throw SignetCoreError.invalidArgument(detail: "iOS's SecKey has no Ed25519 private keys; use the pem or jwk format")
            }
        }
    }

    private func notFor(_ format: PrivateKeyFormat) -> SignetCoreError {
        .invalidArgument(detail: "format \(format.rawValue) does not fit \(kind) (use pem, der or jwk)")
    }
}

extension PublicKey {
    /// Encodes the key; `comment` ends OpenSSH lines.
    public func encoded(as format: PublicKeyFormat, comment: String? = nil) throws -> [UInt8] {
        switch format {
        case .pem: return Array(PEM.encode(label: "PUBLIC KEY", der: spkiDER).utf8)
        case .der: return spkiDER
        case .pkcs1, .pkcs1DER:
            guard let der = KeyMaterial.rsaPKCS1PublicDER(self) else {
                throw SignetCoreError.invalidArgument(detail: "format \(format.rawValue) is for RSA keys only, and this is \(kind)")
            }
            return format == .pkcs1DER ? der : Array(PEM.encode(label: "RSA PUBLIC KEY", der: der).utf8)
        case .openssh: return Array(OpenSSHPublicKey.encode(self, comment: comment).utf8)
        case .jwk: return Array(JWK.encode(self).utf8)
        case .ios:
            let raw: [UInt8]
            switch storage {
            case .rsa: raw = KeyMaterial.rsaPKCS1PublicDER(self) ?? []
            case .p256(let k): raw = Array(k.x963Representation)
            case .p384(let k): raw = Array(k.x963Representation)
            case .ed25519(let k): raw = Array(k.rawRepresentation)
            }
            return Array((Base64.encode(raw) + "\n").utf8)
        }
    }
}
