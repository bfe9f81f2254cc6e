import Foundation
import SignetCore
import SignetPKCS11
import SignetTestSupport
import Testing

/// Loading modules, slots and tokens, finding keys, PINs, and every way a lookup fails.
@Suite("PKCS#11 modules, tokens and lookups on SoftHSM2")
struct PKCS11ModuleTests {
    @Test("the module lists the store's tokens, their texts trimmed and their flags read")
    func slotsAndTokens() throws {
        let module = try SoftHSM.module()
        let again = try PKCS11Module.load(path: SoftHSM.modulePath)
        #expect(module === again, "one module object per path")
        #expect(module.info.cryptokiVersion.major >= 2)
        let tokens = try module.slots().compactMap(\.token)
        for expected in SoftHSM.Token.allCases {
            let token = try #require(tokens.first(where: { $0.label == expected.label }), "token \(expected.label) missing from \(tokens.map(\.label))")
            #expect(token.loginRequired && token.isInitialized && token.userPINInitialized)
            #expect(!token.pinLocked)
            #expect(!token.serial.isEmpty && !token.serial.hasSuffix(" "))
            #expect(token.model == "SoftHSM v2")
        }
        let selected = try module.tokens(matching: SoftHSM.Token.listing.uri)
        #expect(selected.count == 1)
        #expect(selected.first?.token?.label == SoftHSM.Token.listing.label)
    }

    @Test("a library that is not a PKCS#11 module is refused as such")
    func notAModule() throws {
        let candidates = [
            "/usr/lib/x86_64-linux-gnu/libz.so.1", "/lib/x86_64-linux-gnu/libz.so.1", "/usr/lib/aarch64-linux-gnu/libz.so.1",
            "/lib/aarch64-linux-gnu/libz.so.1",
        ]
        let path = try #require(candidates.first(where: { FileManager.default.fileExists(atPath: $0) }), "zlib is missing: install the Debian package zlib1g")
        let error = try thrown(PKCS11Error.self) { try PKCS11Module.load(path: path) }
        expectError(error, is: "notAPKCS11Module", mentioning: [path, "C_GetFunctionList"])
    }

    @Test("a module file that does not exist cannot be loaded")
    func missingModule() throws {
        let folder = try TemporaryFolder()
        let path = folder.file("libnothing-pkcs11.so")
        let error = try thrown(PKCS11Error.self) { try PKCS11Module.load(path: path) }
        expectError(error, is: "moduleNotLoadable", mentioning: [path])
        #expect(error.category == .environment)
    }

    @Test(
        "a key source with no module anywhere says how to name one",
        .enabled(if: !FileManager.default.fileExists(atPath: PKCS11KeySource.proxyModulePath), "p11-kit's proxy module is a module"))
    func noModule() async throws {
        let source = PKCS11KeySource()
        let error = try await thrownAsync(PKCS11Error.self) { try await source.publicKey(reference: "pkcs11:object=k", resolver: KeySourceResolver()) }
        expectError(error, is: "moduleNotLoadable", mentioning: ["module-path"])
        var uri = PKCS11URI()
        uri.modulePath = "/opt/from-uri.so"
        #expect(try PKCS11KeySource(modulePath: "/opt/given.so").modulePath(for: uri) == "/opt/from-uri.so")
        #expect(try PKCS11KeySource(modulePath: "/opt/given.so").modulePath(for: PKCS11URI()) == "/opt/given.so")
    }

    @Test("a key source configured so refuses URIs that name a module: loading one runs its code")
    func modulesFromURIsRefused() throws {
        let guarded = PKCS11KeySource(modulePath: "/opt/given.so", allowsModulesFromURIs: false)
        #expect(try guarded.modulePath(for: PKCS11URI()) == "/opt/given.so")
        for text in ["pkcs11:object=k?module-path=/tmp/evil.so", "pkcs11:object=k?module-name=evil"] {
            let error = try thrown(PKCS11Error.self) { try guarded.modulePath(for: PKCS11URI(parsing: text)) }
            expectError(error, is: "invalidURI", mentioning: ["not accepted here"])
        }
    }

    @Test("a wrong PIN is wrongPIN, and the right one then works")
    func wrongPIN() throws {
        let module = try SoftHSM.module()
        let error = try thrown(PKCS11Error.self) {
            try module.findKeys(matching: SoftHSM.Token.wrongPIN.uri, pin: PKCS11FixedPIN("0000"))
        }
        expectError(error, is: "wrongPIN", mentioning: [SoftHSM.Token.wrongPIN.label])
        #expect(!error.description.contains("0000"))
        #expect(error.category == .checkFailed)
        #expect(try module.findKeys(matching: SoftHSM.Token.wrongPIN.uri, pin: PKCS11FixedPIN(SoftHSM.pin)).isEmpty)
    }

