import Foundation
import SignetCore
import Testing

/// Every key type through every format it fits: encode, decode with format detection, and
/// check that the same key comes back (same fingerprint, same bytes when re-encoded).
@Suite struct KeyFormatRoundTripTests {
    /// The private-key formats that fit a kind of key; the encoder refuses the others.
    static func privateFormats(for kind: KeyKind) -> Set<PrivateKeyFormat> {
        switch kind {
        case .rsa: return [.pem, .der, .pkcs1, .pkcs1DER, .jwk, .ios]
        case .p256, .p384: return [.pem, .der, .sec1, .sec1DER, .jwk, .ios]
        case .ed25519: return [.pem, .der, .jwk]  // iOS's SecKey has no Ed25519 private keys
        }
    }

    /// The public-key formats that fit a kind of key.
    static func publicFormats(for kind: KeyKind) -> Set<PublicKeyFormat> {
        switch kind {
        case .rsa: return Set(PublicKeyFormat.allCases)
        case .p256, .p384, .ed25519: return [.pem, .der, .openssh, .jwk, .ios]
        }
    }

    /// The PEM label each PEM private format writes.
    static func pemLabel(_ format: PrivateKeyFormat) -> String? {
        switch format {
        case .pem: return "PRIVATE KEY"
        case .pkcs1: return "RSA PRIVATE KEY"
        case .sec1: return "EC PRIVATE KEY"
        default: return nil
        }
    }

    @Test("every private format round-trips", arguments: KeyTestSupport.fastTypes)
    func privateKeyRoundTrip(type: KeyGenerationType) throws {
        let key = try PrivateKey.generate(type)
        #expect(key.kind == KeyTestSupport.kind(of: type))
        let fitting = Self.privateFormats(for: key.kind)
        for format in PrivateKeyFormat.allCases {
            let source = "\(type.rawValue).\(format.rawValue)"
            guard fitting.contains(format) else {
                let error = try KeyTestSupport.thrown { try key.encoded(as: format) }
                KeyTestSupport.check(error, is: "invalidArgument", mentioning: format == .ios ? "Ed25519" : format.rawValue)
                continue
            }
            let encoded = try key.encoded(as: format)
            #expect(!encoded.isEmpty, "\(source)")
            if format.isBinary {
                #expect(encoded.first == 0x30, "\(source) should be a DER SEQUENCE")
            } else {
                #expect(String(validating: encoded, as: UTF8.self) != nil, "\(source) should be UTF-8 text")
                #expect(encoded.last == UInt8(ascii: "\n"), "\(source) should end with a newline")
            }
            if let label = Self.pemLabel(format) {
                let text = String(decoding: encoded, as: UTF8.self)
                #expect(text.hasPrefix("-----BEGIN \(label)-----\n"), "\(source)")
                #expect(text.hasSuffix("-----END \(label)-----\n"), "\(source)")
                // openssl's layout: no body line longer than 64 characters.
                #expect(text.split(separator: "\n").allSatisfy { $0.count <= 64 }, "\(source)")
            }

            let decoded = try KeyDecoder.decode(encoded, source: source)
            #expect(!decoded.needsPassphrase, "\(source)")
            let back = try #require(decoded.privateKeyValue, "\(source) should decode to a private key")
            #expect(back.kind == key.kind, "\(source)")
            #expect(back.publicKey == key.publicKey, "\(source)")
            #expect(back.publicKey.fingerprint == key.publicKey.fingerprint, "\(source)")
            // The private half must survive too: re-encoding gives the same bytes.
            let reencoded = try back.encoded(as: format)
            #expect(reencoded == encoded, "\(source) re-encodes differently")
            let backPKCS8 = try back.encoded(as: .der), originalPKCS8 = try key.encoded(as: .der)
            #expect(backPKCS8 == originalPKCS8, "\(source) lost private key material")
        }
    }

