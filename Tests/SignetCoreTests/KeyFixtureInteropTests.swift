import Foundation
import SignetCore
import SignetTestSupport
import Testing

/// Keys and signatures made by openssl and ssh-keygen (see Vectors/keys/README.md) must read,
/// decrypt and verify, with the fingerprints openssl computes.
/// Fingerprints of the fixture keys, computed by openssl (Vectors/keys/README.md).
enum FixtureFingerprint {
    static let rsa2048 = "sha256/pA+Onbcduz0HLyiVPRajtDh2niUVafAdveLftM1KVDo="
    static let p256 = "sha256/G/7jlbVohuVioGZZfdTw4UYikjrvrHV57v31k+4HJg8="
    static let p384 = "sha256/QerPW+/4HG9IPVqG/m7UG/gYgfhLGEnepp5QfpdbiGM="
    static let ed25519 = "sha256/IFIpWmQuwMBn1NcYJQa8Kwoz0re/bkBvo8fdDUnRWK4="
}

@Suite struct KeyFixtureInteropTests {

    /// The public key in `file`, whether the file holds a public or a private key.
    static func publicKey(_ file: String, policy: KeyPolicy = .strict) throws -> PublicKey {
        let decoded = try KeyDecoder.decode(try KeyTestSupport.fixture(file), source: file, policy: policy)
        return try #require(decoded.publicKeyValue ?? decoded.privateKeyValue?.publicKey, "\(file) holds no usable key")
    }

    static func privateKey(_ file: String) throws -> PrivateKey {
        let decoded = try KeyDecoder.decode(try KeyTestSupport.fixture(file), source: file)
        return try #require(decoded.privateKeyValue, "\(file) holds no private key")
    }

    @Test("openssl keys decode to openssl's fingerprints", arguments: [
        ("rsa2048.pem", FixtureFingerprint.rsa2048, "rsa"), ("p256.pem", FixtureFingerprint.p256, "p256"),
        ("p384.pem", FixtureFingerprint.p384, "p384"), ("ed25519.pem", FixtureFingerprint.ed25519, "ed25519"),
        ("p256-ecparam.pem", "sha256/auQ+g9dNvsROm65+gIC6xBool0FABNGlwbg3wC47A88=", "p256"),
        ("rsa2048.openssh.pub", FixtureFingerprint.rsa2048, "rsa"), ("p384.openssh.pub", FixtureFingerprint.p384, "p384"),
        ("openssh-ed25519.pub", "sha256/3Cx3Hm/UNXTeuY9RLhvMuP7ok4LlRAN+fsOABOsXvOQ=", "ed25519"),
    ])
    func fingerprints(file: String, fingerprint: String, family: String) throws {
        let key = try Self.publicKey(file)
        #expect(key.fingerprint.description == fingerprint)
        #expect(key.kind.family == family)
    }

    @Test("the EC PARAMETERS block before a SEC1 key is skipped")
    func ecParametersFile() throws {
        let text = try KeyTestSupport.fixtureText("p256-ecparam.pem")
        #expect(text.hasPrefix("-----BEGIN EC PARAMETERS-----"))
        let key = try Self.privateKey("p256-ecparam.pem")
        #expect(key.kind == .p256)
    }

    @Test("a SEC1 key that stores its public point compressed")
    func compressedPublicPoint() throws {
        // `openssl ec -conv_form compressed` stores the point as 33 bytes; it is the same key as
        // p256.pem, and its fingerprint is that of the canonical (uncompressed) SPKI.
        let key = try Self.privateKey("p256-sec1-compressed.pem")
        #expect(key.publicKey.fingerprint.description == FixtureFingerprint.p256)
    }

    @Test("keys read by path, and PEM with CRLF line ends")
    func byPathAndCRLF() throws {
        let decoded = try KeyDecoder.decode(path: try KeyTestSupport.fixturePath("p384.pem"))
        #expect(decoded.privateKeyValue?.publicKey.fingerprint.description == FixtureFingerprint.p384)
        let crlf = (try KeyTestSupport.fixtureText("p256.pem")).replacingOccurrences(of: "\n", with: "\r\n")
        let fromCRLF = try KeyDecoder.decode(Array(crlf.utf8), source: "crlf.pem")
        #expect(fromCRLF.privateKeyValue?.publicKey.fingerprint.description == FixtureFingerprint.p256)
        // Text around the block is ignored, as openssl ignores it.
        let wrapped = "Bag Attributes\n    localKeyID: 01\n" + (try KeyTestSupport.fixtureText("p256.pem")) + "trailing notes\n"
        let fromWrapped = try KeyDecoder.decode(Array(wrapped.utf8), source: "wrapped.pem")
        #expect(fromWrapped.privateKeyValue?.publicKey.fingerprint.description == FixtureFingerprint.p256)
    }