    @Test("a token that needs a PIN, with none to give, is pinRequired")
    func pinRequired() throws {
        let module = try SoftHSM.module()
        let error = try thrown(PKCS11Error.self) { try module.findKeys(matching: SoftHSM.Token.noPIN.uri) }
        expectError(error, is: "pinRequired", mentioning: [SoftHSM.Token.noPIN.label])
    }

    @Test("a URI that matches no object or no token is noMatch, saying what there is")
    func noMatch() throws {
        let module = try SoftHSM.module()
        let pin = PKCS11FixedPIN(SoftHSM.pin)
        _ = try module.generateKeyPair(token: SoftHSM.Token.missing.uri, type: .p256, label: "present", id: [0x07], pin: pin)

        let missingObject = try PKCS11URI(parsing: "pkcs11:token=\(SoftHSM.Token.missing.label);object=nope")
        let error = try thrown(PKCS11Error.self) { try module.uniqueKey(matching: missingObject, pin: pin) }
        expectError(error, is: "noMatch", mentioning: ["object=nope", "\"present\"", SoftHSM.Token.missing.label])

        let missingToken = try PKCS11URI(parsing: "pkcs11:token=no-such-token;object=present")
        let noToken = try thrown(PKCS11Error.self) { try module.uniqueKey(matching: missingToken, pin: pin) }
        expectError(noToken, is: "noMatch", mentioning: ["no-such-token", "no token fits", "signet-"])

        let certificate = try PKCS11URI(parsing: "pkcs11:token=\(SoftHSM.Token.missing.label);type=cert")
        let notKey = try thrown(PKCS11Error.self) { try module.uniqueKey(matching: certificate, pin: pin) }
        expectError(notKey, is: "unsupportedKey", mentioning: ["type=cert"])
    }

    @Test("two keys with the same label and no id are ambiguous until an id tells them apart")
    func ambiguous() throws {
        let module = try SoftHSM.module()
        let pin = PKCS11FixedPIN(SoftHSM.pin)
        _ = try module.generateKeyPair(token: SoftHSM.Token.ambiguous.uri, type: .p256, label: "twin", id: [], pin: pin)
        _ = try module.generateKeyPair(token: SoftHSM.Token.ambiguous.uri, type: .p256, label: "twin", id: [], pin: pin)
        let third = try module.generateKeyPair(token: SoftHSM.Token.ambiguous.uri, type: .p256, label: "twin", id: [0x03], pin: pin)

        let twins = try PKCS11URI(parsing: "pkcs11:token=\(SoftHSM.Token.ambiguous.label);object=twin")
        let error = try thrown(PKCS11Error.self) { try module.uniqueKey(matching: twins, pin: pin) }
        expectError(error, is: "ambiguous", mentioning: ["3 objects", "id="])
        #expect(error.category == .usage)

        let named = try PKCS11URI(parsing: "pkcs11:token=\(SoftHSM.Token.ambiguous.label);object=twin;id=%03")
        let found = try module.uniqueKey(matching: named, pin: pin)
        #expect(found.publicKey == third.publicKey)
        #expect(found.publicKey != nil)
    }

