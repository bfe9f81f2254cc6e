import SignetCore
import SignetTestSupport
import Testing

/// WebAuthn authenticator data (the structure App Attest reuses), built by hand: every part the
/// flags announce, and each way it can be cut short, overlong or followed by more bytes.
@Suite("Authenticator data")
struct AuthenticatorDataTests {
    /// The relying party id hash: any 32 bytes.
    static let rpIDHash: [UInt8] = Array(UInt8(0xA0)..<UInt8(0xC0))
    /// The AAGUID of App Attest's development environment.
    static let aaguid: [UInt8] = Array("appattestdevelop".utf8)
    /// A genuine credential key: the COSE key of the App Attest sample veehaitch-ios-14.2
    /// (P-256, ES256), as `Vectors/cbor/cose-keys.json` holds it.
    static let keyHex =
        "a5010203262001215820ba8afbdff8503d19c262b02ad9d1b4542356b9933eff14a5b6f2e8d2059b55ff"
        + "2258208e6ee69ec388fce4e07ee81e300b3712149bd04ad35632d4646c579f9a400d0b"
    /// The extensions map: `{"credProtect": 2}`.
    static let extensions: CBORValue = .map([CBORMapEntry(.text("credProtect"), .unsigned(2))])
    /// UP, UV, AT and ED.
    static let allFlags: UInt8 = 0xC5

    /// Authenticator data with `flags`, the counter 0x01020304, then `rest`.
    static func authData(flags: UInt8, _ rest: [UInt8] = []) -> [UInt8] {
        rpIDHash + [flags, 0x01, 0x02, 0x03, 0x04] + rest
    }

    /// Attested credential data: the AAGUID, the id's length (`length`, else the id's own),
    /// the id and the key.
    static func credential(id: [UInt8], length: Int? = nil, key: [UInt8]) -> [UInt8] {
        let count = length ?? id.count
        return aaguid + [UInt8(count >> 8), UInt8(count & 0xFF)] + id + key
    }

    /// The full sample: every flag, a credential of id 09 08 07 and the genuine key, the
    /// extensions, then `trailing`.
    static func sample(trailing: [UInt8] = []) throws -> [UInt8] {
        let key = try CBORTestSupport.bytes(keyHex)
        return authData(flags: allFlags, credential(id: [9, 8, 7], key: key) + extensions.encoded + trailing)
    }

    @Test("every part the flags announce is read: RP id hash, flags, counter, credential id, COSE key, extensions")
    func everyPart() throws {
        let bytes = try Self.sample()
        let data = try AuthenticatorData(bytes, source: "authData")
        #expect(data.bytes == bytes)
        #expect(data.rpIDHash == Self.rpIDHash)
        #expect(data.flags == [.userPresent, .userVerified, .attestedCredentialData, .extensionData])
        #expect(!data.flags.contains(.backupEligible) && !data.flags.contains(.backedUp))
        #expect(data.signCount == 0x0102_0304)
        let credential = try #require(data.attestedCredential)
        #expect(credential.aaguid == Self.aaguid)
        #expect(credential.credentialID == [9, 8, 7])
        let key = try CBORTestSupport.bytes(Self.keyHex)
        let keyValue = try CBOR.decode(key, source: "key")
        #expect(credential.publicKeyCBOR == keyValue)
        #expect(credential.publicKey.algorithm == .es256)
        let x = Array(key[10..<42])
        let y = Array(key[45..<77])
        let expected = try PublicKey(ecPoint: [0x04] + x + y, kind: .p256, source: "key")
        #expect(credential.publicKey.key == expected)
        #expect(data.extensions == Self.extensions)
        #expect(data.trailingByteCount == 0)
    }

    @Test("with neither AT nor ED, 37 bytes are the whole; with ED alone, the extensions follow the counter")
    func fixedPartAndExtensions() throws {
        let plain = try AuthenticatorData(Self.authData(flags: 0x05), source: "plain")
        #expect(plain.attestedCredential == nil && plain.extensions == nil && plain.trailingByteCount == 0)
        #expect(plain.flags == [.userPresent, .userVerified])
        let withExtensions = try AuthenticatorData(Self.authData(flags: 0x81, Self.extensions.encoded), source: "extensions")
        #expect(withExtensions.attestedCredential == nil)
        #expect(withExtensions.extensions == Self.extensions)
    }

