import Foundation
import SignetCore
import SignetTestSupport
import Testing
@testable import SignetVault

/// What the library checks about the vault file before and after SQLite opens it: where it is,
/// who can write beside it, and that its schema and names are the vault's own.
@Suite struct VaultFileChecksTests {
    @Test("a folder other users can write is refused, for creating and for opening")
    func worldWritableFolder() async throws {
        let folder = try TemporaryFolder()
        let shared = folder.path + "/shared"
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: false)
        let path = shared + "/test.vault"
        _ = try VaultTest.newVault(at: path)

        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: shared)
        let opening = try VaultTest.thrown { try Vault(path: path, credentials: passphrase()) }
        VaultTest.check(opening, is: "io", mentioning: "writable by other users")
        let creating = try VaultTest.thrown { try VaultTest.newVault(at: shared + "/other.vault") }
        VaultTest.check(creating, is: "io", mentioning: "writable by other users")
        #expect(!VaultTest.exists(shared + "/other.vault"))

        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: shared)
        let vault = try Vault(path: path, credentials: passphrase())
        #expect(try await vault.allAccounts().isEmpty)
    }

    @Test("a vault reached through a symbolically linked folder opens; a linked vault file does not")
    func linkedFolder() async throws {
        let folder = try TemporaryFolder()
        let real = folder.path + "/real"
        try FileManager.default.createDirectory(atPath: real, withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: folder.path + "/link", withDestinationPath: real)

        let vault = try VaultTest.newVault(at: folder.path + "/link/test.vault")
        try await vault.set(secret("s3cret"), service: "web", account: "alice")
        #expect(VaultTest.exists(real + "/test.vault"))
        let reopened = try Vault(path: folder.path + "/link/test.vault", credentials: passphrase())
        #expect(try await reopened.password(service: "web", account: "alice") == "s3cret")

        try FileManager.default.createSymbolicLink(atPath: folder.path + "/alias.vault", withDestinationPath: real + "/test.vault")
        let linked = try VaultTest.thrown { try Vault(path: folder.path + "/alias.vault", credentials: passphrase()) }
        VaultTest.check(linked, is: "io", mentioning: "symbolic link")
    }

    @Test("a missing folder is reported as a missing vault, not created")
    func missingFolder() throws {
        let folder = try TemporaryFolder()
        let error = try VaultTest.thrown { try Vault(path: folder.path + "/nowhere/test.vault", credentials: passphrase()) }
        #expect(error.code == "vaultMissing" || error.code == "io", "\(error)")
        #expect(!VaultTest.exists(folder.path + "/nowhere"))
    }

    @Test(
        "a schema changed behind the library's back is damage",
        arguments: [
            "CREATE TABLE extra (x)",
            "CREATE TRIGGER leak AFTER INSERT ON items BEGIN DELETE FROM items; END",
            "CREATE INDEX by_kind ON items (kind)",
            "CREATE VIEW everything AS SELECT * FROM items",
        ])
    func alteredSchema(statement: String) async throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/test.vault"
        let vault = try VaultTest.newVault(at: path)
        try await vault.set(secret("s3cret"), service: "web", account: "alice")
        try VaultTest.tamper(path, statement)

        let error = try VaultTest.thrown { try Vault(path: path, credentials: passphrase()) }
        VaultTest.check(error, is: "corrupted", mentioning: path, "schema")
        let locked = try VaultTest.thrown { try Vault(path: path) }
        #expect(locked.code == "corrupted")
    }

    @Test("a name in the file that the library would refuse is reported as damage when listed")
    func plantedName() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/test.vault"
        let vault = try VaultTest.newVault(at: path)
        try await vault.set(secret("s3cret"), service: "web", account: "alice")
        // A right-to-left override makes "alice" display as something else.
        try VaultTest.tamper(path, "UPDATE items SET account = ? WHERE account = 'alice'", [.text("ali\u{202E}ec")])

        let reopened = try Vault(path: path)
        let error = try await VaultTest.thrownAsync { try await reopened.allAccounts() }
        #expect(error.code == "corrupted", "\(error)")
    }
}
