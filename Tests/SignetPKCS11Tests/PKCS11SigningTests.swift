import Foundation
import SignetCore
import SignetPKCS11
import SignetTestSupport
import Testing

/// Keys generated on a SoftHSM2 token sign through `PKCS11Signer`, and the signatures verify
/// with Signet's own verifier and with openssl.
@Suite("PKCS#11 signing on SoftHSM2")
struct PKCS11SigningTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var type: KeyGenerationType
        var algorithm: SignatureAlgorithm
        var token: SoftHSM.Token
        var kind: KeyKind
        var testDescription: String { algorithm.rawValue }
    }

    static let cases: [Case] = [
        Case(type: .p256, algorithm: .ecdsaP256SHA256, token: .p256, kind: .p256),
        Case(type: .p384, algorithm: .ecdsaP384SHA384, token: .p384, kind: .p384),
        Case(type: .rsa2048, algorithm: .rsaPKCS1v15SHA256, token: .rsa, kind: .rsa(bits: 2048)),
        Case(type: .rsa2048, algorithm: .rsaPKCS1v15SHA512, token: .rsa, kind: .rsa(bits: 2048)),
        Case(type: .rsa2048, algorithm: .rsaPSSSHA256, token: .rsa, kind: .rsa(bits: 2048)),
        Case(type: .rsa2048, algorithm: .rsaPSSSHA512, token: .rsa, kind: .rsa(bits: 2048)),
        Case(type: .ed25519, algorithm: .ed25519, token: .ed25519, kind: .ed25519),
    ]

    static let message = Array("Signet PKCS#11 test message: the quick brown fox jumps over the lazy dog.".utf8)

    @Test("a key generated on the token signs, and Signet and openssl verify it", arguments: cases)
    func generatedKeySigns(_ test: Case) async throws {
        let module = try SoftHSM.module()
        let pin = PKCS11FixedPIN(SoftHSM.pin)
        let id = Array(test.algorithm.rawValue.utf8)
        let key = try module.generateKeyPair(token: test.token.uri, type: test.type, label: test.algorithm.rawValue, id: id, pin: pin)
        #expect(key.label == test.algorithm.rawValue)
        #expect(key.id == id)
        #expect(key.privateKeyHandle != nil && key.publicKeyHandle != nil)
        #expect(key.token.label == test.token.label)
        #expect(key.uri.description.hasPrefix("pkcs11:token=\(test.token.label);object=\(test.algorithm.rawValue);id=%"))
        #expect(key.uri.description.hasSuffix(";type=private"))

        let signer = try PKCS11Signer(module: module, key: key, algorithm: test.algorithm, pin: pin)
        #expect(signer.algorithm == test.algorithm)
        #expect(signer.publicKey.kind == test.kind)
        let verifier = try PublicKeyVerifier(key: signer.publicKey, algorithm: test.algorithm)

        let signature = try await signer.sign(message: Self.message)
        try verifier.verify(signature: signature, message: Self.message)
        #expect(throws: SignetCoreError.self) { try verifier.verify(signature: signature, message: Self.message + [0]) }
        try Self.opensslVerifies(signature, publicKey: signer.publicKey, algorithm: test.algorithm)

        if let digestAlgorithm = test.algorithm.digest {
            let digest = digestAlgorithm.hash(Self.message)
            try verifier.verify(signature: try await signer.sign(digest: digest), digest: digest)
        } else {
            let error = await #expect(throws: SignetCoreError.self) { try await signer.sign(digest: DigestAlgorithm.sha512.hash(Self.message)) }
            #expect(error?.code == "invalidArgument")
        }

        // Found again by its URI, through the resolver every command uses.
        let resolver = KeySourceResolver(providers: [SoftHSM.keySource()])
        let again = try await resolver.signer(key.uri.description, algorithm: test.algorithm)
        #expect(again.publicKey == signer.publicKey)
        try verifier.verify(signature: try await again.sign(message: Self.message), message: Self.message)
        #expect(try await resolver.publicKey(key.uri.description) == signer.publicKey)
    }

    @Test("with no algorithm asked for, a token key signs with its kind's default, as a key file does")
    func defaultAlgorithm() async throws {
        let module = try SoftHSM.module()
        let pin = PKCS11FixedPIN(SoftHSM.pin)
        let key = try module.generateKeyPair(token: SoftHSM.Token.rsa.uri, type: .rsa2048, label: "default", id: [0xD0], pin: pin)
        let signer = try PKCS11Signer(module: module, key: key, pin: pin)
        #expect(signer.algorithm == .rsaPKCS1v15SHA256)
        #expect(signer.algorithm == KeyKind.rsa(bits: 2048).defaultAlgorithm)
        let refused = try thrown(SignetCoreError.self) { try PKCS11Signer(module: module, key: key, algorithm: .ed25519, pin: pin) }
        #expect(refused.code == "algorithmMismatch")
    }

    @Test("a key pkcs11-tool generated is found by its URI and signs")
    func pkcs11ToolKey() async throws {
        _ = try SoftHSM.store()
        let tool = try #require(ProcessRunner.which("pkcs11-tool"), "pkcs11-tool is missing: install the Debian package opensc")
        let made = try ProcessRunner.run(
            tool,
            [
                "--module", SoftHSM.modulePath, "--token-label", SoftHSM.Token.tool.label, "--keypairgen", "--key-type", "EC:prime256v1",
                "--id", "01", "--label", "x", "--login", "--pin", SoftHSM.pin,
            ], environment: try SoftHSM.environment())
        try #require(made.status == 0, "\(made)")

        let resolver = KeySourceResolver(providers: [SoftHSM.keySource()])
        let reference = "pkcs11:token=\(SoftHSM.Token.tool.label);object=x;id=%01"
        let signer = try await resolver.signer(reference)
        #expect(signer.algorithm == .ecdsaP256SHA256)
        let signature = try await signer.sign(message: Self.message)
        try PublicKeyVerifier(key: signer.publicKey).verify(signature: signature, message: Self.message)
        try Self.opensslVerifies(signature, publicKey: signer.publicKey, algorithm: .ecdsaP256SHA256)
        #expect(try await resolver.publicKey(reference) == signer.publicKey)
    }

    /// Checks `signature` over ``message`` with openssl, as `SignatureInteropTests` does.
    static func opensslVerifies(_ signature: [UInt8], publicKey: PublicKey, algorithm: SignatureAlgorithm) throws {
        let openssl = try #require(ProcessRunner.which("openssl"), "openssl is missing: install the Debian package openssl")
        let folder = try TemporaryFolder()
        try folder.write("pub.pem", try publicKey.encoded(as: .pem))
        try folder.write("message", message)
        try folder.write("sig", signature)
        let arguments: [String]
        switch algorithm {
        case .ed25519:
            arguments = ["pkeyutl", "-verify", "-rawin", "-pubin", "-inkey", "pub.pem", "-sigfile", "sig", "-in", "message"]
        case .rsaPSSSHA256, .rsaPSSSHA512:
            arguments = [
                "dgst", "-\(algorithm.digest!.rawValue)", "-verify", "pub.pem", "-signature", "sig", "-sigopt", "rsa_padding_mode:pss",
                "-sigopt", "rsa_pss_saltlen:digest", "message",
            ]
        default:
            arguments = ["dgst", "-\(algorithm.digest!.rawValue)", "-verify", "pub.pem", "-signature", "sig", "message"]
        }
        let verified = try ProcessRunner.run(openssl, arguments, in: folder.url)
        #expect(verified.status == 0, "openssl does not verify the \(algorithm.rawValue) signature: \(verified)")
    }
}
