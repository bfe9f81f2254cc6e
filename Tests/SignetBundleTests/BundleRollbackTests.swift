import Foundation
import SignetCore
import SignetTestSupport
import Testing
@testable import SignetBundle

/// The TUF-style rules that bind what is installed to what was meant to be installed: the
/// rollback rule (older refused; the same version only byte-identical), the installed tree as
/// a floor whatever the state says, the expected name, and `check` holding a tree at rest to
/// the same rules. Each refusal asserts its exact error and that nothing changed.
@Suite("bundles: rollback, name binding, DEST as a floor, check at rest")
struct BundleRollbackTests {
    let scratch: TemporaryFolder
    let trust: TrustRoot

    init() throws {
        scratch = try TemporaryFolder()
        trust = try TrustRoot(threshold: 1, keys: [try TrustedKey(publicKey: BundleTest.ed25519.publicKey)])
    }

    /// A bundle of one file whose content is `text`, signed by the trusted key.
    func bundle(_ output: String, name: String = "app", version: Int64, text: String, expires: Date? = nil) async throws -> String {
        let source = "src-\(output)"
        try scratch.write("\(source)/readme.txt", Array(text.utf8))
        _ = try await BundleCreator(name: name, version: version, expires: expires).create(
            inputs: [scratch.file(source)], signers: [BundleTest.signer(BundleTest.ed25519)], output: scratch.file(output))
        return scratch.file(output)
    }

    func extractor(name: String? = nil, now: Date = Date()) -> BundleExtractor {
        BundleExtractor(verifier: BundleVerifier(trust: trust, now: now, expectedName: name))
    }

    func state(_ folder: String = "state") -> BundleState { BundleState(folder: scratch.file(folder)) }