    @Test("keys are listed with their canonical URIs; without a PIN only public keys show")
    func listing() throws {
        let module = try SoftHSM.module()
        let pin = PKCS11FixedPIN(SoftHSM.pin)
        let p256 = try module.generateKeyPair(token: SoftHSM.Token.listing.uri, type: .p256, label: "first", id: [0x01], pin: pin)
        let ed25519 = try module.generateKeyPair(token: SoftHSM.Token.listing.uri, type: .ed25519, label: "second", id: [0x02], pin: pin)
        let listed = try module.listKeys(matching: SoftHSM.Token.listing.uri, pin: pin)
        #expect(listed.count == 2)
        #expect(Set(listed.map(\.uri.description)) == [
            "pkcs11:token=\(SoftHSM.Token.listing.label);object=first;id=%01;type=private",
            "pkcs11:token=\(SoftHSM.Token.listing.label);object=second;id=%02;type=private",
        ])
        #expect(listed.first { $0.label == "first" }?.publicKey == p256.publicKey)
        #expect(listed.first { $0.label == "second" }?.keyType == .ecEdwards)
        #expect(listed.first { $0.label == "second" }?.publicKey == ed25519.publicKey)

        var onlyPublic = SoftHSM.Token.listing.uri
        onlyPublic.type = .publicKey
        let publicKeys = try module.listKeys(matching: onlyPublic)
        #expect(publicKeys.count == 2)
        #expect(publicKeys.allSatisfy { $0.privateKeyHandle == nil && $0.uri.type == .publicKey })
    }

    @Test("a public key object is read without a PIN; signing asks for one")
    func publicKeyWithoutLogin() async throws {
        _ = try SoftHSM.store()
        let tool = try #require(ProcessRunner.which("pkcs11-tool"), "pkcs11-tool is missing: install the Debian package opensc")
        let made = try ProcessRunner.run(
            tool,
            [
                "--module", SoftHSM.modulePath, "--token-label", SoftHSM.Token.publicOnly.label, "--keypairgen", "--key-type", "EC:secp384r1",
                "--id", "0a", "--label", "pub", "--login", "--pin", SoftHSM.pin,
            ], environment: try SoftHSM.environment())
        try #require(made.status == 0, "\(made)")

        let reference = "pkcs11:token=\(SoftHSM.Token.publicOnly.label);object=pub?module-path=\(SoftHSM.modulePath)"
        let source = PKCS11KeySource()  // no PIN at all
        let publicKey = try await source.publicKey(reference: reference, resolver: KeySourceResolver())
        #expect(publicKey.kind == .p384)
        let error = try await thrownAsync(PKCS11Error.self) { try await source.signer(reference: reference, algorithm: nil, resolver: KeySourceResolver()) }
        expectError(error, is: "pinRequired", mentioning: [SoftHSM.Token.publicOnly.label])
    }

    @Test("a URI's pin-source file gives the PIN; a missing file or another scheme is refused")
    func pinSource() async throws {
        // Made by another process, so that this one logs in to the token for the first time
        // with the file's PIN.
        _ = try SoftHSM.store()
        let tool = try #require(ProcessRunner.which("pkcs11-tool"), "pkcs11-tool is missing: install the Debian package opensc")
        let made = try ProcessRunner.run(
            tool,
            [
                "--module", SoftHSM.modulePath, "--token-label", SoftHSM.Token.keySource.label, "--keypairgen", "--key-type", "EC:prime256v1",
                "--id", "05", "--label", "from file", "--login", "--pin", SoftHSM.pin,
            ], environment: try SoftHSM.environment())
        try #require(made.status == 0, "\(made)")
        let folder = try TemporaryFolder()
        let pinFile = try folder.write("pin", "\(SoftHSM.pin)\r\nignored second line\n")

        var uri = SoftHSM.Token.keySource.uri
        uri.object = "from file"
        uri.id = [0x05]
        uri.modulePath = SoftHSM.modulePath
        uri.pinSource = "file:" + pinFile
        let source = PKCS11KeySource()
        let signer = try await source.signer(reference: uri.description, algorithm: nil, resolver: KeySourceResolver())
        #expect(signer.algorithm == .ecdsaP256SHA256)
        #expect(try await source.publicKey(reference: uri.description, resolver: KeySourceResolver()) == signer.publicKey)
        let signature = try await signer.sign(message: PKCS11SigningTests.message)
        try PublicKeyVerifier(key: signer.publicKey).verify(signature: signature, message: PKCS11SigningTests.message)

        uri.pinSource = "file:" + folder.file("no-such-pin")
        let missing = try await thrownAsync(PKCS11Error.self) { try await source.signer(reference: uri.description, algorithm: nil, resolver: KeySourceResolver()) }
        expectError(missing, is: "pinSourceUnreadable", mentioning: ["no-such-pin"])

        uri.pinSource = "|/usr/bin/get-pin"
        let program = try await thrownAsync(PKCS11Error.self) { try await source.signer(reference: uri.description, algorithm: nil, resolver: KeySourceResolver()) }
        expectError(program, is: "invalidURI", mentioning: ["pin-source"])

        try folder.write("big", String(repeating: "1", count: 2000))
        uri.pinSource = "file://localhost" + folder.file("big")
        let big = try await thrownAsync(PKCS11Error.self) { try await source.signer(reference: uri.description, algorithm: nil, resolver: KeySourceResolver()) }
        expectError(big, is: "pinSourceUnreadable", mentioning: ["1024"])
    }
}
