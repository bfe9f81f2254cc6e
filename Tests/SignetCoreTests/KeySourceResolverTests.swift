import Foundation
import SignetCore
import SignetTestSupport
import Testing

/// `KeySourceResolver`: files and `-` become software signers, registered schemes go to their
/// provider, and planned schemes without a provider are refused clearly.
@Suite struct KeySourceResolverTests {
    /// Serves one key under one reference, and refuses any other reference.
    struct TestProvider: KeySourceProvider {
        let scheme: String
        let reference: String
        let key: PrivateKey

        func signer(reference: String, algorithm: SignatureAlgorithm?, resolver: KeySourceResolver) async throws -> any Signer {
            guard reference == self.reference else {
                throw SignetCoreError.invalidArgument(detail: "TestProvider has no key \(reference)")
            }
            return try SoftwareSigner(key: key, algorithm: algorithm)
        }

        func publicKey(reference: String, resolver: KeySourceResolver) async throws -> PublicKey {
            guard reference == self.reference else {
                throw SignetCoreError.invalidArgument(detail: "TestProvider has no key \(reference)")
            }
            return key.publicKey
        }
    }

    @Test("a public key file where a signer is needed")
    func publicKeyForSigner() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let key = SharedTestKeys.key(.p256)
        let path = try folder.write("signer.pub", try key.publicKey.encoded(as: .pem))
        let resolver = KeySourceResolver()

        let error = try await KeyTestSupport.thrownAsync { try await resolver.signer(path) }
        #expect(error == .publicKeyWherePrivateNeeded(source: path))
        KeyTestSupport.check(error, is: "publicKeyWherePrivateNeeded", mentioning: path, "is a public key")
        #expect(error.category == .malformedInput)
        let direct = try KeyTestSupport.thrown { try resolver.privateKey(path: path) }
        #expect(direct == .publicKeyWherePrivateNeeded(source: path))

        // The same file is fine where a public key is wanted.
        let publicKey = try await resolver.publicKey(path)
        #expect(publicKey == key.publicKey)
    }

    @Test("a private key file gives a working signer", arguments: KeyTestSupport.fastTypes)
    func privateKeyFile(type: KeyGenerationType) async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let key = SharedTestKeys.key(type)
        let path = try folder.write("signer.key", try key.encoded(as: .pem))
        let resolver = KeySourceResolver()

        let signer = try await resolver.signer(path)
        #expect(signer.algorithm == key.kind.defaultAlgorithm)
        #expect(signer.publicKey == key.publicKey)
        let signature = try await signer.sign(message: KeyTestSupport.message)
        let publicKey = try await resolver.publicKey(path)
        try PublicKeyVerifier(key: publicKey, algorithm: signer.algorithm).verify(signature: signature, message: KeyTestSupport.message)

        let misfit: SignatureAlgorithm = type == .ed25519 ? .ecdsaP256SHA256 : .ed25519
        let error = try await KeyTestSupport.thrownAsync { try await resolver.signer(path, algorithm: misfit) }
        #expect(error.code == "algorithmMismatch")
    }

    @Test(
        "planned schemes without a provider are refused",
        arguments: ["pkcs11:token=Signet;object=release-key", "pkcs11:", "vault:signing/release"])
    func plannedSchemeWithoutProvider(_ reference: String) async throws {
        let resolver = KeySourceResolver()
        let scheme = String(reference.prefix { $0 != ":" })
        let signerError = try await KeyTestSupport.thrownAsync { try await resolver.signer(reference) }
        guard case .unsupported(let source, let detail) = signerError else {
            Issue.record("expected .unsupported, got \(signerError)")
            return
        }
        #expect(source == "\(scheme):…", "only the scheme: the rest may hold a PIN")
        #expect(detail.contains("\(scheme): key sources are not available"))
        #expect(detail.contains("write ./"), "the hint for a file of that name")
        if reference.contains("=") { #expect(!"\(signerError)".contains(String(reference.dropFirst(scheme.count + 1)))) }
        let publicError = try await KeyTestSupport.thrownAsync { try await resolver.publicKey(reference) }
        #expect(publicError == signerError)
    }

    @Test("a provider registered for a scheme is used, with the whole reference")
    func customProvider() async throws {
        let key = SharedTestKeys.key(.rsa2048)
        var resolver = KeySourceResolver()
        resolver.register(TestProvider(scheme: "test", reference: "test:alpha", key: key))

        let signer = try await resolver.signer("test:alpha")
        #expect(signer.publicKey == key.publicKey)
        #expect(signer.algorithm == .rsaPKCS1v15SHA256)
        let pss = try await resolver.signer("test:alpha", algorithm: .rsaPSSSHA512)
        #expect(pss.algorithm == .rsaPSSSHA512, "the algorithm reaches the provider")

        let signature = try await pss.sign(message: KeyTestSupport.message)
        let publicKey = try await resolver.publicKey("test:alpha")
        #expect(publicKey == key.publicKey)
        try PublicKeyVerifier(key: publicKey, algorithm: .rsaPSSSHA512).verify(signature: signature, message: KeyTestSupport.message)

        // The provider sees "test:beta" and refuses it: proof that the reference went to it.
        let unknown = try await KeyTestSupport.thrownAsync { try await resolver.signer("test:beta") }
        KeyTestSupport.check(unknown, is: "invalidArgument", mentioning: "TestProvider has no key test:beta")
    }

    @Test("providers given to init are used, and the last one for a scheme wins")
    func providersAtInit() async throws {
        let first = SharedTestKeys.key(.p256), second = SharedTestKeys.key(.ed25519)
        var resolver = KeySourceResolver(providers: [TestProvider(scheme: "test", reference: "test:k", key: first)])
        let fromInit = try await resolver.publicKey("test:k")
        #expect(fromInit == first.publicKey)
        resolver.register(TestProvider(scheme: "test", reference: "test:k", key: second))
        let replaced = try await resolver.publicKey("test:k")
        #expect(replaced == second.publicKey)
    }

    @Test("a provider for a planned scheme replaces the refusal")
    func providerForPlannedScheme() async throws {
        let key = SharedTestKeys.key(.p384)
        let reference = "pkcs11:token=Signet;object=k"
        let resolver = KeySourceResolver(providers: [TestProvider(scheme: "pkcs11", reference: reference, key: key)])
        let signer = try await resolver.signer(reference)
        #expect(signer.publicKey == key.publicKey)
        #expect(signer.algorithm == .ecdsaP384SHA384)
    }

    @Test("an unregistered scheme that is not planned is read as a file name")
    func unknownSchemeIsAPath() async throws {
        let reference = "test-\(UUID().uuidString):alpha"
        let error = try await KeyTestSupport.thrownAsync { try await KeySourceResolver().signer(reference) }
        #expect(error == .io(path: reference, detail: "no such file or directory"))
    }

    @Test("standard input is named as such")
    func displayNames() {
        let resolver = KeySourceResolver()
        #expect(resolver.displayName("-") == "standard input")
        #expect(resolver.displayName("keys/a.pem") == "keys/a.pem")
    }
}
