import Foundation
import SignetCore
import Testing

/// Well-formed input the decoder must refuse, or accept only under a policy: broken JWKs and
/// OpenSSH lines, weak RSA, curves and encryptions we do not support, and formats that need
/// converting first (with the hint that says how).
@Suite struct KeyDecoderRefusalTests {
    // MARK: JWK

    /// The JWK of a generated key as a dictionary, to damage.
    static func jwk(_ type: KeyGenerationType, privateKey: Bool = false) throws -> [String: Any] {
        let key = SharedTestKeys.key(type)
        let bytes = try privateKey ? key.encoded(as: .jwk) : key.publicKey.encoded(as: .jwk)
        let object = try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
        return try #require(object)
    }

    static func jwkError(_ object: [String: Any], sourceLocation: SourceLocation = #_sourceLocation) throws -> SignetCoreError {
        let bytes = Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
        return try KeyTestSupport.decodeError(bytes, source: "key.jwk", sourceLocation: sourceLocation)
    }

    @Test("JWK with a required member missing")
    func jwkMissingMembers() throws {
        let cases: [(KeyGenerationType, Bool, String)] = [
            (.p256, false, "x"), (.p256, false, "y"), (.p384, true, "y"), (.rsa2048, false, "n"), (.rsa2048, false, "e"),
            (.rsa2048, true, "p"), (.rsa2048, true, "qi"), (.ed25519, false, "x"), (.ed25519, true, "x"),
        ]
        for (type, isPrivate, member) in cases {
            var object = try Self.jwk(type, privateKey: isPrivate)
            #expect(object[member] != nil, "the generated JWK should have \(member)")
            object[member] = nil
            let error = try Self.jwkError(object)
            KeyTestSupport.check(error, is: "malformed", mentioning: "key.jwk: ", "JWK is missing \"\(member)\"")
        }
    }

    @Test("JWK without kty, or with kty of the wrong JSON type")
    func jwkKty() throws {
        var object = try Self.jwk(.p256)
        object["kty"] = nil
        KeyTestSupport.check(try Self.jwkError(object), is: "malformed", mentioning: "key.jwk: ", "not a valid JWK", "missing \"kty\"")
        object["kty"] = 7
        KeyTestSupport.check(try Self.jwkError(object), is: "malformed", mentioning: "not a valid JWK", "wrong type at \"kty\"")
    }

    @Test("JWK with a key type we do not support", arguments: ["oct", "rsa", "ec", "DSA", ""])
    func jwkWrongKty(_ kty: String) throws {
        var object = try Self.jwk(.p256)
        object["kty"] = kty
        let error = try Self.jwkError(object)
        KeyTestSupport.check(error, is: "unsupported", mentioning: "key.jwk: unsupported: ", "JWK key type \(kty)")
    }

    @Test("JWK on a curve we do not support", arguments: [("EC", "P-521"), ("EC", "secp256k1"), ("OKP", "X25519"), ("OKP", "Ed448"), ("EC", "Ed25519")])
    func jwkWrongCurve(kty: String, crv: String) throws {
        var object = try Self.jwk(kty == "EC" ? .p256 : .ed25519)
        object["crv"] = crv
        let error = try Self.jwkError(object)
        KeyTestSupport.check(error, is: "unsupported", mentioning: "key.jwk: unsupported: ", "JWK key type \(kty) on curve \(crv)")
    }

    @Test("JWK EC without a curve")
    func jwkNoCurve() throws {
        var object = try Self.jwk(.p384)
        object["crv"] = nil
        KeyTestSupport.check(try Self.jwkError(object), is: "unsupported", mentioning: "JWK key type EC")
    }