    @Test("every public format round-trips", arguments: KeyTestSupport.fastTypes)
    func publicKeyRoundTrip(type: KeyGenerationType) throws {
        let publicKey = try PrivateKey.generate(type).publicKey
        let fitting = Self.publicFormats(for: publicKey.kind)
        for format in PublicKeyFormat.allCases {
            let source = "\(type.rawValue).pub.\(format.rawValue)"
            guard fitting.contains(format) else {
                let error = try KeyTestSupport.thrown { try publicKey.encoded(as: format) }
                KeyTestSupport.check(error, is: "invalidArgument", mentioning: format.rawValue, "RSA")
                continue
            }
            let encoded = try publicKey.encoded(as: format)
            if format.isBinary { #expect(encoded.first == 0x30, "\(source) should be a DER SEQUENCE") }
            let decoded = try KeyDecoder.decode(encoded, source: source)
            let back = try #require(decoded.publicKeyValue, "\(source) should decode to a public key")
            #expect(back == publicKey, "\(source)")
            #expect(back.kind == publicKey.kind, "\(source)")
            #expect(back.spkiDER == publicKey.spkiDER, "\(source)")
            #expect(back.fingerprint == publicKey.fingerprint, "\(source)")
            let reencoded = try back.encoded(as: format)
            #expect(reencoded == encoded, "\(source) re-encodes differently")
        }
    }

    @Test("a private key decoded as a public key's source yields the same fingerprint", arguments: KeyTestSupport.fastTypes)
    func privateAndPublicAgree(type: KeyGenerationType) throws {
        let key = try PrivateKey.generate(type)
        let privateDecoded = try KeyDecoder.decode(key.encoded(as: .pem), source: "k")
        let publicDecoded = try KeyDecoder.decode(key.publicKey.encoded(as: .pem), source: "p")
        let fromPrivate = try #require(privateDecoded.privateKeyValue)
        let fromPublic = try #require(publicDecoded.publicKeyValue)
        #expect(fromPrivate.publicKey.fingerprint == fromPublic.fingerprint)
        let spkiDER = try key.publicKey.encoded(as: .der)
        #expect(fromPublic.spkiDER == spkiDER)
    }

    @Test("OpenSSH lines carry their type and comment", arguments: KeyTestSupport.fastTypes)
    func openSSHLine(type: KeyGenerationType) throws {
        let publicKey = SharedTestKeys.key(type).publicKey
        let expectedType: String
        switch publicKey.kind {
        case .rsa: expectedType = "ssh-rsa"
        case .p256: expectedType = "ecdsa-sha2-nistp256"
        case .p384: expectedType = "ecdsa-sha2-nistp384"
        case .ed25519: expectedType = "ssh-ed25519"
        }
        let line = String(decoding: try publicKey.encoded(as: .openssh, comment: "alice@example.org"), as: UTF8.self)
        let fields = line.split(separator: " ")
        #expect(fields.count == 3)
        #expect(fields.first.map(String.init) == expectedType)
        #expect(line.hasSuffix(" alice@example.org\n"))
        let decoded = try KeyDecoder.decode(Array(line.utf8), source: "line")
        let back = try #require(decoded.publicKeyValue)
        #expect(back == publicKey)
        // Without a comment: two fields.
        let bare = String(decoding: try publicKey.encoded(as: .openssh), as: UTF8.self)
        #expect(bare.split(separator: " ").count == 2)
    }

    @Test("a public JWK's kid is the fingerprint", arguments: KeyTestSupport.fastTypes)
    func jwkKid(type: KeyGenerationType) throws {
        let publicKey = SharedTestKeys.key(type).publicKey
        let publicJWK = try publicKey.encoded(as: .jwk)
        let json = try JSONSerialization.jsonObject(with: Data(publicJWK)) as? [String: Any]
        let object = try #require(json)
        #expect(object["kid"] as? String == publicKey.fingerprint.description)
        #expect(object["d"] == nil, "a public JWK must not hold a private value")
        let privateJWK = try SharedTestKeys.key(type).encoded(as: .jwk)
        let privateJSON = try JSONSerialization.jsonObject(with: Data(privateJWK))
        #expect((privateJSON as? [String: Any])?["d"] is String)
    }

    @Test("an Ed25519 iOS raw public key decodes whatever its first byte", arguments: [UInt8(0x30), UInt8(0x04)])
    func ed25519RawFirstByte(first: UInt8) throws {
        // The raw form is 32 arbitrary bytes: 1 key in 256 starts with 0x30 (the DER SEQUENCE tag)
        // and 1 in 256 with 0x04 (the X9.63 point prefix). Neither may be mistaken for those forms.
        var found: PublicKey?
        for _ in 0..<10_000 {
            let candidate = try PrivateKey.generate(.ed25519).publicKey
            if candidate.spkiDER.suffix(32).first == first {
                found = candidate
                break
            }
        }
        let publicKey = try #require(found)
        let encoded = try publicKey.encoded(as: .ios)
        let decoded = try KeyDecoder.decode(encoded, source: "ed25519.ios")
        #expect(decoded.publicKeyValue == publicKey)
    }

    // MARK: Encrypted PKCS#8

    @Test("encrypted PKCS#8 PEM round-trips with the right passphrase", arguments: KeyTestSupport.fastTypes)
    func encryptedPEMRoundTrip(type: KeyGenerationType) throws {
        let key = try PrivateKey.generate(type)
        let passphrase = KeyTestSupport.secret("correct horse battery staple")
        let encoded = try key.encoded(as: .pem, passphrase: passphrase)
        let text = String(decoding: encoded, as: UTF8.self)
        #expect(text.hasPrefix("-----BEGIN ENCRYPTED PRIVATE KEY-----\n"))
        #expect(text.hasSuffix("-----END ENCRYPTED PRIVATE KEY-----\n"))
        let unencrypted = try key.encoded(as: .pem)
        #expect(encoded != unencrypted)

        let decoded = try KeyDecoder.decode(encoded, source: "enc.pem")
        #expect(decoded.needsPassphrase)
        #expect(decoded.encryptedValue != nil)
        let decrypted = try decoded.decrypt(passphrase: KeyTestSupport.secret("correct horse battery staple"), source: "enc.pem")
        #expect(!decrypted.needsPassphrase)
        let back = try #require(decrypted.privateKeyValue)
        #expect(back.publicKey.fingerprint == key.publicKey.fingerprint)
        let backPKCS8 = try back.encoded(as: .der), originalPKCS8 = try key.encoded(as: .der)
        #expect(backPKCS8 == originalPKCS8)
    }

    @Test("encrypted PKCS#8 DER round-trips, and each encryption is fresh")
    func encryptedDERRoundTrip() throws {
        let key = SharedTestKeys.key(.ed25519)
        let passphrase = KeyTestSupport.secret("pässwörd ✓")
        let first = try key.encoded(as: .der, passphrase: passphrase)
        let second = try key.encoded(as: .der, passphrase: passphrase)
        #expect(first.first == 0x30)
        #expect(first != second, "salt and IV must be random")
        let decoded = try KeyDecoder.decode(first, source: "enc.der")
        let decrypted = try decoded.decrypt(passphrase: passphrase, source: "enc.der")
        let back = try #require(decrypted.privateKeyValue)
        #expect(back.publicKey == key.publicKey)
    }

    @Test(
        "a wrong passphrase is reported as such",
        arguments: ["wrong", "correct horse battery stapl", "correct horse battery staple ", "CORRECT HORSE BATTERY STAPLE"])
    func wrongPassphrase(_ wrong: String) throws {
        let key = SharedTestKeys.key(.p256)
        // Few iterations keep the test fast; the format is the same as the default's.
        let der = try EncryptedPrivateKey.encrypt(
            pkcs8: key.encoded(as: .der), passphrase: KeyTestSupport.secret("correct horse battery staple"), iterations: 1_000)
        let decoded = try KeyDecoder.decode(der, source: "secret.der")
        let error = try KeyTestSupport.thrown { try decoded.decrypt(passphrase: KeyTestSupport.secret(wrong), source: "secret.der") }
        #expect(error == .wrongPassphrase(source: "secret.der"))
        KeyTestSupport.check(error, is: "wrongPassphrase", mentioning: "secret.der", "wrong passphrase")
        #expect(error.category == .checkFailed)
        // The right one still works on the same value.
        let right = try decoded.decrypt(passphrase: KeyTestSupport.secret("correct horse battery staple"), source: "secret.der")
        #expect(right.privateKeyValue?.publicKey == key.publicKey)
    }

    @Test("the default encryption also rejects a wrong passphrase")
    func wrongPassphraseDefaultIterations() throws {
        let key = SharedTestKeys.key(.ed25519)
        let encoded = try key.encoded(as: .pem, passphrase: KeyTestSupport.secret("right"))
        let decoded = try KeyDecoder.decode(encoded, source: "k.pem")
        let error = try KeyTestSupport.thrown { try decoded.decrypt(passphrase: KeyTestSupport.secret("wrong"), source: "k.pem") }
        #expect(error == .wrongPassphrase(source: "k.pem"))
    }

    @Test("only PKCS#8 formats can be encrypted, and never with an empty passphrase")
    func encryptionRefusals() throws {
        let rsa = SharedTestKeys.key(.rsa2048)
        for format in [PrivateKeyFormat.pkcs1, .pkcs1DER, .jwk, .ios] {
            let error = try KeyTestSupport.thrown { try rsa.encoded(as: format, passphrase: KeyTestSupport.secret("x")) }
            KeyTestSupport.check(error, is: "invalidArgument", mentioning: "PKCS#8")
        }
        let empty = try KeyTestSupport.thrown { try rsa.encoded(as: .pem, passphrase: SecretBytes([UInt8]())) }
        KeyTestSupport.check(empty, is: "invalidArgument", mentioning: "empty")
    }

    @Test("decrypting an unencrypted key returns it unchanged")
    func decryptPlainKey() throws {
        let key = SharedTestKeys.key(.p384)
        let decoded = try KeyDecoder.decode(key.encoded(as: .pem), source: "plain.pem")
        let same = try decoded.decrypt(passphrase: KeyTestSupport.secret("anything"), source: "plain.pem")
        #expect(same.privateKeyValue?.publicKey == key.publicKey)
    }

    // MARK: Fingerprints

    @Test("fingerprints are sha256/ and 44 base64 characters", arguments: KeyTestSupport.fastTypes)
    func fingerprintFormat(type: KeyGenerationType) throws {
        let publicKey = SharedTestKeys.key(type).publicKey
        let text = publicKey.fingerprint.description
        #expect(text.hasPrefix("sha256/"))
        let body = String(text.dropFirst("sha256/".count))
        #expect(body.count == 44)
        #expect(body.hasSuffix("=") && !body.hasSuffix("=="))
        #expect(body.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "+/=".contains($0)) })
        let digest = try #require(Data(base64Encoded: body))
        #expect(digest.count == 32)
        #expect(Array(digest) == publicKey.fingerprint.bytes)
        // Parsing the text gives the same value back.
        #expect(KeyFingerprint(string: text) == publicKey.fingerprint)
        #expect(KeyFingerprint(spkiDER: publicKey.spkiDER) == publicKey.fingerprint)
    }

    @Test("different keys have different fingerprints")
    func fingerprintsDiffer() throws {
        let prints = Set(KeyTestSupport.fastTypes.map { SharedTestKeys.key($0).publicKey.fingerprint })
        #expect(prints.count == KeyTestSupport.fastTypes.count)
        let another = try PrivateKey.generate(.ed25519)
        #expect(another.publicKey.fingerprint != SharedTestKeys.key(.ed25519).publicKey.fingerprint)
    }

    @Test(
        "malformed fingerprint strings are rejected",
        arguments: [
            "", "sha256/", "sha1/" + String(repeating: "A", count: 43) + "=",
            "sha256/" + String(repeating: "A", count: 42) + "==",  // 31 bytes
            "sha256/" + String(repeating: "A", count: 47) + "=",  // 35 bytes
            "SHA256/" + String(repeating: "A", count: 43) + "=",
            "sha256/" + String(repeating: "A", count: 42) + "*=",
            "sha256/" + String(repeating: "A", count: 43),  // no padding: not 4-aligned
        ])
    func fingerprintParsingRejects(_ text: String) {
        #expect(KeyFingerprint(string: text) == nil)
    }

    @Test("a well-formed fingerprint string parses")
    func fingerprintParsingAccepts() throws {
        let text = "sha256/" + String(repeating: "A", count: 43) + "="
        let parsed = try #require(KeyFingerprint(string: text))
        #expect(parsed.bytes == [UInt8](repeating: 0, count: 32))
        #expect(parsed.description == text)
    }

    // MARK: Generation

    @Test("RSA-1024 generation is refused by default and allowed by policy")
    func weakGeneration() throws {
        let error = try KeyTestSupport.thrown { try PrivateKey.generate(.rsa1024) }
        #expect(error == .weakKey(source: "key generation", bits: 1024))
        #expect(KeyGenerationType.rsa1024.isWeak)
        #expect(KeyGenerationType.allCases.filter(\.isWeak) == [.rsa1024])
        let weak = try PrivateKey.generate(.rsa1024, policy: KeyPolicy(allowWeakRSA: true))
        #expect(weak.kind == .rsa(bits: 1024))
        // Such a key round-trips only under the same policy.
        let pem = try weak.encoded(as: .pem)
        let strictError = try KeyTestSupport.decodeError(pem, source: "weak.pem")
        #expect(strictError == .weakKey(source: "weak.pem", bits: 1024))
        let back = try KeyDecoder.decode(pem, source: "weak.pem", policy: KeyPolicy(allowWeakRSA: true))
        #expect(back.privateKeyValue?.publicKey == weak.publicKey)
    }
}