    @Test("openssl's encrypted PKCS#8 keys decrypt", arguments: [
        ("p256-pbes2-aes256-sha256.pem", "correct horse battery staple", FixtureFingerprint.p256),
        ("ed25519-pbes2-aes128-sha1.pem", "signet-test", FixtureFingerprint.ed25519),
        ("p384-pbes2-aes192-sha512.der", "signet-test", FixtureFingerprint.p384),
    ])
    func opensslEncrypted(file: String, passphrase: String, fingerprint: String) throws {
        let decoded = try KeyDecoder.decode(try KeyTestSupport.fixture(file), source: file)
        #expect(decoded.needsPassphrase)
        let decrypted = try decoded.decrypt(passphrase: KeyTestSupport.secret(passphrase), source: file)
        let key = try #require(decrypted.privateKeyValue)
        #expect(key.publicKey.fingerprint.description == fingerprint)

        let error = try KeyTestSupport.thrown { try decoded.decrypt(passphrase: KeyTestSupport.secret(passphrase + "!"), source: file) }
        #expect(error == .wrongPassphrase(source: file))
    }

    @Test("a resolver decrypts an encrypted key file with its passphrase provider")
    func resolverDecrypts() async throws {
        struct Fixed: PassphraseProvider {
            let text: String
            func passphrase(for source: String, confirm: Bool) throws -> SecretBytes { SecretBytes(Array(text.utf8)) }
        }
        let path = try KeyTestSupport.fixturePath("ed25519-pbes2-aes128-sha1.pem")
        let resolver = KeySourceResolver(passphrases: Fixed(text: "signet-test"))
        let key = try resolver.privateKey(path: path)
        #expect(key.publicKey.fingerprint.description == FixtureFingerprint.ed25519)
        let publicKey = try await resolver.publicKey(path)
        #expect(publicKey == key.publicKey)

        let noPassphrase = try KeyTestSupport.thrown { try KeySourceResolver().privateKey(path: path) }
        KeyTestSupport.check(noPassphrase, is: "passphraseUnavailable", mentioning: path, "encrypted")
        let wrong = try KeyTestSupport.thrown { try KeySourceResolver(passphrases: Fixed(text: "nope")).privateKey(path: path) }
        #expect(wrong == .wrongPassphrase(source: path))
    }

    // MARK: Signatures made by openssl

    @Test("openssl signatures verify", arguments: [
        ("message.rsa-v1_5-sha256.sig", "rsa2048.pem", SignatureAlgorithm.rsaPKCS1v15SHA256),
        ("message.rsa-v1_5-sha512.sig", "rsa2048.pem", SignatureAlgorithm.rsaPKCS1v15SHA512),
        ("message.rsa-pss-sha256.sig", "rsa2048.pem", SignatureAlgorithm.rsaPSSSHA256),
        ("message.ecdsa-p256-sha256.sig", "p256.pem", SignatureAlgorithm.ecdsaP256SHA256),
        ("message.ecdsa-p384-sha384.sig", "p384.pem", SignatureAlgorithm.ecdsaP384SHA384),
        ("message.ed25519.sig", "ed25519.pem", SignatureAlgorithm.ed25519),
    ])
    func opensslSignatures(signatureFile: String, keyFile: String, algorithm: SignatureAlgorithm) throws {
        let message = try KeyTestSupport.fixture("message.txt")
        let signature = try KeyTestSupport.fixture(signatureFile)
        let verifier = try PublicKeyVerifier(key: try Self.publicKey(keyFile), algorithm: algorithm)
        try verifier.verify(signature: signature, message: message)
        if let digest = algorithm.digest {
            try verifier.verify(signature: signature, digest: digest.hash(message))
        }
        let error = try KeyTestSupport.thrown {
            try verifier.verify(signature: signature, message: TestBytes.flipped(message, at: 0))
        }
        #expect(error.code == "signatureInvalid")
    }

    @Test("signatures by both sides are byte-identical where the algorithm is deterministic", arguments: [
        ("message.rsa-v1_5-sha256.sig", "rsa2048.pem", SignatureAlgorithm.rsaPKCS1v15SHA256),
        ("message.rsa-v1_5-sha512.sig", "rsa2048.pem", SignatureAlgorithm.rsaPKCS1v15SHA512),
        ("message.ed25519.sig", "ed25519.pem", SignatureAlgorithm.ed25519),
    ])
    func deterministicSignaturesMatch(signatureFile: String, keyFile: String, algorithm: SignatureAlgorithm) async throws {
        let signer = try SoftwareSigner(key: try Self.privateKey(keyFile), algorithm: algorithm)
        let ours = try await signer.sign(message: try KeyTestSupport.fixture("message.txt"))
        let theirs = try KeyTestSupport.fixture(signatureFile)
        #expect(ours == theirs)
    }

    @Test("a PSS signature with openssl's default maximum salt is refused with the fix")
    func pssMaximumSalt() throws {
        let verifier = try PublicKeyVerifier(key: try Self.publicKey("rsa2048.pem"), algorithm: .rsaPSSSHA256)
        let signature = try KeyTestSupport.fixture("message.rsa-pss-sha256-maxsalt.sig")
        let message = try KeyTestSupport.fixture("message.txt")
        let error = try KeyTestSupport.thrown { try verifier.verify(signature: signature, message: message) }
        KeyTestSupport.check(error, is: "signatureInvalid", mentioning: "rsa-pss-sha256", "rsa_pss_saltlen:digest")
        #expect(error.category == .checkFailed)
    }
}