    @Test("JWK with damaged values")
    func jwkBadValues() throws {
        var object = try Self.jwk(.p256)
        object["x"] = "not base64url!"
        KeyTestSupport.check(try Self.jwkError(object), is: "malformed", mentioning: "\"x\" is not base64url")

        object = try Self.jwk(.p256)
        object["y"] = Base64.encodeURL([UInt8](repeating: 7, count: 31))
        KeyTestSupport.check(try Self.jwkError(object), is: "malformed", mentioning: "must be 32 bytes for P-256")

        object = try Self.jwk(.p256)
        object["y"] = object["x"]  // (x, x) is not on the curve, but for a chance of 1 in 2^128
        KeyTestSupport.check(try Self.jwkError(object), is: "malformed", mentioning: "not a valid point")

        // A private value from another key.
        object = try Self.jwk(.ed25519, privateKey: true)
        let otherEd25519 = try PrivateKey.generate(.ed25519).encoded(as: .jwk)
        let otherObject = try JSONSerialization.jsonObject(with: Data(otherEd25519)) as? [String: Any]
        let other = try #require(otherObject)
        object["d"] = other["d"]
        KeyTestSupport.check(try Self.jwkError(object), is: "malformed", mentioning: "not the Ed25519 private key for \"x\"")

        object = try Self.jwk(.p256, privateKey: true)
        let otherP256 = try PrivateKey.generate(.p256).encoded(as: .jwk)
        let otherECObject = try JSONSerialization.jsonObject(with: Data(otherP256)) as? [String: Any]
        let otherEC = try #require(otherECObject)
        object["d"] = otherEC["d"]
        KeyTestSupport.check(try Self.jwkError(object), is: "malformed", mentioning: "does not match")
    }

    @Test("text that starts like JSON but is not")
    func jwkNotJSON() throws {
        let error = try KeyTestSupport.decodeError(text: "{\"kty\": \"EC\",", source: "broken.jwk")
        KeyTestSupport.check(error, is: "malformed", mentioning: "broken.jwk: ", "not a valid JWK")
    }

    // MARK: OpenSSH public keys

    static func sshString(_ bytes: [UInt8]) -> [UInt8] {
        let n = UInt32(bytes.count)
        return [UInt8(n >> 24), UInt8(n >> 16 & 0xff), UInt8(n >> 8 & 0xff), UInt8(n & 0xff)] + bytes
    }

    static func sshLine(_ type: String, _ blob: [UInt8]) -> String {
        "\(type) \(Data(blob).base64EncodedString()) test@example"
    }

    @Test("OpenSSH line whose blob is not base64")
    func openSSHBadBase64() throws {
        let error = try KeyTestSupport.decodeError(text: "ssh-ed25519 AAAA$$$$AAAA test\n", source: "id.pub")
        KeyTestSupport.check(error, is: "malformed", mentioning: "id.pub: ", "not valid base64")
    }

    @Test("OpenSSH line with a type only")
    func openSSHTypeOnly() throws {
        let error = try KeyTestSupport.decodeError(text: "ssh-ed25519\n", source: "id.pub")
        KeyTestSupport.check(error, is: "malformed", mentioning: "id.pub: ", "needs a type and a base64 blob")
    }

    @Test("OpenSSH line whose type does not match the type inside the blob", arguments: [
        (KeyGenerationType.ed25519, "ssh-rsa"), (KeyGenerationType.p384, "ecdsa-sha2-nistp256"),
        (KeyGenerationType.rsa2048, "ssh-ed25519"),
    ] as [(KeyGenerationType, String)])
    func openSSHTypeMismatch(type: KeyGenerationType, claimed: String) throws {
        let line = String(decoding: try SharedTestKeys.key(type).publicKey.encoded(as: .openssh), as: UTF8.self)
        let fields = line.split(separator: " ")
        let forged = "\(claimed) \(fields[1])\n"
        let error = try KeyTestSupport.decodeError(text: forged, source: "forged.pub")
        KeyTestSupport.check(
            error, is: "malformed", mentioning: "forged.pub: ", "OpenSSH \(claimed) key", "does not match \"\(claimed)\"")
    }

