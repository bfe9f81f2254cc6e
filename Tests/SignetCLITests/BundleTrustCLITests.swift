import Foundation
import SignetTestSupport
import Testing

/// `signet bundle trust init|rotate|update`: rotation is accepted only when signed by a
/// threshold of the current root's keys and its version is exactly the next; the pinned file
/// is then replaced whole, and anything else leaves it byte for byte as it was.
@Suite("signet bundle trust")
struct BundleTrustCLITests {
    /// A sandbox with keys old, new and wrong (ed25519), trust.json pinning old, and `src`.
    static func sandbox() throws -> Sandbox {
        let box = try Sandbox()
        for key in ["old", "new", "wrong"] { try box.makeKey(key) }
        try box.trustInit("trust.json", keys: ["old"])
        try box.makeTree("src", ["a.txt": "alpha\n"])
        return box
    }

    /// `trust rotate` (not required to succeed).
    static func rotate(_ box: Sandbox, trust: String, keys: [String], sign: [String], output: String, threshold: Int = 1) throws -> RunResult {
        var arguments = ["bundle", "trust", "rotate", "-q", "--trust", box.path(trust), "--threshold", String(threshold), "-o", box.path(output)]
        for key in keys { arguments += ["--key", box.path(key + ".pub")] }
        for key in sign { arguments += ["--sign", box.path(key)] }
        return try box.signet(arguments: arguments)
    }

    static func update(_ box: Sandbox, trust: String = "trust.json", next: String) throws -> RunResult {
        try box.signet("bundle", "trust", "update", "-q", "--trust", box.path(trust), box.path(next))
    }

    /// The root's version, threshold and key ids, read from a trust file.
    static func root(_ box: Sandbox, _ name: String) throws -> (version: Int, threshold: Int, keys: [String], signatures: Int) {
        let object = try #require(try JSONSerialization.jsonObject(with: try box.read(name)) as? [String: Any])
        let root = try #require(object["root"] as? [String: Any])
        let keys = (root["keys"] as? [[String: Any]] ?? []).compactMap { $0["keyid"] as? String }
        return ((root["version"] as? NSNumber)?.intValue ?? -1, (root["threshold"] as? NSNumber)?.intValue ?? -1, keys,
                (object["signatures"] as? [Any])?.count ?? -1)
    }

