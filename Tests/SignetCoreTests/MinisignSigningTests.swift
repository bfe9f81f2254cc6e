import Foundation
import SignetCore
import SignetTestSupport
import Testing

@Suite("minisign signing and verification")
struct MinisignSigningTests {
    /// A scratch folder with `file` (3 MiB and a bit) in it.
    static func scratchWithFile() throws -> (TemporaryFolder, String) {
        let scratch = try TemporaryFolder()
        let bytes = (0..<(3 << 20) + 5).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 9) }
        return (scratch, try scratch.write("file.bin", bytes))
    }

    @Test("prehashed round trip with minisign's default comments")
    func prehashedRoundTrip() async throws {
        let (scratch, path) = try Self.scratchWithFile()
        defer { scratch.remove() }
        let key = MinisignSecretKey.generate()
        let counter = ByteCounter()
        let before = Int(Date().timeIntervalSince1970)
        let signature = try await MinisignFile.sign(path: path, signer: key.signer, keyID: key.keyID, progress: { counter.add($0) })
        #expect(counter.total == (3 << 20) + 5)
        #expect(signature.algorithm == .prehashed)
        #expect(signature.keyID == key.keyID)
        let comment = signature.trustedCommentText
        let parts = comment.split(separator: "\t").map(String.init)
        #expect(parts.count == 3 && parts[1] == "file:file.bin" && parts[2] == "hashed", "\(comment)")
        let stamp = try #require(Int(parts[0].dropFirst("timestamp:".count)))
        #expect(stamp >= before && stamp <= before + 60)
        #expect(String(decoding: signature.untrustedComment, as: UTF8.self) == "signature from minisign secret key")
        // Through the file format and back.
        let parsed = try MinisignSignature(fileContents: signature.fileContents, source: "sig")
        #expect(parsed == signature)
        let verified = try MinisignFile.verify(parsed, path: path, publicKey: key.publicKey)
        #expect(verified.trustedCommentText == comment)
        // The file signature is Ed25519 over the BLAKE2b-512 digest: check with the plain Ed25519 verifier.
        let verifier = try PublicKeyVerifier(key: key.publicKey.publicKey, algorithm: .ed25519)
        try verifier.verify(signature: signature.signature, message: try BLAKE2b.hash(path: path))
    }

    @Test("legacy round trip with the opt-in, custom comments; refused without it")
    func legacyRoundTrip() async throws {
        let (scratch, path) = try Self.scratchWithFile()
        defer { scratch.remove() }
        let key = MinisignSecretKey.generate()
        let options = MinisignFile.Options(trustedComment: "v1.0 \u{00e9}t\u{00e9}", untrustedComment: "made in a test", legacy: true)
        let signature = try await MinisignFile.sign(path: path, signer: key.signer, keyID: key.keyID, options: options)
        #expect(signature.algorithm == .legacy)
        #expect(signature.trustedCommentText == "v1.0 \u{00e9}t\u{00e9}")
        try MinisignFile.verify(signature, path: path, publicKey: key.publicKey, allowLegacy: true)
        let verifier = try PublicKeyVerifier(key: key.publicKey.publicKey, algorithm: .ed25519)
        try verifier.verify(signature: signature.signature, message: Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        let refused = try #require(throws: SignetCoreError.self) { try MinisignFile.verify(signature, path: path, publicKey: key.publicKey) }
        #expect(refused == .legacySignatureNotAllowed(source: path))
    }

    @Test("minisign's own signatures verify, and their trusted comment is returned")
    func minisignSignaturesVerify() throws {
        let fixture = try MinisignFixture.load()
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let path = try scratch.write("msg.txt", Array(text: fixture.message))
        let publicKey = try MinisignPublicKey(fileContents: Array(text: fixture.publicKey), source: "u.pub")
        for text in [fixture.prehashedSignature, fixture.legacySignature] {
            let signature = try MinisignSignature(fileContents: Array(text: text), source: "fixture")
            try MinisignFile.verify(signature, path: path, publicKey: publicKey, allowLegacy: true)
        }
        let hashed = try MinisignSignature(fileContents: Array(text: fixture.prehashedSignature), source: "fixture")
        #expect(try MinisignFile.verify(hashed, path: path, publicKey: publicKey).trustedCommentText == fixture.trustedComment)
    }

    @Test("a tampered file, trusted comment or signature, and a wrong key are refused with exit-1 errors")
    func refusals() async throws {
        let fixture = try MinisignFixture.load()
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let path = try scratch.write("msg.txt", Array(text: fixture.message))
        let publicKey = try MinisignPublicKey(fileContents: Array(text: fixture.publicKey), source: "u.pub")
        let signature = try MinisignSignature(fileContents: Array(text: fixture.prehashedSignature), source: "fixture")

        let tamperedPath = try scratch.write("tampered.txt", Array(text: fixture.message + "!"))
        expectMinisignError(.checkFailed, "Signature verification failed") {
            try MinisignFile.verify(signature, path: tamperedPath, publicKey: publicKey)
        }
        var comment = signature
        comment.trustedComment = Array(text: "release 9.9.9, from the fixture")
        expectMinisignError(.checkFailed, "Comment signature verification failed") {
            try MinisignFile.verify(comment, path: path, publicKey: publicKey)
        }
        var flipped = signature
        flipped.signature[10] ^= 0x40
        expectMinisignError(.checkFailed, "Signature verification failed") { try MinisignFile.verify(flipped, path: path, publicKey: publicKey) }
        var global = signature
        global.globalSignature[0] ^= 1
        expectMinisignError(.checkFailed, "Comment signature") { try MinisignFile.verify(global, path: path, publicKey: publicKey) }
        // Another key: its id differs.
        let other = MinisignSecretKey.generate()
        expectMinisignError(.checkFailed, "key id is \(signature.keyID)", "\(other.keyID)") {
            try MinisignFile.verify(signature, path: path, publicKey: other.publicKey)
        }
        // Another key posing under the right key id: the signature itself fails.
        let impostor = try MinisignPublicKey(keyID: publicKey.keyID, rawKey: other.publicKey.rawKey)
        expectMinisignError(.checkFailed, "Signature verification failed") { try MinisignFile.verify(signature, path: path, publicKey: impostor) }
        // Legacy signature checked as prehashed and vice versa: the algorithm byte is signed-over data's choice.
        var relabelled = signature
        relabelled.algorithm = .legacy
        expectMinisignError(.checkFailed, "legacy (non-prehashed \"Ed\") signature refused") { try MinisignFile.verify(relabelled, path: path, publicKey: publicKey) }
        expectMinisignError(.checkFailed, "Signature verification failed") {
            try MinisignFile.verify(relabelled, path: path, publicKey: publicKey, allowLegacy: true)
        }
    }

    @Test("comments with line breaks or beyond minisign's limits are refused before signing")
    func commentChecks() async throws {
        let (scratch, path) = try Self.scratchWithFile()
        defer { scratch.remove() }
        let key = MinisignSecretKey.generate()
        for options in [
            MinisignFile.Options(trustedComment: "two\nlines"), MinisignFile.Options(untrustedComment: "a\rb"),
            MinisignFile.Options(trustedComment: String(repeating: "t", count: 8174)),
            MinisignFile.Options(untrustedComment: String(repeating: "u", count: 1004)),
        ] {
            await #expect(throws: SignetCoreError.self) {
                _ = try await MinisignFile.sign(path: path, signer: key.signer, keyID: key.keyID, options: options)
            }
        }
        let longest = MinisignFile.Options(trustedComment: String(repeating: "t", count: 8173), untrustedComment: String(repeating: "u", count: 1003))
        let signature = try await MinisignFile.sign(path: path, signer: key.signer, keyID: key.keyID, options: longest)
        try MinisignFile.verify(try MinisignSignature(fileContents: signature.fileContents, source: "s"), path: path, publicKey: key.publicKey)
    }

    @Test("only Ed25519 signers are accepted")
    func signerAlgorithm() async throws {
        let (scratch, path) = try Self.scratchWithFile()
        defer { scratch.remove() }
        let signer = try SoftwareSigner(key: PrivateKey.generate(.p256))
        await #expect(throws: SignetCoreError.self) {
            _ = try await MinisignFile.sign(path: path, signer: signer, keyID: .random())
        }
    }

    @Test("legacy signing and verification refuse files over 128 MiB, naming the limit and the way out")
    func legacyLimit() async throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let path = try scratch.write("huge.bin", [UInt8]())
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: UInt64(MinisignFile.maximumLegacyMessageSize + 1))
        try handle.close()
        let key = MinisignSecretKey.generate()
        do {
            _ = try await MinisignFile.sign(path: path, signer: key.signer, keyID: key.keyID, options: .init(legacy: true))
            Issue.record("a legacy signature of a 128 MiB + 1 file was made")
        } catch let error as SignetCoreError {
            guard case .tooLarge(let source, let limit) = error else { Issue.record("\(error)"); return }
            #expect(limit == 128 << 20)
            #expect(source.contains("huge.bin") && source.contains("prehashed"))
        }
    }

    @Test("an encrypted secret key round-trips; a wrong passphrase is a failed check")
    func encryptedRoundTrip() throws {
        let key = MinisignSecretKey.generate()
        let passphrase = SecretBytes(Array("s3cret passphrase".utf8))
        let text = try key.fileContents(passphrase: passphrase, parameters: cheapKDF)
        #expect(String(decoding: text, as: UTF8.self).hasPrefix("untrusted comment: minisign encrypted secret key\n"))
        let file = try MinisignSecretKeyFile(fileContents: text, source: "k.key")
        #expect(file.isEncrypted)
        #expect(file.parameters == cheapKDF)
        #expect(try file.decrypt(passphrase: passphrase).publicKey == key.publicKey)
        expectMinisignError(.checkFailed, "k.key", "wrong passphrase") { _ = try file.decrypt(passphrase: SecretBytes(Array("nope".utf8))) }
        // Two encryptions use two salts.
        #expect(try key.fileContents(passphrase: passphrase, parameters: cheapKDF) != text)
        // Unencrypted keys carry no salt or limits.
        let plain = try MinisignSecretKeyFile(fileContents: key.fileContents(passphrase: nil), source: "p.key")
        #expect(!plain.isEncrypted && plain.parameters == MinisignKDFParameters(opsLimit: 0, memLimit: 0))
    }

    @Test("a key minisign encrypted (scrypt N=2^20, 1 GiB) decrypts and signs")
    func minisignEncryptedKey() async throws {
        let fixture = try MinisignFixture.load()
        let file = try MinisignSecretKeyFile(fileContents: Array(text: fixture.encryptedSecretKey), source: "e.key")
        #expect(file.isEncrypted && file.parameters == .sensitive)
        let key = try file.decrypt(passphrase: SecretBytes(Array(fixture.passphrase.utf8)))
        let publicKey = try MinisignPublicKey(fileContents: Array(text: fixture.encryptedPublicKey), source: "e.pub")
        #expect(key.publicKey == publicKey)
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let path = try scratch.write("msg.txt", Array(text: fixture.message))
        let theirs = try MinisignSignature(fileContents: Array(text: fixture.encryptedKeySignature), source: "fixture")
        try MinisignFile.verify(theirs, path: path, publicKey: publicKey)
        let ours = try await MinisignFile.sign(path: path, signer: key.signer, keyID: key.keyID)
        try MinisignFile.verify(ours, path: path, publicKey: publicKey)
    }

    @Test("a prehashed ED signature relabelled as legacy Ed verifies for the 64-byte digest file only with the opt-in; refused by default")
    func relabelledPrehashedSignature() async throws {
        let (scratch, path) = try Self.scratchWithFile()
        defer { scratch.remove() }
        let key = MinisignSecretKey.generate()
        let genuine = try await MinisignFile.sign(path: path, signer: key.signer, keyID: key.keyID)
        // The attack: the file signature of ED is Ed25519 over BLAKE2b-512(file); call it Ed and
        // present a file holding exactly those 64 bytes. The global signature still verifies,
        // because it covers the signature bytes and the trusted comment, not the label.
        var relabelled = genuine
        relabelled.algorithm = .legacy
        let digestFile = try scratch.write("digest.bin", try BLAKE2b.hash(path: path))
        let parsed = try MinisignSignature(fileContents: relabelled.fileContents, source: "relabelled.minisig")
        let refused = try #require(throws: SignetCoreError.self) { try MinisignFile.verify(parsed, path: digestFile, publicKey: key.publicKey) }
        #expect(refused == .legacySignatureNotAllowed(source: digestFile))
        #expect(refused.category == .checkFailed)
        // What the opt-in accepts is exactly the weakness it names: the proof that the check bites.
        try MinisignFile.verify(parsed, path: digestFile, publicKey: key.publicKey, allowLegacy: true)
    }
}