    @Test("cut short anywhere, it is refused as malformed; 36 bytes are too few for the fixed part")
    func truncated() throws {
        let error = try thrown(SignetCoreError.self) { try AuthenticatorData(Array(Self.authData(flags: 0x01).dropLast()), source: "authData") }
        expectError(error, is: "malformed", mentioning: ["authData: authenticator data is 36 bytes; it has at least 37"])
        let bytes = try Self.sample()
        for length in 0..<bytes.count {
            let cut = try thrown(SignetCoreError.self) { try AuthenticatorData(Array(bytes.prefix(length)), source: "authData") }
            #expect(cut.code == "malformed", "\(length) bytes: \(cut)")
        }
        let inside = try thrown(SignetCoreError.self) { try AuthenticatorData(Self.authData(flags: 0x41, Self.aaguid), source: "authData") }
        expectError(inside, is: "malformed", mentioning: ["ends inside the attested credential data"])
        let noExtensions = try thrown(SignetCoreError.self) { try AuthenticatorData(Self.authData(flags: 0x81), source: "authData") }
        expectError(noExtensions, is: "malformed", mentioning: ["authData (extensions): CBOR: the input ends inside an item (at byte 37)"])
    }

    @Test("a credential id of at most 1023 bytes is read; a longer one, or one past the end, is refused")
    func credentialIDLength() throws {
        let key = try CBORTestSupport.bytes(Self.keyHex)
        let longest = [UInt8](repeating: 0x11, count: 1023)
        let read = try AuthenticatorData(Self.authData(flags: 0x41, Self.credential(id: longest, key: key)), source: "authData")
        #expect(read.attestedCredential?.credentialID == longest)
        let tooLong = [UInt8](repeating: 0x11, count: 1024)
        let over = try thrown(SignetCoreError.self) {
            try AuthenticatorData(Self.authData(flags: 0x41, Self.credential(id: tooLong, key: key)), source: "authData")
        }
        expectError(over, is: "malformed", mentioning: ["the credential id's length 1024 is over 1023"])
        let largest = try thrown(SignetCoreError.self) {
            try AuthenticatorData(Self.authData(flags: 0x41, Self.credential(id: [9, 8, 7], length: 0xFFFF, key: key)), source: "authData")
        }
        expectError(largest, is: "malformed", mentioning: ["the credential id's length 65535 is over 1023"])
        let past = try thrown(SignetCoreError.self) {
            try AuthenticatorData(Self.authData(flags: 0x41, Self.credential(id: [9, 8, 7], length: 256, key: key)), source: "authData")
        }
        expectError(past, is: "malformed", mentioning: ["the credential id's length 256", "runs past the end"])
    }

    @Test("bytes after what the flags announce are refused by default and read up to maximumTrailingBytes")
    func trailingBytes() throws {
        let bytes = try Self.sample(trailing: [0xAA, 0xBB])
        let refused = try thrown(SignetCoreError.self) { try AuthenticatorData(bytes, source: "authData") }
        expectError(refused, is: "malformed", mentioning: ["2 byte(s) follow what the flags announce (at most 0 accepted)"])
        let one = try thrown(SignetCoreError.self) { try AuthenticatorData(bytes, source: "authData", maximumTrailingBytes: 1) }
        expectError(one, is: "malformed", mentioning: ["at most 1 accepted"])
        let read = try AuthenticatorData(bytes, source: "authData", maximumTrailingBytes: 2)
        #expect(read.trailingByteCount == 2)
        #expect(read.extensions == Self.extensions)
        // As Apple's newer attestations do: a CBOR map after the key, without the ED flag.
        let key = try CBORTestSupport.bytes(Self.keyHex)
        let appleStyle = Self.authData(flags: 0x40, Self.credential(id: [1], key: key) + Self.extensions.encoded)
        let apple = try AuthenticatorData(appleStyle, source: "authData", maximumTrailingBytes: 1024)
        #expect(apple.extensions == nil && apple.trailingByteCount == Self.extensions.encoded.count)
    }

    @Test("a credential key that is no usable COSE key, and extensions that are no map, are refused")
    func badParts() throws {
        let key = try CBOR.decode(CBORTestSupport.bytes(Self.keyHex), source: "key")
        var entries = try #require(key.mapValue)
        entries[1] = CBORMapEntry(CBORValue(3), CBORValue(-8))  // alg EdDSA on a P-256 key
        let mismatched = CBORValue.map(entries).encoded
        let error = try thrown(SignetCoreError.self) {
            try AuthenticatorData(Self.authData(flags: 0x41, Self.credential(id: [1], key: mismatched)), source: "authData")
        }
        expectError(error, is: "malformed", mentioning: ["authData (credential public key)", "names algorithm -8"])
        let notCBOR = try thrown(SignetCoreError.self) {
            try AuthenticatorData(Self.authData(flags: 0x41, Self.credential(id: [1], key: [0xFF])), source: "authData")
        }
        expectError(notCBOR, is: "malformed", mentioning: ["authData (credential public key): CBOR: a break outside an indefinite-length item (at byte 56)"])
        let array = try thrown(SignetCoreError.self) { try AuthenticatorData(Self.authData(flags: 0x81, [0x80]), source: "authData") }
        expectError(array, is: "malformed", mentioning: ["the extensions are an array, not a map"])
    }
}
