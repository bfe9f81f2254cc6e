import Foundation
import SignetCore
import SignetTestSupport
import Testing
@testable import SignetVault

/// Private keys in the vault, `vault:SERVICE/ACCOUNT` references, and the key source that
/// makes vault keys usable wherever Signet takes a key.
@Suite struct VaultKeyTests {
    static let message: [UInt8] = Array("Signet vault test message: the quick brown fox jumps over the lazy dog.".utf8)

    // MARK: Storing keys

    @Test("a stored private key comes back with the same public key", arguments: [KeyGenerationType.p256, .ed25519, .rsa2048])
    func roundTrip(type: KeyGenerationType) async throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/test.vault"
        let vault = try VaultTest.newVault(at: path)
        let key = try PrivateKey.generate(type)
        let details = VaultItemDetails(label: "release key", attributes: ["type": type.rawValue])
        try await vault.setPrivateKey(key, service: "keys", account: type.rawValue, details: details)

        let item = try await vault.item(service: "keys", account: type.rawValue)
        #expect(item.kind == .privateKey)
        #expect(item.details == details)
        let stored = try await vault.secret(service: "keys", account: type.rawValue)
        #expect(try stored.bytes == key.encoded(as: .der), "stored as PKCS#8 DER")

        let reopened = try Vault(path: path, credentials: passphrase())
        let back = try await reopened.privateKey(service: "keys", account: type.rawValue)
        #expect(back.kind == key.kind)
        #expect(try back.publicKey.encoded(as: .der) == key.publicKey.encoded(as: .der))
        #expect(back.publicKey == key.publicKey)
    }

    @Test("setPrivateKey adds, and replaces only when asked")
    func replace() async throws {
        let folder = try TemporaryFolder()
        let vault = try VaultTest.newVault(at: folder.path + "/test.vault")
        let first = try PrivateKey.generate(.p256)
        let second = try PrivateKey.generate(.p256)
        let details = VaultItemDetails(label: "kept")
        try await vault.setPrivateKey(first, service: "keys", account: "k", details: details)
        let created = try await vault.item(service: "keys", account: "k").created

        let duplicate = try await VaultTest.thrownAsync { try await vault.setPrivateKey(second, service: "keys", account: "k") }
        #expect(duplicate == .duplicateItem(service: "keys", account: "k"))
        #expect(try await vault.privateKey(service: "keys", account: "k").publicKey == first.publicKey)

        try await Task.sleep(for: .milliseconds(10))
        try await vault.setPrivateKey(second, service: "keys", account: "k", replace: true)
        #expect(try await vault.privateKey(service: "keys", account: "k").publicKey == second.publicKey)
        let item = try await vault.item(service: "keys", account: "k")
        #expect(item.created == created)
        #expect(item.modified > created)
        #expect(item.details == details, "replacing without details keeps them")

        // replace: true also adds a new key.
        try await vault.setPrivateKey(first, service: "keys", account: "new", replace: true)
        #expect(try await vault.privateKey(service: "keys", account: "new").publicKey == first.publicKey)
    }

    @Test("passwords and private keys do not stand in for each other")
    func wrongKind() async throws {
        let folder = try TemporaryFolder()
        let vault = try VaultTest.newVault(at: folder.path + "/test.vault")
        let key = try PrivateKey.generate(.ed25519)
        try await vault.set(secret("hunter2"), service: "svc", account: "password")
        try await vault.setPrivateKey(key, service: "svc", account: "key")

        let notAKey = try await VaultTest.thrownAsync { try await vault.privateKey(service: "svc", account: "password") }
        #expect(notAKey == .wrongKind(service: "svc", account: "password", expected: .privateKey, found: .password))
        VaultTest.check(notAKey, is: "wrongKind", mentioning: "is a password, not a private key")
        #expect(notAKey.category == .malformedInput)

        let notAPassword = try await VaultTest.thrownAsync { try await vault.set(secret("x"), service: "svc", account: "key") }
        #expect(notAPassword == .wrongKind(service: "svc", account: "key", expected: .password, found: .privateKey))
        let replaceAPassword = try await VaultTest.thrownAsync {
            try await vault.setPrivateKey(key, service: "svc", account: "password", replace: true)
        }
        #expect(replaceAPassword == .wrongKind(service: "svc", account: "password", expected: .privateKey, found: .password))
        let addAKey = try await VaultTest.thrownAsync { try await vault.setPrivateKey(key, service: "svc", account: "password") }
        #expect(addAKey == .duplicateItem(service: "svc", account: "password"))

        // Nothing changed.
        #expect(try await vault.password(service: "svc", account: "password") == "hunter2")
        #expect(try await vault.privateKey(service: "svc", account: "key").publicKey == key.publicKey)
        let missing = try await VaultTest.thrownAsync { try await vault.privateKey(service: "svc", account: "none") }
        #expect(missing == .itemNotFound(service: "svc", account: "none"))
    }

    @Test("a private-key item must hold a private key: other bytes are refused on the way in")
    func notAKey() async throws {
        let folder = try TemporaryFolder()
        let vault = try VaultTest.newVault(at: folder.path + "/test.vault")
        let added = try await VaultTest.thrownAsync {
            try await vault.add(secret("not a key at all"), service: "svc", account: "junk", kind: .privateKey)
        }
        #expect(added.code == "invalidArgument", "\(added)")
        let key = try PrivateKey.generate(.p256)
        try await vault.setPrivateKey(key, service: "svc", account: "key")
        let updated = try await VaultTest.thrownAsync {
            try await vault.update(service: "svc", account: "key", secret: secret("still not a key"))
        }
        #expect(updated.code == "invalidArgument", "\(updated)")
        #expect(try await vault.privateKey(service: "svc", account: "key").publicKey == key.publicKey)
    }

    @Test("a locked vault names its keys but does not give them out")
    func lockedKey() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/test.vault"
        let vault = try VaultTest.newVault(at: path)
        try await vault.setPrivateKey(try PrivateKey.generate(.p256), service: "svc", account: "key")
        await vault.lock()
        let keys = try await vault.query(VaultQuery(kind: .privateKey))
        #expect(VaultTest.names(keys) == ["svc/key"])
        let error = try await VaultTest.thrownAsync { try await vault.privateKey(service: "svc", account: "key") }
        #expect(error == .locked(path: path))
        let another = try PrivateKey.generate(.p256)
        let setError = try await VaultTest.thrownAsync { try await vault.setPrivateKey(another, service: "svc", account: "k2") }
        #expect(setError == .locked(path: path))
    }

    // MARK: References

    @Test("vault:SERVICE/ACCOUNT references parse, and print back the same")
    func references() throws {
        let plain = try VaultKeyReference(parsing: "vault:svc/acct")
        #expect(plain == VaultKeyReference(service: "svc", account: "acct"))
        #expect(plain.description == "vault:svc/acct")

        let escaped = try VaultKeyReference(parsing: "vault:a%2Fb/c%25d")
        #expect(escaped.service == "a/b")
        #expect(escaped.account == "c%d")
        #expect(escaped.description == "vault:a%2Fb/c%25d")

        let lowercase = try VaultKeyReference(parsing: "vault:a%2fb/c")
        #expect(lowercase.service == "a/b")
        #expect(lowercase.description == "vault:a%2Fb/c", "printed in the canonical form")

        let utf8 = try VaultKeyReference(parsing: "vault:b%C3%BCcher/%E7%94%A8")
        #expect(utf8.service == "bücher" && utf8.account == "用")
        let unicode = try VaultKeyReference(parsing: "vault:bücher/用户 🔑")
        #expect(unicode.service == "bücher" && unicode.account == "用户 🔑")
        #expect(unicode.description == "vault:bücher/用户 🔑")
        #expect(VaultKeyReference.scheme == "vault")
    }

    @Test(
        "any names survive description and parsing",
        arguments: [("svc", "acct"), ("a/b", "c%d"), ("%2F", "%25"), ("//", "%"), ("api.example.com", "deploy bot"), ("ü/ß", "🔑%🔒")])
    func referenceRoundTrip(service: String, account: String) throws {
        let reference = VaultKeyReference(service: service, account: account)
        let parsed = try VaultKeyReference(parsing: reference.description)
        #expect(parsed == reference, "\(reference.description)")
        #expect(reference.description.split(separator: "/", omittingEmptySubsequences: false).count == 2)
    }

    @Test(
        "malformed references are refused",
        arguments: [
            "vault:", "vault:svc", "vault:a/b/c", "vault:/acct", "vault:svc/", "vault:/", "vault:%zz/a", "vault:%2/a",
            "vault:a/%", "other:a/b", "vaults:a/b", "svc/acct", "", "vault:%ff/a", "vault:a/%C3", "vault:a%0Ab/c",
            "vault:a/b\n", "vault:%+1/a",
        ])
    func malformedReference(_ text: String) throws {
        let error = try VaultTest.thrown { try VaultKeyReference(parsing: text) }
        #expect(error.code == "invalidArgument", "\(text.debugDescription): \(error)")
    }

    @Test("a reference to names over 256 bytes is refused")
    func longReference() throws {
        let long = String(repeating: "a", count: 257)
        let error = try VaultTest.thrown { try VaultKeyReference(parsing: "vault:\(long)/acct") }
        #expect(error.code == "invalidArgument")
        // 86 escaped slashes are 258 characters of text but 86 bytes of name.
        let escaped = String(repeating: "%2F", count: 86)
        let parsed = try VaultKeyReference(parsing: "vault:\(escaped)/acct")
        #expect(parsed.service == String(repeating: "/", count: 86))
    }

    // MARK: The key source

    @Test("vault: references sign through a KeySourceResolver", arguments: [KeyGenerationType.p256, .ed25519, .rsa2048])
    func keySource(type: KeyGenerationType) async throws {
        let folder = try TemporaryFolder()
        let vault = try VaultTest.newVault(at: folder.path + "/test.vault")
        let key = try PrivateKey.generate(type)
        try await vault.setPrivateKey(key, service: "signing", account: "release/2025")
        var resolver = KeySourceResolver()
        resolver.register(VaultKeySource { vault })
        let reference = VaultKeyReference(service: "signing", account: "release/2025").description
        #expect(reference == "vault:signing/release%2F2025")

        let signer = try await resolver.signer(reference)
        #expect(signer.publicKey == key.publicKey)
        #expect(signer.algorithm == key.kind.defaultAlgorithm)
        let signature = try await signer.sign(message: Self.message)
        let publicKey = try await resolver.publicKey(reference)
        #expect(try publicKey.encoded(as: .der) == key.publicKey.encoded(as: .der))
        try PublicKeyVerifier(key: publicKey, algorithm: signer.algorithm).verify(signature: signature, message: Self.message)

        var changed = Self.message
        changed[0] ^= 1
        let tampered = try #require(throws: SignetCoreError.self) {
            try PublicKeyVerifier(key: publicKey, algorithm: signer.algorithm).verify(signature: signature, message: changed)
        }
        #expect(
            tampered == .signatureInvalid(detail: "signature is not valid (\(signer.algorithm.rawValue), key \(key.publicKey.fingerprint))"),
            "\(type): \(tampered)")
    }

    @Test("the key source passes the algorithm on and refuses one that does not fit")
    func keySourceAlgorithm() async throws {
        let folder = try TemporaryFolder()
        let vault = try VaultTest.newVault(at: folder.path + "/test.vault")
        try await vault.setPrivateKey(try PrivateKey.generate(.rsa2048), service: "s", account: "rsa")
        let resolver = KeySourceResolver(providers: [VaultKeySource { vault }])
        let pss = try await resolver.signer("vault:s/rsa", algorithm: .rsaPSSSHA512)
        #expect(pss.algorithm == .rsaPSSSHA512)
        let signature = try await pss.sign(message: Self.message)
        try PublicKeyVerifier(key: pss.publicKey, algorithm: .rsaPSSSHA512).verify(signature: signature, message: Self.message)
        let unfitting = try await #require(throws: SignetCoreError.self) { try await resolver.signer("vault:s/rsa", algorithm: .ed25519) }
        #expect(
            unfitting == .algorithmMismatch(
                algorithm: "ed25519", keyDescription: "an RSA-2048 key",
                hint: "use rsa-v1_5-sha256, rsa-v1_5-sha512, rsa-pss-sha256, rsa-pss-sha512"),
            "\(unfitting)")
    }

    /// Counts how often the key source opens the vault.
    actor OpenCounter {
        var count = 0
        func increment() { count += 1 }
    }

    @Test("the key source reports vault errors, and parses before opening the vault")
    func keySourceErrors() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/test.vault"
        let vault = try VaultTest.newVault(at: path)
        try await vault.set(secret("a password"), service: "s", account: "password")
        try await vault.setPrivateKey(try PrivateKey.generate(.p256), service: "s", account: "key")
        let counter = OpenCounter()
        let resolver = KeySourceResolver(providers: [
            VaultKeySource {
                await counter.increment()
                return vault
            }
        ])

        let malformed = try await VaultTest.thrownAsync { try await resolver.signer("vault:a/b/c") }
        #expect(malformed.code == "invalidArgument")
        let opensAfterMalformed = await counter.count
        #expect(opensAfterMalformed == 0, "a malformed reference must not open the vault")

        let missing = try await VaultTest.thrownAsync { try await resolver.signer("vault:s/none") }
        #expect(missing == .itemNotFound(service: "s", account: "none"))
        let opensAfterMissing = await counter.count
        #expect(opensAfterMissing == 1)
        let password = try await VaultTest.thrownAsync { try await resolver.publicKey("vault:s/password") }
        #expect(password.code == "wrongKind")

        // A vault opened locked cannot give out its keys.
        let lockedResolver = KeySourceResolver(providers: [VaultKeySource { try Vault(path: path) }])
        let locked = try await VaultTest.thrownAsync { try await lockedResolver.signer("vault:s/key") }
        #expect(locked == .locked(path: path))
        // Nor can a vault that is not there.
        let nowhere = folder.path + "/none.vault"
        let missingResolver = KeySourceResolver(providers: [VaultKeySource { try Vault(path: nowhere, credentials: passphrase()) }])
        let missingVault = try await VaultTest.thrownAsync { try await missingResolver.publicKey("vault:s/key") }
        #expect(missingVault == .vaultMissing(path: nowhere))
    }
}
