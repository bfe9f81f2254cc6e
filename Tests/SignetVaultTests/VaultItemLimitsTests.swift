import Foundation
import SignetCore
import SignetTestSupport
import Testing
@testable import SignetVault

/// The bounds on names, secrets and details, and the values that must survive unchanged:
/// Unicode names, binary secrets, UTF-8 passwords.
@Suite struct VaultItemLimitsTests {
    /// Requires `body` to fail with ``VaultError/invalidArgument(detail:)``.
    private func expectInvalid(
        _ what: String, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void
    ) async throws {
        let error = try await VaultTest.thrownAsync(sourceLocation: sourceLocation) { try await body() }
        #expect(error.code == "invalidArgument", "\(what): \(error)", sourceLocation: sourceLocation)
        #expect(error.category == .usage, sourceLocation: sourceLocation)
    }

    @Test("names: 1 to 256 bytes of UTF-8 without control characters")
    func names() async throws {
        let folder = try TemporaryFolder()
        let vault = try VaultTest.newVault(at: folder.path + "/test.vault")
        let longest = String(repeating: "a", count: 256)
        let tooLong = String(repeating: "a", count: 257)
        let longestAccented = String(repeating: "é", count: 128)  // 256 bytes
        let tooLongAccented = String(repeating: "é", count: 129)  // 129 characters, 258 bytes

        try await expectInvalid("empty service") { try await vault.set(secret("x"), service: "", account: "a") }
        try await expectInvalid("empty account") { try await vault.set(secret("x"), service: "s", account: "") }
        try await expectInvalid("257-byte account") { try await vault.set(secret("x"), service: "s", account: tooLong) }
        try await expectInvalid("257-byte service") { try await vault.set(secret("x"), service: tooLong, account: "a") }
        try await expectInvalid("258 bytes in 129 characters") {
            try await vault.set(secret("x"), service: "s", account: tooLongAccented)
        }
        for bad in ["line\nbreak", "tab\there", "nul\u{0}", "del\u{7F}", "nel\u{85}", "\r", "gpj.\u{202E}exe", "a\u{2066}b", "\u{200F}x"] {
            try await expectInvalid("control character in \(bad.debugDescription)") {
                try await vault.set(secret("x"), service: bad, account: "a")
            }
            try await expectInvalid("control character in account \(bad.debugDescription)") {
                try await vault.add(secret("x"), service: "s", account: bad)
            }
        }
        // Every entry point checks names, not only the writes.
        try await expectInvalid("secret with an empty service") { _ = try await vault.secret(service: "", account: "a") }
        try await expectInvalid("delete with an empty account") { try await vault.delete(service: "s", account: "") }
        try await expectInvalid("query with a long service") { _ = try await vault.query(VaultQuery(service: tooLong)) }
        try await expectInvalid("accounts with a control character") { _ = try await vault.accounts(service: "a\nb") }
        #expect(try await vault.allAccounts().isEmpty, "refused writes store nothing")

        try await vault.set(secret("long"), service: longest, account: longest)
        try await vault.set(secret("accented"), service: "s", account: longestAccented)
        #expect(try await vault.password(service: longest, account: longest) == "long")
        #expect(try await vault.password(service: "s", account: longestAccented) == "accented")

        try await vault.set(secret("r"), service: "a", account: "b")
        try await expectInvalid("rename to an empty service") {
            try await vault.rename(service: "a", account: "b", toService: "", account: "b")
        }
        try await expectInvalid("rename to a 257-byte account") {
            try await vault.rename(service: "a", account: "b", toService: "a", account: tooLong)
        }
        #expect(try await vault.password(service: "a", account: "b") == "r")
    }

    @Test("secrets: 1 byte to 64 KiB")
    func secrets() async throws {
        let folder = try TemporaryFolder()
        let vault = try VaultTest.newVault(at: folder.path + "/test.vault")
        let largest = VaultTest.randomBytes(VaultLimits.maximumSecretLength)
        #expect(largest.count == 65_536)

        try await expectInvalid("empty secret") { try await vault.set(SecretBytes([UInt8]()), service: "s", account: "a") }
        try await expectInvalid("64 KiB + 1") {
            try await vault.set(SecretBytes(largest + [0]), service: "s", account: "a")
        }
        try await expectInvalid("add of an empty secret") { try await vault.add(SecretBytes([UInt8]()), service: "s", account: "a") }
        #expect(try await vault.allAccounts().isEmpty)

        try await vault.set(SecretBytes(largest), service: "s", account: "big")
        #expect(try await vault.secret(service: "s", account: "big").bytes == largest)
        try await vault.set(SecretBytes([42]), service: "s", account: "small")
        #expect(try await vault.secret(service: "s", account: "small").bytes == [42])

        try await expectInvalid("update to an empty secret") {
            try await vault.update(service: "s", account: "small", secret: SecretBytes([UInt8]()))
        }
        try await expectInvalid("update to 64 KiB + 1") {
            try await vault.update(service: "s", account: "small", secret: SecretBytes(largest + [1]))
        }
        #expect(try await vault.secret(service: "s", account: "small").bytes == [42])
    }

