import CPKCS11
import Foundation
import SignetCore
import SignetTestSupport
import Testing

@testable import SignetPKCS11

/// Keys Signet generates on a token sign and do nothing else: every other use is false on the
/// token, as read back from SoftHSM2 (which would otherwise let the private key decrypt and
/// unwrap), and `pkcs11-tool` cannot decrypt with an RSA key that it can sign with.
@Suite("PKCS#11 generated keys only sign")
struct PKCS11SignOnlyTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var type: KeyGenerationType
        var id: [UInt8]
        var testDescription: String { type.rawValue }
    }

    static let cases: [Case] = [
        Case(type: .rsa2048, id: [0x5A, 0x01]), Case(type: .p256, id: [0x5A, 0x02]), Case(type: .ed25519, id: [0x5A, 0x03]),
    ]

    /// What the private key must not do, and what it must.
    static let privateUses: [(CK_ATTRIBUTE_TYPE, String)] = [
        (CKA_DECRYPT, "CKA_DECRYPT"), (CKA_UNWRAP, "CKA_UNWRAP"), (CKA_DERIVE, "CKA_DERIVE"), (CKA_SIGN_RECOVER, "CKA_SIGN_RECOVER"),
    ]
    static let privateSign: (CK_ATTRIBUTE_TYPE, String) = (CKA_SIGN, "CKA_SIGN")

    /// What the public key must not do, and what it must.
    static let publicUses: [(CK_ATTRIBUTE_TYPE, String)] = [
        (CKA_ENCRYPT, "CKA_ENCRYPT"), (CKA_WRAP, "CKA_WRAP"), (CKA_VERIFY_RECOVER, "CKA_VERIFY_RECOVER"), (CKA_DERIVE, "CKA_DERIVE"),
    ]
    static let publicVerify: (CK_ATTRIBUTE_TYPE, String) = (CKA_VERIFY, "CKA_VERIFY")

    static let message = Array("Signet PKCS#11 sign-only test message".utf8)

    @Test("a generated key pair reads back every use but signing and verifying as false", arguments: cases)
    func usesReadBackFalse(_ test: Case) throws {
        let module = try SoftHSM.module()
        let pin = PKCS11FixedPIN(SoftHSM.pin)
        let key = try module.generateKeyPair(
            token: SoftHSM.Token.signOnly.uri, type: test.type, label: "sign-only-\(test.type.rawValue)", id: test.id, pin: pin)
        let privateHandle = try #require(key.privateKeyHandle)
        let publicHandle = try #require(key.publicKeyHandle)

        let privateValues = try Self.read(Self.privateUses + [Self.privateSign], of: privateHandle, module: module, pin: pin)
        for (index, use) in Self.privateUses.enumerated() {
            #expect(privateValues[index] == [0], "\(use.1) of the \(test.type.rawValue) private key is \(String(describing: privateValues[index]))")
        }
        #expect(privateValues[Self.privateUses.count] == [1], "CKA_SIGN of the \(test.type.rawValue) private key")

        let publicValues = try Self.read(Self.publicUses + [Self.publicVerify], of: publicHandle, module: module, pin: pin)
        for (index, use) in Self.publicUses.enumerated() {
            #expect(publicValues[index] == [0], "\(use.1) of the \(test.type.rawValue) public key is \(String(describing: publicValues[index]))")
        }
        #expect(publicValues[Self.publicUses.count] == [1], "CKA_VERIFY of the \(test.type.rawValue) public key")
    }

    @Test("pkcs11-tool cannot decrypt with a generated RSA key, and signs with it")
    func pkcs11ToolCannotDecrypt() throws {
        let module = try SoftHSM.module()
        let tool = try #require(ProcessRunner.which("pkcs11-tool"), "pkcs11-tool is missing: install the Debian package opensc")
        let openssl = try #require(ProcessRunner.which("openssl"), "openssl is missing: install the Debian package openssl")
        let key = try module.generateKeyPair(
            token: SoftHSM.Token.signOnly.uri, type: .rsa2048, label: "no-decrypt", id: [0x5A, 0x10], pin: PKCS11FixedPIN(SoftHSM.pin))
        let folder = try TemporaryFolder()
        try folder.write("pub.pem", try key.requirePublicKey().encoded(as: .pem))
        try folder.write("message", Self.message)
        // A real PKCS#1 v1.5 ciphertext for the key, which the token would decrypt if it might.
        let encrypted = try ProcessRunner.run(
            openssl, ["pkeyutl", "-encrypt", "-pubin", "-inkey", "pub.pem", "-in", "message", "-out", "ciphertext"], in: folder.url)
        try #require(encrypted.status == 0, "\(encrypted)")

        let environment = try SoftHSM.environment()
        let selected = [
            "--module", SoftHSM.modulePath, "--token-label", SoftHSM.Token.signOnly.label, "--login", "--pin", SoftHSM.pin, "--id", "5a10",
        ]
        let decrypted = try ProcessRunner.run(
            tool, selected + ["--decrypt", "-m", "RSA-PKCS", "--input-file", "ciphertext", "--output-file", "plaintext"], in: folder.url,
            environment: environment)
        #expect(decrypted.status != 0, "pkcs11-tool decrypted with a key that may only sign: \(decrypted)")
        #expect(decrypted.stderr.contains("CKR_KEY_FUNCTION_NOT_PERMITTED"), "\(decrypted)")

        let signed = try ProcessRunner.run(
            tool, selected + ["--sign", "-m", "SHA256-RSA-PKCS", "--input-file", "message", "--output-file", "signature"], in: folder.url,
            environment: environment)
        try #require(signed.status == 0, "\(signed)")
        let verified = try ProcessRunner.run(openssl, ["dgst", "-sha256", "-verify", "pub.pem", "-signature", "signature", "message"], in: folder.url)
        #expect(verified.status == 0, "openssl does not verify pkcs11-tool's signature: \(verified)")
    }

    /// The values of `attributes` of the object `handle` on the sign-only token, as the token
    /// gives them (nil where it reports none).
    static func read(
        _ attributes: [(CK_ATTRIBUTE_TYPE, String)], of handle: UInt, module: PKCS11Module, pin: PKCS11FixedPIN
    ) throws -> [[UInt8]?] {
        try module.locked { (table: inout SessionTable) throws -> [[UInt8]?] in
            let slot = try module.uniqueSlot(SoftHSM.Token.signOnly.uri)
            return try module.withSession(slot, login: true, pin: pin, table: &table) { (session: CK_SESSION_HANDLE) throws -> [[UInt8]?] in
                try attributes.map { try module.attribute($0.0, of: CK_OBJECT_HANDLE(handle), session: session) }
            }
        }
    }
}