    static func fingerprint(_ box: Sandbox, _ key: String) throws -> String {
        try box.signetOK("key", "fingerprint", box.path(key + ".pub")).out.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("init: version 1, the keys and threshold; a threshold above the key count is refused")
    func initRoot() throws {
        let box = try Self.sandbox()
        let root = try Self.root(box, "trust.json")
        #expect(root.version == 1 && root.threshold == 1 && root.signatures == 0)
        let oldID = try Self.fingerprint(box, "old")
        #expect(root.keys == [oldID])
        try box.trustInit("two.json", keys: ["old", "new"], threshold: 2)
        #expect(try Self.root(box, "two.json").threshold == 2)
        let tooHigh = try box.signet("bundle", "trust", "init", "--key", box.path("old.pub"), "--threshold", "2", "-o", box.path("bad.json"))
        #expect(tooHigh.status == 2 && !box.exists("bad.json"), "\(tooHigh)")
        let twice = try box.signet("bundle", "trust", "init", "--key", box.path("old.pub"), "--key", box.path("old.pub"), "-o", box.path("bad.json"))
        #expect(twice.status == 2 && !box.exists("bad.json"), "\(twice)")
    }

    @Test("rotate signed by the current key → update accepts; new key's bundles verify, the old key's are refused")
    func rotation() throws {
        let box = try Self.sandbox()
        try box.createBundle("by-old.bundle", keys: ["old"], version: 1, inputs: ["src"])
        #expect(try box.bundleVerify("by-old.bundle").status == 0)
        let rotated = try Self.rotate(box, trust: "trust.json", keys: ["new"], sign: ["old"], output: "next.json")
        #expect(rotated.status == 0, "\(rotated)")
        let next = try Self.root(box, "next.json")
        let newID = try Self.fingerprint(box, "new")
        #expect(next.version == 2 && next.signatures == 1 && next.keys == [newID])
        let updated = try Self.update(box, next: "next.json")
        #expect(updated.status == 0, "\(updated)")
        #expect(try box.read("trust.json") == (try box.read("next.json")))
        #expect(try Self.root(box, "trust.json").version == 2)
        try box.createBundle("by-new.bundle", keys: ["new"], version: 2, inputs: ["src"])
        let accepted = try box.bundleVerify("by-new.bundle")
        #expect(accepted.status == 0, "\(accepted)")
        try box.createBundle("old-v3.bundle", keys: ["old"], version: 3, inputs: ["src"])
        let refused = try box.bundleVerify("old-v3.bundle")
        #expect(refused.status == 1 && refused.stderr.contains("is not a trusted key"), "\(refused)")
        // Extraction refuses a bundle signed only by the old key as well.
        #expect(try box.bundleExtract("by-old.bundle", to: "dest", state: "state2").status == 1)
        // Replaying the same next root (version 2 onto version 2) is refused.
        let replay = try Self.update(box, next: "next.json")
        #expect(replay.status == 1, "\(replay)")
        // Rotating on from version 2 needs the new key.
        #expect(try Self.rotate(box, trust: "trust.json", keys: ["old"], sign: ["old"], output: "v3.json").status == 2)
        #expect(try Self.rotate(box, trust: "trust.json", keys: ["old", "new"], sign: ["new"], output: "v3.json").status == 0)
        #expect(try Self.update(box, next: "v3.json").status == 0)
        #expect(try Self.root(box, "trust.json").version == 3)
        #expect(try box.bundleVerify("old-v3.bundle").status == 0)
    }

    @Test("a rotation by a key outside the current root: rotate refuses (2), update refuses a hand-made one (1), trust.json unchanged")
    func wrongSigner() throws {
        let box = try Self.sandbox()
        let pinned = try box.read("trust.json")
        let refused = try Self.rotate(box, trust: "trust.json", keys: ["new"], sign: ["wrong"], output: "next.json")
        #expect(refused.status == 2, "\(refused)")
        #expect(refused.stderr.contains("is not in the current trust root"), "\(refused)")
        #expect(!box.exists("next.json"))
        // Hand-made: a version-2 root signed by the wrong key, via a root that holds it.
        try box.trustInit("wrong-root.json", keys: ["wrong"])
        #expect(try Self.rotate(box, trust: "wrong-root.json", keys: ["new"], sign: ["wrong"], output: "forged.json").status == 0)
        #expect(try Self.root(box, "forged.json").version == 2)
        let before = try box.snapshot()
        let forged = try Self.update(box, next: "forged.json")
        #expect(forged.status == 1, "\(forged)")
        #expect(forged.stderr.contains("is not a trusted key"), "\(forged)")
        #expect(try box.read("trust.json") == pinned)
        #expect(Sandbox.differences(before, try box.snapshot()) == [])
        // A next root carrying no signatures at all.
        try box.python(
            """
            import json, sys
            doc = json.load(open(sys.argv[1]))
            doc["signatures"] = []
            open(sys.argv[2], "w").write(json.dumps(doc, separators=(",", ":"), sort_keys=True) + "\\n")
            """, box.path("forged.json"), box.path("unsigned.json"))
        let unsigned = try Self.update(box, next: "unsigned.json")
        #expect(unsigned.status == 1, "\(unsigned)")
        #expect(try box.read("trust.json") == pinned)
    }

    @Test("k-of-n rotation: one signature of a threshold-2 root is not enough")
    func thresholdRotation() throws {
        let box = try Self.sandbox()
        try box.makeKey("second")
        try box.trustInit("two.json", keys: ["old", "second"], threshold: 2)
        let short = try Self.rotate(box, trust: "two.json", keys: ["new"], sign: ["old"], output: "next.json")
        #expect(short.status == 2 && short.stderr.contains("needs 2 signing key(s)"), "\(short)")
        #expect(try Self.rotate(box, trust: "two.json", keys: ["new"], sign: ["old", "second"], output: "next.json").status == 0)
        // Strip one of the two signatures: update refuses with exit 1.
        try box.python(
            """
            import json, sys
            doc = json.load(open(sys.argv[1]))
            doc["signatures"] = doc["signatures"][:1]
            open(sys.argv[2], "w").write(json.dumps(doc, separators=(",", ":"), sort_keys=True) + "\\n")
            """, box.path("next.json"), box.path("half.json"))
        let pinned = try box.read("two.json")
        let half = try Self.update(box, trust: "two.json", next: "half.json")
        #expect(half.status == 1 && half.stderr.contains("2 valid signature(s) from trusted keys needed, found 1"), "\(half)")
        #expect(try box.read("two.json") == pinned)
        #expect(try Self.update(box, trust: "two.json", next: "next.json").status == 0)
        #expect(try Self.root(box, "two.json").version == 2)
    }

    @Test("a next root whose version skips (v3 after v1) is refused (exit 1), trust.json unchanged")
    func versionSkip() throws {
        let box = try Self.sandbox()
        let pinned = try box.read("trust.json")
        // v2 keeps the old key, so v3 is signed by a key the pinned v1 root trusts.
        #expect(try Self.rotate(box, trust: "trust.json", keys: ["old"], sign: ["old"], output: "v2.json").status == 0)
        #expect(try Self.rotate(box, trust: "v2.json", keys: ["new"], sign: ["old"], output: "v3.json").status == 0)
        #expect(try Self.root(box, "v3.json").version == 3)
        let skipped = try Self.update(box, next: "v3.json")
        #expect(skipped.status == 1, "\(skipped)")
        #expect(skipped.stderr.contains("only version 2 can follow version 1"), "\(skipped)")
        #expect(try box.read("trust.json") == pinned)
        // In order, both are accepted.
        #expect(try Self.update(box, next: "v2.json").status == 0)
        #expect(try Self.update(box, next: "v3.json").status == 0)
        #expect(try Self.root(box, "trust.json").version == 3)
        // A damaged next root is malformed input (3), and still changes nothing.
        let current = try box.read("trust.json")
        try box.write("damaged.json", "{\"root\":")
        #expect(try Self.update(box, next: "damaged.json").status == 3)
        #expect(try box.read("trust.json") == current)
    }
}
