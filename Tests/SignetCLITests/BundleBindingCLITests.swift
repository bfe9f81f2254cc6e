import Foundation
import SignetTestSupport
import Testing

/// `signet bundle verify|extract|check` binding what is installed to what was meant to be
/// installed: `--name`, DEST as a floor whatever `--state` says, and `check` refusing expired
/// and rolled-back trees and signed manifests that would make it trap. Each refusal asserts
/// the exit code, the message, and that nothing changed on disk.
@Suite("signet bundle: name binding, DEST floor, check at rest")
struct BundleBindingCLITests {
    /// Key k1 trusted; app v1 (expires 2030-03-17T17:46:40Z), app v2, beta v9; app v1 extracted to dest.
    static func sandbox() throws -> Sandbox {
        let box = try Sandbox()
        try box.makeKey("k1")
        try box.trustInit("trust.json", keys: ["k1"])
        try box.makeTree("one", ["a.txt": "one\n"])
        try box.makeTree("two", ["a.txt": "two\n"])
        try box.makeTree("beta", ["a.txt": "beta\n"])
        try box.createBundle("v1.bundle", keys: ["k1"], version: 1, inputs: ["one"], extra: ["--expires", "2030-03-17T17:46:40Z"])
        try box.createBundle("v2.bundle", keys: ["k1"], version: 2, inputs: ["two"])
        try box.createBundle("beta.bundle", keys: ["k1"], name: "beta", version: 9, inputs: ["beta"])
        try #require(try box.bundleExtract("v1.bundle", to: "dest").status == 0)
        return box
    }

    static func expectRefused(_ result: RunResult, _ status: Int32, _ phrase: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.status == status, "\(result)", sourceLocation: sourceLocation)
        #expect(result.stderr.contains(phrase), "expected \"\(phrase)\" in \(result.stderr)", sourceLocation: sourceLocation)
        #expect(!result.stderr.contains("Fatal error"), sourceLocation: sourceLocation)
    }

    @Test("a bundle of another name never replaces DEST, even with a fresh state; --name refuses it everywhere")
    func nameSwitch() throws {
        let box = try Self.sandbox()
        let before = try box.snapshot()
        Self.expectRefused(try box.bundleExtract("beta.bundle", to: "dest", state: "fresh"), 1, "wrong bundle: it is \"beta\", but \"app\" is installed in")
        Self.expectRefused(try box.bundleVerify("beta.bundle", state: "fresh", extra: ["--name", "app"]), 1, "wrong bundle: it is \"beta\", but \"app\" is the one expected")
        Self.expectRefused(
            try box.bundleExtract("beta.bundle", to: "new-dest", state: "fresh", extra: ["--name", "app"]), 1, "but \"app\" is the one expected")
        Self.expectRefused(try box.bundleCheck("dest", extra: ["--name", "beta"]), 1, "wrong bundle: it is \"app\", but \"beta\" is the one expected")
        #expect(Sandbox.differences(before, try box.snapshot()).filter { !$0.dropFirst(2).hasPrefix("fresh") } == [])
        #expect(!box.exists("fresh/beta.json") && !box.exists("fresh/app.json"))
        #expect(try box.bundleCheck("dest", extra: ["--name", "app"]).status == 0)
        #expect(try box.bundleVerify("v2.bundle", extra: ["--name", "app"]).status == 0)
    }

    @Test("DEST downgrade with a fresh state: refused; verify --state then extract --state of one bundle: accepted")
    func destinationDowngrade() throws {
        let box = try Self.sandbox()
        #expect(try box.bundleVerify("v2.bundle", state: "s2").status == 0)
        #expect(try box.bundleExtract("v2.bundle", to: "dest", state: "s2").status == 0, "verify then extract with the same state")
        let before = try box.snapshot()
        Self.expectRefused(try box.bundleExtract("v1.bundle", to: "dest", state: "fresh"), 1, "rollback refused: app version 1 is older than version 2, installed in")
        #expect(Sandbox.differences(before, try box.snapshot()).filter { !$0.dropFirst(2).hasPrefix("fresh") } == [])
        #expect(try box.readText("dest/a.txt") == "two\n")
    }

    @Test("check refuses an expired tree (now, or --at) and a tree rolled back against --state, which it only reads")
    func checkAtRest() throws {
        let box = try Self.sandbox()
        #expect(try box.bundleCheck("dest", extra: ["--at", "2030-03-17T17:46:40Z"]).status == 0)
        Self.expectRefused(try box.bundleCheck("dest", extra: ["--at", "2030-03-17T17:46:41Z"]), 1, "app expired at 2030-03-17T17:46:40Z")
        #expect(try box.bundleVerify("v2.bundle").status == 0)
        let state = try box.read("state/app.json")
        Self.expectRefused(
            try box.bundleCheck("dest", extra: ["--state", box.path("state")]), 1, "rollback refused: app version 1 is older than version 2, already accepted")
        #expect(try box.read("state/app.json") == state)
        Self.expectRefused(try box.bundleCheck("dest", extra: ["--at", "yesterday"]), 2, "--at")
    }

    @Test("check on a signed manifest that lists a path twice or a path outside DEST: exit 3, never a trap")
    func checkHostileManifest() throws {
        let box = try Self.sandbox()
        let digest = try box.sha256("one/a.txt")
        let keyID = try box.signetOK("key", "fingerprint", box.path("k1")).out.trimmingCharacters(in: .whitespacesAndNewlines)
        for (paths, phrase) in [(["a.txt", "a.txt"], "the manifest lists \"a.txt\" twice"), (["../a.txt"], "entry \"../a.txt\": \"..\" path component")] {
            let files = paths.map { #"{"path":"\#($0)","sha256":"\#(digest)","size":4}"# }.joined(separator: ",")
            let manifest = #"{"created":"2026-01-01T00:00:00Z","expires":null,"files":[\#(files)],"format":"signet-bundle-manifest-v1","name":"app","version":1}"#
            try box.write("dest/.signet/manifest.json", manifest)
            let signature = try box.signetOK("sign", "--key", box.path("k1"), "--base64", box.path("dest/.signet/manifest.json")).out
                .trimmingCharacters(in: .whitespacesAndNewlines)
            try box.write(
                "dest/.signet/signatures.json",
                #"{"format":"signet-bundle-signatures-v1","signatures":[{"alg":"ed25519","keyid":"\#(keyID)","sig":"\#(signature)"}]}"#)
            Self.expectRefused(try box.bundleCheck("dest"), 3, phrase)
        }
    }
}
