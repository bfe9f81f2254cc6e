import Foundation
import SignetCore
import SignetTestSupport
import Testing
@testable import SignetBundle

@Suite struct BundleVerifyTests {
    private func root(_ keys: PrivateKey..., threshold: Int = 1) throws -> TrustRoot {
        try TrustRoot(threshold: threshold, keys: keys.map { try TrustedKey(publicKey: $0.publicKey) })
    }

    @Test("a bundle verifies, and its version is recorded only then")
    func verifyAndRecord() async throws {
        let scratch = try TemporaryFolder()
        let bundle = try await BundleTest.makeBundle(in: scratch, version: 4)
        let state = BundleState(folder: scratch.file("state"))
        let verified = try await BundleVerifier(trust: try root(BundleTest.ed25519)).verify(path: bundle, state: state)
        #expect(verified.manifest.files.map(\.path) == ["data/blob.bin", "empty", "readme.txt"])
        #expect(verified.signedBy == [BundleTest.ed25519.publicKey.fingerprint])
        #expect(try state.acceptedVersion(of: "app") == 4)

        // The same release again is accepted (re-verifying is not a rollback)...
        _ = try await BundleVerifier(trust: try root(BundleTest.ed25519)).verify(path: bundle, state: state)
        // ...an older one is not.
        let older = try await BundleTest.makeBundle(in: scratch, version: 3, output: "older.bundle")
        let again = try await BundleTest.thrownAsync { try await BundleVerifier(trust: try root(BundleTest.ed25519)).verify(path: older, state: state) }
        #expect(again == .rollback(name: "app", version: 3, accepted: 4, floor: "already accepted (state folder \(state.folder))"))
        #expect(again.category == .checkFailed)
        #expect(try state.acceptedVersion(of: "app") == 4)
        // Without a state there is no rollback check.
        _ = try await BundleVerifier(trust: try root(BundleTest.ed25519)).verify(path: bundle)
    }

    @Test("k of n: too few valid signatures, unknown keys (the pinned algorithm: pinnedAlgorithm)")
    func threshold() async throws {
        let scratch = try TemporaryFolder()
        let both = try await BundleTest.makeBundle(in: scratch, signers: [BundleTest.ed25519, BundleTest.p256], output: "both.bundle")
        let one = try await BundleTest.makeBundle(in: scratch, signers: [BundleTest.ed25519], output: "one.bundle")
        let stranger = try await BundleTest.makeBundle(in: scratch, signers: [BundleTest.other], output: "stranger.bundle")
        let twoOfTwo = try root(BundleTest.ed25519, BundleTest.p256, threshold: 2)
        _ = try await BundleVerifier(trust: twoOfTwo).verify(path: both)
        let short = try await BundleTest.thrownAsync { try await BundleVerifier(trust: twoOfTwo).verify(path: one) }
        #expect(short == .verificationFailed(source: one, detail: "2 valid signature(s) from trusted keys needed, found 1"))
        let unknown = try await BundleTest.thrownAsync { try await BundleVerifier(trust: twoOfTwo).verify(path: stranger) }
        #expect(
            unknown == .verificationFailed(
                source: stranger,
                detail: "2 valid signature(s) from trusted keys needed, found 0 (\(BundleTest.other.publicKey.fingerprint) is not a trusted key)"))

