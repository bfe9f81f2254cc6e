import Foundation
import SignetCore
import SignetPKCS11
import SignetTestSupport
import Testing

/// A locked PIN and a missing mechanism, which SoftHSM2 cannot be made to show, are reported as
/// such; a module that misbehaves (impossible lengths and counts, odd return codes, no function
/// list) gives a ``PKCS11Error`` naming the call and the problem, never a crash, a hang or a huge
/// allocation. Against the fake module of FakeModule.swift, one file per behaviour; a test that
/// counts calls is the only one to load its file.
@Suite("PKCS#11 modules that misbehave")
struct MisbehavingModuleTests {
    static let keyURI = "pkcs11:token=fake;object=key"
    static let pin = PKCS11FixedPIN("1234")
    static let digest = [UInt8](repeating: 0x5A, count: 32)
    static let message = Array("Signet PKCS#11 misbehaving module test".utf8)

    /// `pkcs11:token=fake`.
    static var token: PKCS11URI {
        var uri = PKCS11URI()
        uri.token = "fake"
        return uri
    }

    /// The fake token's key pair, found by its URI with the right PIN.
    static func key(on module: PKCS11Module) throws -> PKCS11KeyObject {
        try module.uniqueKey(matching: try PKCS11URI(parsing: keyURI), pin: pin)
    }

