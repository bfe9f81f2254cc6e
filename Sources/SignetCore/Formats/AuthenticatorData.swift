/// WebAuthn's authenticator data (WebAuthn Level 3 §6.1), which App Attest reuses: the
/// relying party's hash, flags, the signature counter and, when flagged, the attested
/// credential (its id and COSE key) and extensions.
public struct AuthenticatorData: Sendable {
    /// The flags byte.
    public struct Flags: OptionSet, Sendable, Hashable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// UP: the user was present.
        public static let userPresent = Flags(rawValue: 0x01)
        /// UV: the user was verified.
        public static let userVerified = Flags(rawValue: 0x04)
        /// BE: the credential may be backed up (synced).
        public static let backupEligible = Flags(rawValue: 0x08)
        /// BS: the credential is backed up.
        public static let backedUp = Flags(rawValue: 0x10)
        /// AT: attested credential data follows the counter.
        public static let attestedCredentialData = Flags(rawValue: 0x40)
        /// ED: extension data follows.
        public static let extensionData = Flags(rawValue: 0x80)
    }

    /// The credential an attestation creates.
    public struct AttestedCredential: Sendable {
        /// The authenticator's model (App Attest: `appattestdevelop` or `appattest` and seven
        /// zero bytes).
        public let aaguid: [UInt8]
        /// The credential's id.
        public let credentialID: [UInt8]
        /// The credential's public key.
        public let publicKey: COSEKey
        /// The COSE key as it was written.
        public let publicKeyCBOR: CBORValue
    }

    /// The whole structure, as received (signatures cover these bytes).
    public let bytes: [UInt8]
    /// SHA-256 of the relying party's id (App Attest: of the App ID).
    public let rpIDHash: [UInt8]
    /// The flags.
    public let flags: Flags
    /// The signature counter.
    public let signCount: UInt32
    /// The attested credential, when ``Flags/attestedCredentialData`` is set.
    public let attestedCredential: AttestedCredential?
    /// The extensions map, when ``Flags/extensionData`` is set.
    public let extensions: CBORValue?
    /// How many bytes follow what the flags announce (accepted only up to the caller's bound).
    public let trailingByteCount: Int

    /// The most a credential id may have (WebAuthn Level 3: 1023 bytes).
    public static let maximumCredentialIDLength = 1023

    /// Reads authenticator data; `source` names it in errors. Bytes after what the flags
    /// announce are refused unless there are at most `maximumTrailingBytes` of them (App Attest
    /// objects carry a few).
    /// - Throws: ``SignetCoreError/malformed(source:detail:)`` (and COSE key errors).
    public init(_ bytes: [UInt8], source: String, maximumTrailingBytes: Int = 0) throws {
        guard bytes.count >= 37 else {
            throw SignetCoreError.malformed(source: source, detail: "authenticator data is \(bytes.count) bytes; it has at least 37")
        }
        self.bytes = bytes
        rpIDHash = Array(bytes[0..<32])
        flags = Flags(rawValue: bytes[32])
        signCount = bytes[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
        var offset = 37
        if flags.contains(.attestedCredentialData) {
            guard bytes.count >= offset + 18 else {
                throw SignetCoreError.malformed(source: source, detail: "authenticator data ends inside the attested credential data")
            }
            let aaguid = Array(bytes[offset..<(offset + 16)])
            let length = Int(bytes[offset + 16]) << 8 | Int(bytes[offset + 17])
            offset += 18
            guard length <= Self.maximumCredentialIDLength, bytes.count >= offset + length else {
                throw SignetCoreError.malformed(
                    source: source, detail: "the credential id's length \(length) is over \(Self.maximumCredentialIDLength) or runs past the end")
            }
            let credentialID = Array(bytes[offset..<(offset + length)])
            offset += length
            let (keyValue, end) = try CBOR.decodePrefix(bytes, at: offset, source: source + " (credential public key)")
            attestedCredential = AttestedCredential(
                aaguid: aaguid, credentialID: credentialID, publicKey: try COSEKey(keyValue, source: source + " (credential public key)"),
                publicKeyCBOR: keyValue)
            offset = end
        } else {
            attestedCredential = nil
        }
        if flags.contains(.extensionData) {
            let (value, end) = try CBOR.decodePrefix(bytes, at: offset, source: source + " (extensions)")
            guard value.mapValue != nil else { throw SignetCoreError.malformed(source: source, detail: "the extensions are \(value.kind), not a map") }
            extensions = value
            offset = end
        } else {
            extensions = nil
        }
        trailingByteCount = bytes.count - offset
        guard trailingByteCount <= maximumTrailingBytes else {
            throw SignetCoreError.malformed(
                source: source, detail: "\(trailingByteCount) byte(s) follow what the flags announce (at most \(maximumTrailingBytes) accepted)")
        }
    }
}