        let pinnedOther = try TrustRoot(threshold: 1, keys: [try TrustedKey(publicKey: BundleTest.p256.publicKey)])
        _ = try await BundleVerifier(trust: pinnedOther).verify(path: both)
    }

    @Test("a signature whose algorithm is not the one its key is pinned to is refused, though it is valid")
    func pinnedAlgorithm() async throws {
        let scratch = try TemporaryFolder()
        let rsa = try PrivateKey.generate(.rsa2048)
        try scratch.write("src/readme.txt", Array("hello\n".utf8))
        // A valid RSA PKCS#1 v1.5 signature (the signatures entry says alg rsa-v1_5-sha256).
        let bundle = scratch.file("rsa.bundle")
        _ = try await BundleCreator(name: "app", version: 1).create(
            inputs: [scratch.file("src")], signers: [try SoftwareSigner(key: rsa, algorithm: .rsaPKCS1v15SHA256)], output: bundle)

        // Control: pinned to the algorithm it was signed with, it verifies.
        let pinnedV15 = try TrustRoot(threshold: 1, keys: [try TrustedKey(publicKey: rsa.publicKey, algorithm: .rsaPKCS1v15SHA256)])
        let verified = try await BundleVerifier(trust: pinnedV15).verify(path: bundle)
        #expect(verified.signedBy == [rsa.publicKey.fingerprint])

        // The same key pinned to RSA-PSS: the signature's own algorithm is not taken, the pin
        // refuses it before any verification (not "does not verify").
        let pinnedPSS = try TrustRoot(threshold: 1, keys: [try TrustedKey(publicKey: rsa.publicKey, algorithm: .rsaPSSSHA256)])
        let mismatch = try await BundleTest.thrownAsync { try await BundleVerifier(trust: pinnedPSS).verify(path: bundle) }
        #expect(
            mismatch == .verificationFailed(
                source: bundle,
                detail: "1 valid signature(s) from trusted keys needed, found 0 (\(rsa.publicKey.fingerprint) is trusted for rsa-pss-sha256, not rsa-v1_5-sha256)"))
        #expect(mismatch.category == .checkFailed)

        // And the other way round: a PSS signature under a key pinned to PKCS#1 v1.5.
        let pssBundle = scratch.file("rsa-pss.bundle")
        _ = try await BundleCreator(name: "app", version: 1).create(
            inputs: [scratch.file("src")], signers: [try SoftwareSigner(key: rsa, algorithm: .rsaPSSSHA256)], output: pssBundle)
        _ = try await BundleVerifier(trust: pinnedPSS).verify(path: pssBundle)
        let reverse = try await BundleTest.thrownAsync { try await BundleVerifier(trust: pinnedV15).verify(path: pssBundle) }
        #expect(
            reverse == .verificationFailed(
                source: pssBundle,
                detail: "1 valid signature(s) from trusted keys needed, found 0 (\(rsa.publicKey.fingerprint) is trusted for rsa-v1_5-sha256, not rsa-pss-sha256)"))
    }

    @Test("expiry is judged at `now`; an audit may choose another moment")
    func expiry() async throws {
        let scratch = try TemporaryFolder()
        let expires = Date(timeIntervalSince1970: 2_000_000_000)
        let bundle = try await BundleTest.makeBundle(in: scratch, expires: expires)
        let trust = try root(BundleTest.ed25519)
        _ = try await BundleVerifier(trust: trust, now: expires).verify(path: bundle)
        let error = try await BundleTest.thrownAsync { try await BundleVerifier(trust: trust, now: expires + 1).verify(path: bundle) }
        #expect(error.description.contains("expired at 2033-05-18T03:33:20Z"))
    }

    @Test("a manifest from another bundle does not verify under this one's signatures")
    func swappedManifest() async throws {
        let scratch = try TemporaryFolder()
        let first = try await BundleTest.makeBundle(in: scratch, version: 1, output: "1.bundle")
        let second = try await BundleTest.makeBundle(in: scratch, version: 2, output: "2.bundle")
        // Same layout, so the manifests have the same length: splice the second's into the first.
        let one = try scratch.read("1.bundle"), two = try scratch.read("2.bundle")
        let firstZip = try ZipReader(path: first, limits: BundleLimits()), secondZip = try ZipReader(path: second, limits: BundleLimits())
        let a = try #require(firstZip.entries.first { $0.name == BundleLayout.manifestEntry })
        let b = try #require(secondZip.entries.first { $0.name == BundleLayout.manifestEntry })
        try #require(a.size == b.size)
        var spliced = one
        spliced.replaceSubrange(Int(a.dataOffset)..<Int(a.dataOffset + a.size), with: two[Int(b.dataOffset)..<Int(b.dataOffset + b.size)])
        let path = try scratch.write("spliced.bundle", spliced)
        let error = try await BundleTest.thrownAsync { try await BundleVerifier(trust: try root(BundleTest.ed25519)).verify(path: path) }
        #expect(error.description.contains("does not verify"))
    }

    @Test("a tampered file byte is caught by its digest, and the state does not advance")
    func tamperedContent() async throws {
        let scratch = try TemporaryFolder()
        let bundle = try await BundleTest.makeBundle(in: scratch, version: 9)
        let entry = try #require(try ZipReader(path: bundle, limits: BundleLimits()).entries.first { $0.name == "data/blob.bin" })
        var bytes = try scratch.read("out.bundle")
        bytes[Int(entry.dataOffset) + 1000] ^= 1
        try scratch.write("out.bundle", bytes)
        let state = BundleState(folder: scratch.file("state"))
        let error = try await BundleTest.thrownAsync { try await BundleVerifier(trust: try root(BundleTest.ed25519)).verify(path: bundle, state: state) }
        #expect(error.description.contains("\"data/blob.bin\" does not match its SHA-256"))
        #expect(try state.acceptedVersion(of: "app") == nil)
    }

    @Test("extraction: files, attributes and the signed manifest; a refused bundle leaves DEST alone; check at rest")
    func extractAndCheck() async throws {
        let scratch = try TemporaryFolder()
        let trust = try root(BundleTest.ed25519)
        let verifier = BundleVerifier(trust: trust)
        let state = BundleState(folder: scratch.file("state"))
        let first = try await BundleTest.makeBundle(in: scratch, version: 1, output: "1.bundle")
        _ = try await BundleExtractor(verifier: verifier).extract(path: first, to: scratch.file("dest"), state: state)
        #expect(try scratch.read("dest/readme.txt") == Array("hello\n".utf8))
        #expect(FileManager.default.fileExists(atPath: scratch.file("dest/.signet/manifest.json")))
        if let digest = ExtendedAttributes.get(ExtendedAttributes.fileDigest, of: scratch.file("dest/readme.txt")) {
            #expect(digest == DigestAlgorithm.sha256.hash(Array("hello\n".utf8)).hex)
        }
        _ = try await BundleChecker(verifier: BundleVerifier(trust: trust)).check(folder: scratch.file("dest"))

        // Version 1 again, other content: refused, and nothing beside or in DEST changes.
        try scratch.write("src/readme.txt", Array("also version one\n".utf8))
        let reused = try await BundleCreator(name: "app", version: 1).create(
            inputs: [scratch.file("src")], signers: [BundleTest.signer(BundleTest.ed25519)], output: scratch.file("1b.bundle"))
        #expect(reused.version == 1)
        let before = try FileManager.default.contentsOfDirectory(atPath: scratch.path).sorted()
        let rollback = try await BundleTest.thrownAsync {
            try await BundleExtractor(verifier: verifier).extract(path: scratch.file("1b.bundle"), to: scratch.file("dest"), state: state)
        }
        #expect(rollback == .versionReused(name: "app", version: 1, floor: "installed in \(scratch.file("dest"))"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).sorted() == before)
        #expect(try scratch.read("dest/readme.txt") == Array("hello\n".utf8))

        // Version 2 with changed content replaces the tree.
        try scratch.write("src/readme.txt", Array("version two\n".utf8))
        _ = try await BundleCreator(name: "app", version: 2).create(
            inputs: [scratch.file("src")], signers: [BundleTest.signer(BundleTest.ed25519)], output: scratch.file("2.bundle"))
        _ = try await BundleExtractor(verifier: verifier).extract(path: scratch.file("2.bundle"), to: scratch.file("dest"), state: state)
        #expect(try scratch.read("dest/readme.txt") == Array("version two\n".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).sorted() == (before + ["2.bundle"]).sorted(), "no temporary or old trees left")

        // Changed at rest.
        try scratch.write("dest/readme.txt", Array("tampered\n".utf8))
        try scratch.write("dest/extra.txt", [1] as [UInt8])
        try FileManager.default.removeItem(atPath: scratch.file("dest/empty"))
        let changed = try await BundleTest.thrownAsync { try await BundleChecker(verifier: BundleVerifier(trust: trust)).check(folder: scratch.file("dest")) }
        guard case .changedAtRest(_, let problems) = changed else { Issue.record("\(changed)"); return }
        #expect(problems == ["added: extra.txt", "changed: readme.txt (9 bytes, was 12)", "missing: empty"])
    }

    @Test("extraction refuses a destination that is not an earlier extraction")
    func foreignDestination() async throws {
        let scratch = try TemporaryFolder()
        let bundle = try await BundleTest.makeBundle(in: scratch)
        try scratch.write("mine/notes.txt", [1, 2, 3] as [UInt8])
        let error = try await BundleTest.thrownAsync {
            try await BundleExtractor(verifier: BundleVerifier(trust: try root(BundleTest.ed25519)))
                .extract(path: bundle, to: scratch.file("mine"), state: BundleState(folder: scratch.file("state")))
        }
        #expect(error.category == .usage)
        #expect(try scratch.read("mine/notes.txt") == [1, 2, 3])
    }

    @Test("trust rotation: accepted when signed by a threshold of the current keys and exactly one version on")
    func rotation() async throws {
        let current = try root(BundleTest.ed25519, BundleTest.p256, threshold: 2)
        let next = try await current.rotated(
            to: BundleTest.trusted(BundleTest.other), threshold: 1, signedBy: [BundleTest.signer(BundleTest.ed25519), BundleTest.signer(BundleTest.p256)])
        #expect(next.version == 2)
        try current.accepts(try TrustRoot(bytes: next.fileBytes, source: "next"), source: "next")

        // One signature where two are needed.
        let tooFew = try TrustRoot(version: 2, threshold: 1, keys: next.keys, signatures: [next.signatures[0]])
        #expect(try BundleTest.thrown { try current.accepts(tooFew, source: "n") }.description.contains("needed, found 1"))
        // Signed by a key outside the current root.
        let outsider = try await root(BundleTest.other).rotated(to: next.keys, threshold: 1, signedBy: [BundleTest.signer(BundleTest.other)])
        #expect(try BundleTest.thrown { try current.accepts(outsider, source: "n") }.description.contains("not a trusted key"))
        // A skipped version, and the same root again.
        let skipped = try await next.rotated(to: next.keys, threshold: 1, signedBy: [BundleTest.signer(BundleTest.other)])
        #expect(try BundleTest.thrown { try current.accepts(skipped, source: "n") }.description.contains("only version 2"))
        #expect(throws: BundleError.self) { try next.accepts(next, source: "n") }
        // Signatures over a changed root do not carry over.
        let altered = try TrustRoot(version: 2, threshold: 1, keys: BundleTest.trusted(BundleTest.p256), signatures: next.signatures)
        #expect(try BundleTest.thrown { try current.accepts(altered, source: "n") }.description.contains("does not verify"))
        // rotated() itself refuses keys outside the root.
        await #expect(throws: BundleError.self) {
            try await current.rotated(to: next.keys, threshold: 1, signedBy: [BundleTest.signer(BundleTest.other)])
        }
    }
}