    @Test("details: label and comment up to 1 KiB, up to 32 attributes")
    func details() async throws {
        let folder = try TemporaryFolder()
        let vault = try VaultTest.newVault(at: folder.path + "/test.vault")
        let kib = String(repeating: "x", count: 1024)
        let over = kib + "x"
        let thirtyTwo = Dictionary(uniqueKeysWithValues: (0..<32).map { ("name\($0)", "value") })
        let thirtyThree = Dictionary(uniqueKeysWithValues: (0..<33).map { ("name\($0)", "value") })
        let longestName = String(repeating: "n", count: VaultLimits.maximumAttributeNameLength)

        try await expectInvalid("label of 1025 bytes") {
            try await vault.set(secret("x"), service: "s", account: "a", details: VaultItemDetails(label: over))
        }
        try await expectInvalid("comment of 1025 bytes") {
            try await vault.set(secret("x"), service: "s", account: "a", details: VaultItemDetails(comment: over))
        }
        try await expectInvalid("33 attributes") {
            try await vault.set(secret("x"), service: "s", account: "a", details: VaultItemDetails(attributes: thirtyThree))
        }
        try await expectInvalid("attribute value of 1025 bytes") {
            try await vault.set(secret("x"), service: "s", account: "a", details: VaultItemDetails(attributes: ["k": over]))
        }
        for name in ["", longestName + "n", "a=b"] {
            try await expectInvalid("attribute name \(name.debugDescription)") {
                try await vault.set(secret("x"), service: "s", account: "a", details: VaultItemDetails(attributes: [name: "v"]))
            }
        }
        #expect(try await vault.allAccounts().isEmpty)

        let largest = VaultItemDetails(label: kib, comment: kib, attributes: thirtyTwo.merging([longestName: kib]) { $1 })
        let fits = VaultItemDetails(label: kib, comment: kib, attributes: thirtyTwo)
        try await expectInvalid("33 attributes, the last one long") {
            try await vault.set(secret("x"), service: "s", account: "a", details: largest)
        }
        try await vault.set(secret("x"), service: "s", account: "a", details: fits)
        #expect(try await vault.item(service: "s", account: "a").details == fits)

        try await expectInvalid("update with a long label") {
            try await vault.update(service: "s", account: "a", details: VaultItemDetails(label: over))
        }
        #expect(try await vault.item(service: "s", account: "a").details == fits, "a refused update changes nothing")
    }

    // MARK: Values that must come back unchanged

    @Test("Unicode service and account names")
    func unicodeNames() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/test.vault"
        let vault = try VaultTest.newVault(at: path)
        let names: [(String, String)] = [
            ("bücher.example", "jürgen"), ("例え.jp", "用户-🔑"), ("Ελληνικά", "👩‍👩‍👧"), ("a/b%2Fc", "50% off"),
        ]
        for (index, (service, account)) in names.enumerated() {
            try await vault.set(secret("secret \(index) ✓"), service: service, account: account)
        }
        let reopened = try Vault(path: path, credentials: passphrase())
        for (index, (service, account)) in names.enumerated() {
            #expect(try await reopened.password(service: service, account: account) == "secret \(index) ✓")
            let item = try await reopened.item(service: service, account: account)
            #expect(Array(item.service.utf8) == Array(service.utf8))
            #expect(Array(item.account.utf8) == Array(account.utf8))
        }
        let listed = try await reopened.accounts(service: "例え.jp")
        #expect(listed.map(\.account) == ["用户-🔑"])
    }

    @Test("names are matched byte for byte: composed and decomposed é are two items")
    func noNormalisation() async throws {
        let folder = try TemporaryFolder()
        let vault = try VaultTest.newVault(at: folder.path + "/test.vault")
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        try await vault.set(secret("composed"), service: composed, account: "a")
        try await vault.set(secret("decomposed"), service: decomposed, account: "a")
        #expect(try await vault.password(service: composed, account: "a") == "composed")
        #expect(try await vault.password(service: decomposed, account: "a") == "decomposed")
        let all = try await vault.allAccounts()
        #expect(all.map { Array($0.service.utf8) } == [Array(decomposed.utf8), Array(composed.utf8)], "binary order")
    }

    @Test("a binary secret with NUL bytes comes back whole")
    func binarySecret() async throws {
        let folder = try TemporaryFolder()
        let vault = try VaultTest.newVault(at: folder.path + "/test.vault")
        let binary: [UInt8] = [0, 0, 1, 0, 0xFF, 0xFE, 0, 0x80, 0]
        try await vault.set(SecretBytes(binary), service: "bin", account: "nul")
        let back = try await vault.secret(service: "bin", account: "nul")
        #expect(back.count == binary.count)
        #expect(back.bytes == binary)

        let single: [UInt8] = [0]
        try await vault.set(SecretBytes(single), service: "bin", account: "zero")
        #expect(try await vault.secret(service: "bin", account: "zero").bytes == single)
    }

    @Test("password(service:account:) decodes UTF-8, replacing invalid sequences")
    func passwordText() async throws {
        let folder = try TemporaryFolder()
        let vault = try VaultTest.newVault(at: folder.path + "/test.vault")
        let text = "pässwörd ✓ 🔑 日本"
        try await vault.set(secret(text), service: "s", account: "utf8")
        #expect(try await vault.password(service: "s", account: "utf8") == text)
        #expect(try await vault.secret(service: "s", account: "utf8").bytes == Array(text.utf8))

        try await vault.set(SecretBytes([0x66, 0xFF, 0x6F]), service: "s", account: "invalid")
        #expect(try await vault.password(service: "s", account: "invalid") == "f\u{FFFD}o")
    }
}