    @Test("OpenSSH blobs that are truncated, too long or inconsistent")
    func openSSHBadBlobs() throws {
        let raw = [UInt8](repeating: 0x11, count: 32)
        let typeField = Self.sshString(Array("ssh-ed25519".utf8))
        let truncated = typeField + [0, 0, 0, 32] + raw.prefix(16)
        KeyTestSupport.check(
            try KeyTestSupport.decodeError(text: Self.sshLine("ssh-ed25519", truncated), source: "t.pub"),
            is: "malformed", mentioning: "t.pub: ", "truncated or has extra data")
        let extra = typeField + Self.sshString(raw) + [0, 0, 0, 0]
        KeyTestSupport.check(
            try KeyTestSupport.decodeError(text: Self.sshLine("ssh-ed25519", extra), source: "x.pub"),
            is: "malformed", mentioning: "x.pub: ", "truncated or has extra data")
        let short = typeField + Self.sshString(Array(raw.prefix(31)))
        KeyTestSupport.check(
            try KeyTestSupport.decodeError(text: Self.sshLine("ssh-ed25519", short), source: "s.pub"),
            is: "malformed", mentioning: "s.pub: ", "32 bytes", "found 31")
        let iosText = String(decoding: try SharedTestKeys.key(.p256).publicKey.encoded(as: .ios), as: UTF8.self)
        let point = try #require(Data(base64Encoded: iosText.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(point.count == 65)
        let wrongCurve = Self.sshString(Array("ecdsa-sha2-nistp256".utf8)) + Self.sshString(Array("nistp384".utf8)) + Self.sshString(Array(point))
        KeyTestSupport.check(
            try KeyTestSupport.decodeError(text: Self.sshLine("ecdsa-sha2-nistp256", wrongCurve), source: "c.pub"),
            is: "malformed", mentioning: "c.pub: ", "curve name does not match")
    }

    @Test("OpenSSH key types we do not support")
    func openSSHUnsupportedType() throws {
        let blob = Self.sshString(Array("ssh-dss".utf8)) + Self.sshString([1]) + Self.sshString([2]) + Self.sshString([3]) + Self.sshString([4])
        let error = try KeyTestSupport.decodeError(text: Self.sshLine("ssh-dss", blob), source: "dsa.pub")
        KeyTestSupport.check(error, is: "unsupported", mentioning: "dsa.pub: unsupported: ", "ssh-dss")
    }

    @Test("a passphrase-protected OpenSSH private key is refused with the way to unlock a copy")
    func openSSHPrivateKey() throws {
        let error = try KeyTestSupport.decodeError(try KeyTestSupport.fixture("openssh-ed25519-encrypted.key"), source: "id_ed25519")
        KeyTestSupport.check(
            error, is: "unsupported", mentioning: "id_ed25519: unsupported: ", "passphrase-protected OpenSSH private keys",
            "ssh-keygen -p -N \"\" -f COPY")
    }

    // MARK: Encryption we cannot read

    @Test("legacy Proc-Type PEM encryption is refused with a conversion hint")
    func legacyEncryptedPEM() throws {
        let error = try KeyTestSupport.decodeError(try KeyTestSupport.fixture("p256-legacy-encrypted.pem"), source: "legacy.pem")
        KeyTestSupport.check(
            error, is: "unsupported", mentioning: "legacy.pem: unsupported: ", "legacy PEM encryption", "Proc-Type", "line 1",
            "openssl pkcs8 -topk8")
    }

    @Test("encrypted PKCS#8 with a scheme other than PBES2/PBKDF2", arguments: [
        ("p256-scrypt.pem", "scrypt", "only PBKDF2"), ("p256-pbes1-3des.pem", "PKCS#12 PBE with 3DES", "only PBES2"),
    ])
    func unsupportedEncryption(file: String, scheme: String, supported: String) throws {
        let error = try KeyTestSupport.decodeError(try KeyTestSupport.fixture(file), source: file)
        KeyTestSupport.check(error, is: "unsupported", mentioning: "\(file): unsupported: ", scheme, supported)
    }

    // MARK: Weak RSA

    @Test("RSA-1024 is refused by default and accepted by policy")
    func weakRSA() throws {
        let bytes = try KeyTestSupport.fixture("rsa1024.pem")
        let error = try KeyTestSupport.decodeError(bytes, source: "rsa1024.pem")
        #expect(error == .weakKey(source: "rsa1024.pem", bits: 1024))
        KeyTestSupport.check(error, is: "weakKey", mentioning: "rsa1024.pem: ", "1024 bits", "2048-bit minimum")
        #expect(error.category == .malformedInput)

        let decoded = try KeyDecoder.decode(bytes, source: "rsa1024.pem", policy: KeyPolicy(allowWeakRSA: true))
        let key = try #require(decoded.privateKeyValue)
        #expect(key.kind == .rsa(bits: 1024))
        #expect(key.publicKey.fingerprint.description == "sha256/KWXy5PqvAWFVn49TYBt72ZGleYS4vjJmpv1u3mWYGgQ=")
    }