    /// Checks that `error` is a failure of `function` whose message mentions every fragment.
    static func expectFailure(
        _ error: PKCS11Error, in function: String, mentioning fragments: [String], sourceLocation: SourceLocation = #_sourceLocation
    ) {
        expectError(error, is: "tokenFailure", mentioning: [function] + fragments, sourceLocation: sourceLocation)
        if case .tokenFailure(let failed, _, _) = error { #expect(failed == function, sourceLocation: sourceLocation) }
        #expect(error.category == .environment, sourceLocation: sourceLocation)
    }

    // MARK: Tokens that behave, and PINs

    @Test("a well-behaved fake token is listed, its key found, and it signs with one C_Sign a signature")
    func normal() async throws {
        let path = try FakeModule.build(.normal)
        let module = try PKCS11Module.load(path: path)
        #expect(module.info.libraryDescription == "fake PKCS#11 module")
        #expect(module.info.cryptokiVersion == PKCS11Version(major: 2, minor: 40))
        let slots = try module.slots()
        #expect(slots.count == 1)
        let token = try #require(slots.first?.token)
        #expect(token.label == "fake" && token.serial == "0001")
        #expect(token.loginRequired && token.isInitialized && !token.pinLocked)

        let key = try Self.key(on: module)
        #expect(key.label == "key" && key.id == [0x01] && key.keyType == .ec)
        #expect(key.privateKeyHandle == 1 && key.publicKeyHandle == 2)
        #expect(key.publicKey?.kind == .p256)
        #expect(key.uri.description == "pkcs11:token=fake;object=key;id=%01;type=private")

        let raw = try module.sign(Self.digest, with: key, mechanism: .ecdsa, pin: Self.pin)
        #expect(raw == [UInt8](repeating: 0x01, count: 64))
        let signer = try PKCS11Signer(module: module, key: key, pin: Self.pin)
        #expect(signer.algorithm == .ecdsaP256SHA256)
        let der = try await signer.sign(digest: DigestAlgorithm.sha256.hash(Self.message))
        #expect(der.first == 0x30, "ECDSA signatures come back DER-encoded")

        // The fake token has CKM_ECDSA only.
        let eddsa = try thrown(PKCS11Error.self) { try module.sign(Self.message, with: key, mechanism: .eddsa, pin: Self.pin) }
        #expect(eddsa == .unsupportedMechanism(token: "fake", mechanism: "CKM_EDDSA"))

        #expect(try FakeModule.calls("C_Sign", in: path) == 2, "the signature's size is known from the key: no length query")
        #expect(try FakeModule.calls("C_Login", in: path) == 1, "one login, kept by the session")
        #expect(try FakeModule.calls("C_OpenSession", in: path) == 1)
    }

    @Test("a wrong PIN is wrongPIN, no PIN is pinRequired, and the right one then works")
    func wrongPIN() throws {
        let module = try PKCS11Module.load(path: try FakeModule.build(.wrongPIN))
        let uri = try PKCS11URI(parsing: Self.keyURI)
        let wrong = try thrown(PKCS11Error.self) { try module.uniqueKey(matching: uri, pin: PKCS11FixedPIN("0000")) }
        #expect(wrong == .wrongPIN(token: "fake"))
        #expect(!wrong.description.contains("0000"))
        let none = try thrown(PKCS11Error.self) { try module.uniqueKey(matching: uri) }
        #expect(none == .pinRequired(token: "fake"))
        #expect(try Self.key(on: module).publicKey?.kind == .p256)
    }

    @Test("a token whose flags say the PIN is locked is pinLocked, and no login is tried")
    func pinLocked() throws {
        let path = try FakeModule.build(.pinLocked)
        let module = try PKCS11Module.load(path: path)
        #expect(try module.slots().first?.token?.pinLocked == true)
        let error = try thrown(PKCS11Error.self) { try Self.key(on: module) }
        #expect(error == .pinLocked(token: "fake"))
        expectError(error, is: "pinLocked", mentioning: ["fake", "locked"])
        #expect(error.category == .environment)
        #expect(try FakeModule.calls("C_Login", in: path) == 0, "a locked PIN is not tried (it could count as a wrong one)")
    }

    @Test("C_Login's CKR_PIN_LOCKED is pinLocked, whatever the token's flags said")
    func loginLocked() throws {
        let path = try FakeModule.build(.loginLocked)
        let module = try PKCS11Module.load(path: path)
        #expect(try module.slots().first?.token?.pinLocked == false)
        let error = try thrown(PKCS11Error.self) { try Self.key(on: module) }
        #expect(error == .pinLocked(token: "fake"))
        #expect(try FakeModule.calls("C_Login", in: path) == 1)
    }

    // MARK: Mechanisms

    @Test("CKR_MECHANISM_INVALID from C_SignInit and C_GenerateKeyPair is unsupportedMechanism")
    func mechanismInvalid() async throws {
        let module = try PKCS11Module.load(path: try FakeModule.build(.mechanismInvalid))
        let key = try Self.key(on: module)
        let signing = try thrown(PKCS11Error.self) { try module.sign(Self.digest, with: key, mechanism: .ecdsa, pin: Self.pin) }
        #expect(signing == .unsupportedMechanism(token: "fake", mechanism: "CKM_ECDSA"))
        #expect(signing.category == .malformedInput)

        let signer = try PKCS11Signer(module: module, key: key, pin: Self.pin)
        let viaSigner = try await thrownAsync(PKCS11Error.self) { try await signer.sign(digest: DigestAlgorithm.sha256.hash(Self.message)) }
        #expect(viaSigner == .unsupportedMechanism(token: "fake", mechanism: "CKM_ECDSA"))

        let p256 = try thrown(PKCS11Error.self) {
            try module.generateKeyPair(token: Self.token, type: .p256, label: "new", id: [0x02], pin: Self.pin)
        }
        #expect(p256 == .unsupportedMechanism(token: "fake", mechanism: "CKM_EC_KEY_PAIR_GEN"))
        let ed25519 = try thrown(PKCS11Error.self) {
            try module.generateKeyPair(token: Self.token, type: .ed25519, label: "new", id: [0x02], pin: Self.pin)
        }
        #expect(ed25519 == .unsupportedMechanism(token: "fake", mechanism: "CKM_EC_EDWARDS_KEY_PAIR_GEN"))
    }

    // MARK: Signatures of impossible sizes

    @Test("C_Sign asking for a 1 MiB buffer is a failure, not an allocation")
    func hugeSignature() async throws {
        let path = try FakeModule.build(.hugeSignature)
        let module = try PKCS11Module.load(path: path)
        let key = try Self.key(on: module)
        let error = try thrown(PKCS11Error.self) { try module.sign(Self.digest, with: key, mechanism: .ecdsa, pin: Self.pin) }
        Self.expectFailure(error, in: "C_Sign", mentioning: ["1048576"])
        let signer = try PKCS11Signer(module: module, key: key, pin: Self.pin)
        let viaSigner = try await thrownAsync(PKCS11Error.self) { try await signer.sign(digest: DigestAlgorithm.sha256.hash(Self.message)) }
        Self.expectFailure(viaSigner, in: "C_Sign", mentioning: ["1048576"])
        #expect(try FakeModule.calls("C_Sign", in: path) == 2, "one C_Sign each: the size it asks for is refused at once")
    }

    @Test("C_Sign claiming more bytes than its buffer holds is a failure")
    func overlongWrite() async throws {
        let module = try PKCS11Module.load(path: try FakeModule.build(.overlongWrite))
        let key = try Self.key(on: module)
        let error = try thrown(PKCS11Error.self) { try module.sign(Self.digest, with: key, mechanism: .ecdsa, pin: Self.pin) }
        Self.expectFailure(error, in: "C_Sign", mentioning: ["128 bytes", "buffer of 64"])
        let signer = try PKCS11Signer(module: module, key: key, pin: Self.pin)
        let viaSigner = try await thrownAsync(PKCS11Error.self) { try await signer.sign(digest: DigestAlgorithm.sha256.hash(Self.message)) }
        Self.expectFailure(viaSigner, in: "C_Sign", mentioning: ["128 bytes", "buffer of 64"])
    }

    @Test("an ECDSA signature of the wrong size is refused by the signer")
    func shortSignature() async throws {
        let module = try PKCS11Module.load(path: try FakeModule.build(.shortSignature))
        let key = try Self.key(on: module)
        // The module's own call returns what the token made …
        #expect(try module.sign(Self.digest, with: key, mechanism: .ecdsa, pin: Self.pin).count == 10)
        // … and the signer, which knows what a P-256 signature is, refuses it.
        let signer = try PKCS11Signer(module: module, key: key, pin: Self.pin)
        let error = try await thrownAsync(PKCS11Error.self) { try await signer.sign(digest: DigestAlgorithm.sha256.hash(Self.message)) }
        Self.expectFailure(error, in: "C_Sign", mentioning: ["10 bytes", "64 expected"])
    }

    // MARK: Slot lists

    @Test("a slot list that never fits its buffer is given up on after three tries")
    func slotCountLies() throws {
        let path = try FakeModule.build(.slotCountLies)
        let module = try PKCS11Module.load(path: path)
        let error = try thrown(PKCS11Error.self) { try module.slots() }
        Self.expectFailure(error, in: "C_GetSlotList", mentioning: ["CKR_BUFFER_TOO_SMALL", "kept changing"])
        #expect(try FakeModule.calls("C_GetSlotList", in: path) == 6, "three counts and three lists")
        let lookup = try thrown(PKCS11Error.self) { try Self.key(on: module) }
        Self.expectFailure(lookup, in: "C_GetSlotList", mentioning: ["CKR_BUFFER_TOO_SMALL"])
    }

    @Test("a module counting a million slots is refused before anything is allocated")
    func tooManySlots() throws {
        let module = try PKCS11Module.load(path: try FakeModule.build(.tooManySlots))
        let error = try thrown(PKCS11Error.self) { try module.slots() }
        Self.expectFailure(error, in: "C_GetSlotList", mentioning: ["1048576 slots", "1024"])
        let lookup = try thrown(PKCS11Error.self) { try module.tokens(matching: Self.token) }
        #expect(lookup == error)
    }

    @Test("a module listing more slots than it had room for is a failure")
    func slotListOverflow() throws {
        let module = try PKCS11Module.load(path: try FakeModule.build(.slotListOverflow))
        let error = try thrown(PKCS11Error.self) { try module.slots() }
        Self.expectFailure(error, in: "C_GetSlotList", mentioning: ["2 slots", "room for 1"])
    }

    // MARK: Attributes and searches

    @Test("an attribute 4 GiB long is not read; the key is found without a public key, saying why")
    func attributeLies() throws {
        let module = try PKCS11Module.load(path: try FakeModule.build(.attributeLies))
        let key = try Self.key(on: module)
        #expect(key.publicKey == nil)
        let problem = try thrown(PKCS11Error.self) { try key.requirePublicKey() }
        expectError(problem, is: "unsupportedKey", mentioning: ["C_GetAttributeValue", "4294967295"])
        let signer = try thrown(PKCS11Error.self) { try PKCS11Signer(module: module, key: key, pin: Self.pin) }
        #expect(signer == problem)
        let publicKey = try thrown(PKCS11Error.self) { try module.publicKey(matching: try PKCS11URI(parsing: Self.keyURI)) }
        expectError(publicKey, is: "unsupportedKey", mentioning: ["4294967295"])
        // Without a public key the signature's size is not known: it is asked for, and comes back.
        #expect(try module.sign(Self.digest, with: key, mechanism: .ecdsa, pin: Self.pin).count == 64)
    }

    @Test("an attribute said to be longer than the buffer it was written to is refused")
    func attributeOverlong() throws {
        let module = try PKCS11Module.load(path: try FakeModule.build(.attributeOverlong))
        let key = try Self.key(on: module)
        #expect(key.publicKey == nil)
        let problem = try thrown(PKCS11Error.self) { try key.requirePublicKey() }
        expectError(problem, is: "unsupportedKey", mentioning: ["C_GetAttributeValue", "167 bytes", "buffer of 67"])
    }

    @Test("a search that never ends is cut off at 10,000 objects")
    func endlessSearch() throws {
        let path = try FakeModule.build(.endlessSearch)
        let module = try PKCS11Module.load(path: path)
        let error = try thrown(PKCS11Error.self) { try Self.key(on: module) }
        Self.expectFailure(error, in: "C_FindObjects", mentioning: ["10000"])
        let batches = try FakeModule.calls("C_FindObjects", in: path)
        #expect(batches > 1 && batches <= 10_000 / 64 + 1, "\(batches) calls of C_FindObjects")
    }

    // MARK: Return codes

    @Test("a session that is always stale is replaced once, then the failure is reported")
    func staleSession() throws {
        let path = try FakeModule.build(.staleSession)
        let module = try PKCS11Module.load(path: path)
        let error = try thrown(PKCS11Error.self) { try Self.key(on: module) }
        #expect(error == .tokenFailure(function: "C_FindObjectsInit", rv: "CKR_SESSION_HANDLE_INVALID", detail: ""))
        #expect(try FakeModule.calls("C_OpenSession", in: path) == 2, "one fresh session, then no more")
        #expect(try FakeModule.calls("C_FindObjectsInit", in: path) == 2)
    }

    @Test("a return code PKCS#11 does not define is shown in hex")
    func strangeReturnCode() throws {
        let module = try PKCS11Module.load(path: try FakeModule.build(.strangeReturnCode))
        #expect(try module.slots().count == 1)
        let error = try thrown(PKCS11Error.self) { try Self.key(on: module) }
        #expect(error == .tokenFailure(function: "C_OpenSession", rv: "0x80000001", detail: ""))
        #expect(error.description.contains("C_OpenSession (0x80000001)"))
    }

    // MARK: Loading

    @Test("a module whose C_Initialize fails is not loadable, and is tried afresh next time")
    func initializeFails() throws {
        let path = try FakeModule.build(.initializeFails)
        let error = try thrown(PKCS11Error.self) { try PKCS11Module.load(path: path) }
        #expect(error == .moduleNotLoadable(path: path, detail: "C_Initialize failed (CKR_GENERAL_ERROR)"))
        #expect(error.category == .environment)
        let again = try thrown(PKCS11Error.self) { try PKCS11Module.load(path: path) }
        #expect(again == error)
    }

    @Test("a shared library without C_GetFunctionList is not a PKCS#11 module")
    func noFunctionList() throws {
        let path = try FakeModule.build(.noFunctionList)
        let error = try thrown(PKCS11Error.self) { try PKCS11Module.load(path: path) }
        #expect(error == .notAPKCS11Module(path: path))
    }

    @Test("C_GetFunctionList returning CKR_OK and no list is not loadable")
    func nullFunctionList() throws {
        let path = try FakeModule.build(.nullFunctionList)
        let error = try thrown(PKCS11Error.self) { try PKCS11Module.load(path: path) }
        expectError(error, is: "moduleNotLoadable", mentioning: [path, "C_GetFunctionList"])
    }
}
