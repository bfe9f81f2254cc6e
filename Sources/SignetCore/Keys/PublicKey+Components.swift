extension PublicKey {
    /// An RSA public key from its modulus and public exponent (unsigned big-endian, leading
    /// zeros allowed), as a PKCS#11 token or a JWK gives them.
    ///
    /// - Parameters:
    ///   - source: names the key in messages (a file, a `pkcs11:` URI).
    ///   - policy: whether RSA keys of 1024 to 2047 bits are accepted.
    /// - Throws: ``SignetCoreError/weakKey(source:bits:)`` below 2048 bits under a strict
    ///   policy, ``SignetCoreError/unsupported(source:detail:)`` outside 1024 to 16384 bits,
    ///   ``SignetCoreError/malformed(source:detail:)`` for numbers that are not an RSA key.
    public init(rsaModulus: [UInt8], publicExponent: [UInt8], source: String, policy: KeyPolicy = .strict) throws {
        guard !rsaModulus.isEmpty, !publicExponent.isEmpty else {
            throw SignetCoreError.malformed(source: source, detail: "an RSA public key needs a modulus and a public exponent")
        }
        let pkcs1 = DERKey.serializeRSAPublicKey(n: rsaModulus, e: publicExponent)
        self = try KeyMaterial.rsaPublicKey(pkcs1: pkcs1, source: source, policy: policy)
    }

    /// A P-256 or P-384 public key from its X9.63 point (`0x04 ‖ X ‖ Y`, or the compressed
    /// `0x02`/`0x03 ‖ X`); `kind` is ``KeyKind/p256`` or ``KeyKind/p384``.
    ///
    /// - Throws: ``SignetCoreError/malformed(source:detail:)`` when the point is not on the
    ///   curve, ``SignetCoreError/invalidArgument(detail:)`` for another `kind`.
    public init(ecPoint: [UInt8], kind: KeyKind, source: String) throws {
        switch kind {
        case .p256: self = try KeyMaterial.ecPublicKey(point: ecPoint, curve: OID.prime256v1, source: source)
        case .p384: self = try KeyMaterial.ecPublicKey(point: ecPoint, curve: OID.secp384r1, source: source)
        default: throw SignetCoreError.invalidArgument(detail: "an EC point makes a P-256 or P-384 key, not \(kind)")
        }
    }

    /// An Ed25519 public key from its 32 bytes (RFC 8032).
    ///
    /// - Throws: ``SignetCoreError/malformed(source:detail:)`` for another length.
    public init(ed25519: [UInt8], source: String) throws {
        self = try KeyMaterial.ed25519PublicKey(raw: ed25519, source: source)
    }
}