    @Test("RSA-1024 in every other format follows the same policy")
    func weakRSAEveryFormat() throws {
        let weakPolicy = KeyPolicy(allowWeakRSA: true)
        let decoded = try KeyDecoder.decode(try KeyTestSupport.fixture("rsa1024.pem"), source: "rsa1024.pem", policy: weakPolicy)
        let key = try #require(decoded.privateKeyValue)
        var encodings: [(String, [UInt8])] = []
        for format in PublicKeyFormat.allCases { encodings.append(("public \(format.rawValue)", try key.publicKey.encoded(as: format))) }
        for format in [PrivateKeyFormat.der, .pkcs1, .pkcs1DER, .jwk, .ios] {
            encodings.append(("private \(format.rawValue)", try key.encoded(as: format)))
        }
        for (name, bytes) in encodings {
            let error = try KeyTestSupport.decodeError(bytes, source: name)
            #expect(error == .weakKey(source: name, bits: 1024))
            let accepted = try KeyDecoder.decode(bytes, source: name, policy: weakPolicy)
            let publicKey = accepted.publicKeyValue ?? accepted.privateKeyValue?.publicKey
            #expect(publicKey == key.publicKey, "\(name)")
        }
        // And inside an encrypted PKCS#8 key, where the policy applies on decryption.
        let encrypted = try EncryptedPrivateKey.encrypt(pkcs8: key.encoded(as: .der), passphrase: KeyTestSupport.secret("pw"), iterations: 1_000)
        let sealed = try KeyDecoder.decode(encrypted, source: "weak.p8")
        let strictError = try KeyTestSupport.thrown { try sealed.decrypt(passphrase: KeyTestSupport.secret("pw"), source: "weak.p8") }
        #expect(strictError == .weakKey(source: "weak.p8", bits: 1024))
        let opened = try sealed.decrypt(passphrase: KeyTestSupport.secret("pw"), source: "weak.p8", policy: weakPolicy)
        #expect(opened.privateKeyValue?.publicKey == key.publicKey)
    }

    @Test("RSA under 1024 bits is refused under any policy", arguments: [KeyPolicy.strict, KeyPolicy(allowWeakRSA: true)])
    func tinyRSA(policy: KeyPolicy) throws {
        let error = try KeyTestSupport.decodeError(try KeyTestSupport.fixture("rsa512-pkcs1.pem"), source: "rsa512.pem", policy: policy)
        KeyTestSupport.check(error, is: "unsupported", mentioning: "rsa512.pem: unsupported: ", "under 1024 bits", "512")
    }

    // MARK: Algorithms

    @Test("an RSASSA-PSS-restricted key (openssl genpkey -algorithm RSA-PSS)")
    func rsaPSSKey() throws {
        let error = try KeyTestSupport.decodeError(try KeyTestSupport.fixture("rsa-pss.pem"), source: "rsa-pss.pem")
        KeyTestSupport.check(error, is: "unsupported", mentioning: "rsa-pss.pem: unsupported: ", "RSASSA-PSS")
        #expect(!error.description.contains("keys keys"), "\(error.description)")
    }

    // MARK: Curves

    @Test("keys on curves we do not support", arguments: [
        ("secp256k1.pem", "secp256k1"), ("secp256k1-pub.pem", "secp256k1"), ("p521.pem", "P-521"),
    ])
    func unsupportedCurve(file: String, curve: String) throws {
        let error = try KeyTestSupport.decodeError(try KeyTestSupport.fixture(file), source: file)
        KeyTestSupport.check(error, is: "unsupported", mentioning: "\(file): unsupported: ", curve)
        // Read by path, the path names the source.
        let path = try KeyTestSupport.fixturePath(file)
        let byPath = try KeyTestSupport.thrown { try KeyDecoder.decode(path: path) }
        KeyTestSupport.check(byPath, is: "unsupported", mentioning: "\(path): unsupported: ", curve)
    }
}
