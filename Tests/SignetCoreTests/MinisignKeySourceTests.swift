import Foundation
import SignetCore
import SignetTestSupport
import Testing

@Suite("minisign public keys as key sources")
struct MinisignKeySourceTests {
    @Test("KeySourceResolver reads a minisign public key file as its Ed25519 key")
    func resolverReadsMinisignPublicKey() async throws {
        let fixture = try MinisignFixture.load()
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let path = try scratch.write("minisign.pub", Array(text: fixture.publicKey))
        let resolved = try await KeySourceResolver().publicKey(path)
        let minisignKey = try MinisignPublicKey(fileContents: Array(text: fixture.publicKey), source: "pub")
        #expect(resolved == minisignKey.publicKey)
        #expect(resolved.kind == .ed25519)
        // minisign's legacy signature is plain Ed25519 over the file: the ordinary verifier takes it.
        let legacy = try MinisignSignature(fileContents: Array(text: fixture.legacySignature), source: "legacy")
        let verifier = try PublicKeyVerifier(key: resolved, algorithm: .ed25519)
        try verifier.verify(signature: legacy.signature, message: Array(text: fixture.message))
        // A secret key is still not taken for a key file.
        let secret = try scratch.write("minisign.key", Array(text: fixture.secretKey))
        await #expect(throws: SignetCoreError.self) { _ = try await KeySourceResolver().publicKey(secret) }
    }
}