    /// Every file below the scratch folder with its bytes (folders as empty arrays).
    func snapshot() throws -> [String: [UInt8]] {
        var result: [String: [UInt8]] = [:]
        let enumerator = FileManager.default.enumerator(atPath: scratch.path)
        while let relative = enumerator?.nextObject() as? String {
            let path = scratch.file(relative)
            var isFolder: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: path, isDirectory: &isFolder)
            result[relative] = isFolder.boolValue ? [] : try scratch.read(relative)
        }
        return result
    }

    @Test("verify then extract with the same state: the same release is accepted again, and re-extracting repairs a damaged tree")
    func sameReleaseAgain() async throws {
        let v1 = try await bundle("v1.bundle", version: 1, text: "one\n")
        _ = try await BundleVerifier(trust: trust).verify(path: v1, state: state())
        _ = try await extractor().extract(path: v1, to: scratch.file("dest"), state: state())
        try scratch.write("dest/readme.txt", Array("damaged\n".utf8))
        _ = try await extractor().extract(path: v1, to: scratch.file("dest"), state: state())
        #expect(try scratch.read("dest/readme.txt") == Array("one\n".utf8))
        _ = try await BundleChecker(verifier: BundleVerifier(trust: trust)).check(folder: scratch.file("dest"), state: state())
    }

    @Test("the same version with other content is refused by verify and extract (state), and by extract over DEST with a fresh state")
    func sameVersionOtherContent() async throws {
        let v1 = try await bundle("v1.bundle", version: 1, text: "one\n")
        let v1b = try await bundle("v1b.bundle", version: 1, text: "another one\n")
        _ = try await extractor().extract(path: v1, to: scratch.file("dest"), state: state())
        let before = try snapshot()
        let floorState = "already accepted (state folder \(scratch.file("state")))"
        let verified = try await BundleTest.thrownAsync { try await BundleVerifier(trust: trust).verify(path: v1b, state: state()) }
        #expect(verified == .versionReused(name: "app", version: 1, floor: floorState))
        let extracted = try await BundleTest.thrownAsync { try await extractor().extract(path: v1b, to: scratch.file("other"), state: state()) }
        #expect(extracted == .versionReused(name: "app", version: 1, floor: floorState))
        let overDest = try await BundleTest.thrownAsync { try await extractor().extract(path: v1b, to: scratch.file("dest"), state: state("fresh")) }
        #expect(overDest == .versionReused(name: "app", version: 1, floor: "installed in \(scratch.file("dest"))"))
        #expect(overDest.category == .checkFailed)
        #expect(try snapshot().filter { !$0.key.hasPrefix("fresh") } == before, "nothing written but the fresh state's lock")
    }

    @Test("DEST is a floor: a downgrade with a fresh or another state is refused, and so is a bundle of another name")
    func destinationFloor() async throws {
        let v1 = try await bundle("v1.bundle", version: 1, text: "one\n")
        let v2 = try await bundle("v2.bundle", version: 2, text: "two\n")
        let beta = try await bundle("beta.bundle", name: "beta", version: 9, text: "beta\n")
        _ = try await extractor().extract(path: v2, to: scratch.file("dest"), state: state())
        let before = try snapshot()
        let downgrade = try await BundleTest.thrownAsync { try await extractor().extract(path: v1, to: scratch.file("dest"), state: state("fresh")) }
        #expect(downgrade == .rollback(name: "app", version: 1, accepted: 2, floor: "installed in \(scratch.file("dest"))"))
        let renamed = try await BundleTest.thrownAsync { try await extractor().extract(path: beta, to: scratch.file("dest"), state: state("fresh")) }
        #expect(renamed == .wrongName(expected: "app", found: "beta", reason: "installed in \(scratch.file("dest"))"))
        #expect(renamed.description == "wrong bundle: it is \"beta\", but \"app\" is installed in \(scratch.file("dest"))")
        #expect(try snapshot().filter { !$0.key.hasPrefix("fresh") } == before)
        #expect(try state("fresh").acceptedVersion(of: "app") == nil && state("fresh").acceptedVersion(of: "beta") == nil)
    }

    @Test("an expected name refuses any other product in verify, extract and check")
    func expectedName() async throws {
        let beta = try await bundle("beta.bundle", name: "beta", version: 1, text: "beta\n")
        let expected = BundleError.wrongName(expected: "app", found: "beta", reason: "the one expected")
        #expect(try await BundleTest.thrownAsync { try await BundleVerifier(trust: trust, expectedName: "app").verify(path: beta) } == expected)
        #expect(try await BundleTest.thrownAsync { try await extractor(name: "app").extract(path: beta, to: scratch.file("d"), state: state()) } == expected)
        #expect(!FileManager.default.fileExists(atPath: scratch.file("d")))
        _ = try await extractor(name: "beta").extract(path: beta, to: scratch.file("d"), state: state())
        #expect(try await BundleTest.thrownAsync { try await BundleChecker(verifier: BundleVerifier(trust: trust, expectedName: "app")).check(folder: scratch.file("d")) } == expected)
        _ = try await BundleChecker(verifier: BundleVerifier(trust: trust, expectedName: "beta")).check(folder: scratch.file("d"))
    }

    @Test("check refuses an expired tree at rest (now or a given moment) and a tree rolled back against the state")
    func checkAtRest() async throws {
        let expiry = Date(timeIntervalSince1970: 1_900_000_000)
        let v1 = try await bundle("v1.bundle", version: 1, text: "one\n", expires: expiry)
        let v2 = try await bundle("v2.bundle", version: 2, text: "two\n")
        _ = try await extractor().extract(path: v1, to: scratch.file("old"), state: state("s1"))
        _ = try await BundleChecker(verifier: BundleVerifier(trust: trust, now: expiry)).check(folder: scratch.file("old"))
        let later = expiry.addingTimeInterval(1)
        let expired = try await BundleTest.thrownAsync { try await BundleChecker(verifier: BundleVerifier(trust: trust, now: later)).check(folder: scratch.file("old")) }
        #expect(expired == .expired(name: "app", expires: "2030-03-17T17:46:40Z", now: "2030-03-17T17:46:41Z"))
        // The state has moved on to version 2: the tree still holding version 1 is a rollback.
        _ = try await BundleVerifier(trust: trust).verify(path: v2, state: state("s1"))
        let rolledBack = try await BundleTest.thrownAsync { try await BundleChecker(verifier: BundleVerifier(trust: trust, now: expiry)).check(folder: scratch.file("old"), state: state("s1")) }
        #expect(rolledBack == .rollback(name: "app", version: 1, accepted: 2, floor: "already accepted (state folder \(scratch.file("s1")))"))
        #expect(try state("s1").acceptedVersion(of: "app") == 2, "check only reads the state")
    }

    /// Replaces DEST's kept manifest by `manifest`, correctly signed by the trusted key.
    func plant(manifest: String, in folder: String) async throws {
        let bytes = Array(manifest.utf8)
        let signatures = try await BundleSignature.sign(bytes, with: [BundleTest.signer(BundleTest.ed25519)])
        try scratch.write("\(folder)/.signet/manifest.json", bytes)
        try scratch.write("\(folder)/.signet/signatures.json", SignatureList.bytes(signatures))
    }

    static func manifest(_ files: [(String, Int, String)]) -> String {
        let listed = files.map { #"{"path":"\#($0.0)","sha256":"\#($0.2)","size":\#($0.1)}"# }.joined(separator: ",")
        return #"{"created":"2026-01-01T00:00:00Z","expires":null,"files":[\#(listed)],"format":"signet-bundle-manifest-v1","name":"app","version":1}"#
    }

    @Test("check never traps and never reads outside DEST: a signed manifest listing a path twice, an unsafe path, a planted link")
    func checkHostileManifests() async throws {
        let v1 = try await bundle("v1.bundle", version: 1, text: "one\n")
        _ = try await extractor().extract(path: v1, to: scratch.file("dest"), state: state())
        let digest = DigestAlgorithm.sha256.hash(Array("one\n".utf8)).hex
        let manifestPath = scratch.file("dest/.signet/manifest.json")

        try await plant(manifest: Self.manifest([("readme.txt", 4, digest), ("readme.txt", 4, digest)]), in: "dest")
        let twice = try await BundleTest.thrownAsync { try await BundleChecker(verifier: BundleVerifier(trust: trust)).check(folder: scratch.file("dest")) }
        #expect(twice == .malformed(source: manifestPath, detail: "the manifest lists \"readme.txt\" twice"))
        #expect(twice.category == .malformedInput)

        try scratch.write("outside.txt", Array("one\n".utf8))
        try await plant(manifest: Self.manifest([("../outside.txt", 4, digest)]), in: "dest")
        let escape = try await BundleTest.thrownAsync { try await BundleChecker(verifier: BundleVerifier(trust: trust)).check(folder: scratch.file("dest")) }
        #expect(escape == .unsafeEntry(source: manifestPath, entry: "../outside.txt", detail: "\"..\" path component (it would write outside the destination)"))

        // A folder of DEST replaced by a link to outside: the file behind it is never read.
        try FileManager.default.createDirectory(atPath: scratch.file("elsewhere"), withIntermediateDirectories: true)
        try scratch.write("elsewhere/c.txt", Array("one\n".utf8))
        try FileManager.default.createSymbolicLink(atPath: scratch.file("dest/sub"), withDestinationPath: scratch.file("elsewhere"))
        try await plant(manifest: Self.manifest([("readme.txt", 4, digest), ("sub/c.txt", 4, digest)]), in: "dest")
        let linked = try await BundleTest.thrownAsync { try await BundleChecker(verifier: BundleVerifier(trust: trust)).check(folder: scratch.file("dest")) }
        guard case .changedAtRest(_, let problems) = linked else { Issue.record("\(linked)"); return }
        #expect(problems == ["added: sub", "no longer inside a real folder: sub/c.txt (sub is not a folder)"])
    }
}
