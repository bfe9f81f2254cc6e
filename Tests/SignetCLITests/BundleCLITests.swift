import Foundation
import Testing

/// `signet bundle …` end to end: the contract of issue 3, verb by verb, through the real binary.
@Suite("signet bundle")
struct BundleCLITests {
    /// A sandbox with key k1 (ed25519), trust.json pinning it, and a folder `src`.
    static func sandbox() throws -> Sandbox {
        let box = try Sandbox()
        try box.makeKey("k1")
        try box.trustInit("trust.json", keys: ["k1"])
        try box.makeTree("src", ["a.txt": "alpha\n", "sub/b.txt": "bravo\n", "sub/deeper/c.bin": "charlie"])
        return box
    }

    /// Flips one byte of `entry`'s data inside the zip `bundle`, in place (headers untouched).
    static func tamper(_ box: Sandbox, _ bundle: String, entry: String) throws {
        try box.python(
            """
            import struct, sys, zipfile
            path, name = sys.argv[1], sys.argv[2]
            offset = zipfile.ZipFile(path).getinfo(name).header_offset
            data = bytearray(open(path, "rb").read())
            nlen, xlen = struct.unpack_from("<2H", data, offset + 26)
            data[offset + 30 + nlen + xlen] ^= 0x01
            open(path, "wb").write(bytes(data))
            """, box.path(bundle), entry)
    }

    @Test("create → inspect (text, --json) → verify → extract → check; a standard zip")
    func roundTrip() throws {
        let box = try Self.sandbox()
        try box.createBundle("app.bundle", keys: ["k1"], version: 7, inputs: ["src"], extra: ["--expires", "2099-01-01T00:00:00Z"])
        // A standard zip: Python's zipfile reads it, every CRC is right, entries are stored.
        let zip = try box.python(
            """
            import sys, zipfile
            z = zipfile.ZipFile(sys.argv[1])
            assert z.testzip() is None, z.testzip()
            assert all(i.compress_type == zipfile.ZIP_STORED for i in z.infolist())
            print("\\n".join(i.filename for i in z.infolist()))
            """, box.path("app.bundle"))
        #expect(zip.out.split(separator: "\n").map(String.init)
            == ["a.txt", "sub/b.txt", "sub/deeper/c.bin", ".signet/manifest.json", ".signet/signatures.json"])
        let digest = try box.sha256("src/sub/b.txt")
        let fingerprint = try box.signetOK("key", "fingerprint", box.path("k1.pub")).out.trimmingCharacters(in: .whitespacesAndNewlines)

        let text = try box.signetOK("bundle", "inspect", box.path("app.bundle"))
        #expect(text.out.contains("(NOT verified)"))
        #expect(text.out.contains("name:      app\n"))
        #expect(text.out.contains("version:   7\n"))
        #expect(text.out.contains("expires:   2099-01-01T00:00:00Z\n"))
        #expect(text.out.contains("files:     3, 19 bytes\n"))
        #expect(text.out.contains("  \(digest)  6  sub/b.txt\n"))
        #expect(text.out.contains("(ed25519)"))

        let json = try box.signetOK("bundle", "inspect", "--json", box.path("app.bundle"))
        let object = try #require(try JSONSerialization.jsonObject(with: json.stdout) as? [String: Any])
        #expect(object["name"] as? String == "app")
        #expect((object["version"] as? NSNumber)?.intValue == 7)
        #expect(object["expires"] as? String == "2099-01-01T00:00:00Z")
        #expect(object["verified"] as? Bool == false)
        let files = try #require(object["files"] as? [[String: Any]])
        #expect(files.map { $0["path"] as? String } == ["a.txt", "sub/b.txt", "sub/deeper/c.bin"])
        #expect(files.map { ($0["size"] as? NSNumber)?.intValue } == [6, 6, 7])
        #expect(files[1]["sha256"] as? String == digest)
        let signatures = try #require(object["signatures"] as? [[String: Any]])
        #expect(signatures.count == 1)
        #expect(signatures.first?["alg"] as? String == "ed25519")
        #expect(fingerprint.contains(signatures.first?["keyid"] as? String ?? "<none>"), "\(fingerprint)")

        let verified = try box.bundleVerify("app.bundle", state: "verify-state")
        #expect(verified.status == 0, "\(verified)")
        let extracted = try box.bundleExtract("app.bundle", to: "dest")
        #expect(extracted.status == 0, "\(extracted)")
        for file in ["a.txt", "sub/b.txt", "sub/deeper/c.bin"] {
            #expect(try box.read("dest/" + file) == (try box.read("src/" + file)), "\(file)")
            #expect(try box.xattr("dest/" + file, "user.signet.sha256") == (try box.sha256("src/" + file)), "\(file)")
            #expect(try box.xattr("dest/" + file, "user.signet.manifest-sha256") == (try box.sha256("dest/.signet/manifest.json")))
        }
        #expect(Set(try box.snapshot(below: "dest").keys) == [
            "a.txt", "sub", "sub/b.txt", "sub/deeper", "sub/deeper/c.bin", ".signet", ".signet/manifest.json", ".signet/signatures.json",
        ])
        let checked = try box.bundleCheck("dest")
        #expect(checked.status == 0, "\(checked)")
        // Nothing but the bundle, the extraction and the states was written.
        #expect(Set(try box.snapshot().keys.filter { !$0.contains("/") }) == ["k1", "k1.pub", "trust.json", "src", "app.bundle", "dest", "state", "verify-state"])
    }

    @Test("inputs: a folder gives paths relative to it, single files their base names")
    func inputPaths() throws {
        let box = try Self.sandbox()
        try box.makeTree("other", ["x.txt": "x", "deep/y.txt": "y"])
        func paths(_ bundle: String) throws -> [String] {
            let json = try box.signetOK("bundle", "inspect", "--json", box.path(bundle))
            let object = try #require(try JSONSerialization.jsonObject(with: json.stdout) as? [String: Any])
            return (object["files"] as? [[String: Any]] ?? []).compactMap { $0["path"] as? String }
        }
        try box.createBundle("folder.bundle", keys: ["k1"], version: 1, inputs: ["src/sub/"])
        #expect(try paths("folder.bundle") == ["b.txt", "deeper/c.bin"])
        try box.createBundle("files.bundle", keys: ["k1"], version: 1, inputs: ["src/sub/deeper/c.bin", "other/deep/y.txt", "src/a.txt"])
        #expect(try paths("files.bundle") == ["a.txt", "c.bin", "y.txt"])
        try box.createBundle("mixed.bundle", keys: ["k1"], version: 1, inputs: ["other", "src/a.txt"])
        #expect(try paths("mixed.bundle") == ["a.txt", "deep/y.txt", "x.txt"])
        let extracted = try box.bundleExtract("files.bundle", to: "dest")
        #expect(extracted.status == 0, "\(extracted)")
        #expect(try box.readText("dest/y.txt") == "y")
        // Refusals write nothing.
        try FileManager.default.createSymbolicLink(atPath: box.path("link"), withDestinationPath: "src/a.txt")
        let linked = try box.signet("bundle", "create", "--key", box.path("k1"), "--name", "app", "--version", "1", "-o", box.path("x.bundle"), box.path("link"))
        #expect(linked.status == 2 && linked.stderr.contains("symbolic link"), "\(linked)")
        try FileManager.default.createDirectory(atPath: box.path("empty"), withIntermediateDirectories: true)
        let empty = try box.signet("bundle", "create", "--key", box.path("k1"), "--name", "app", "--version", "1", "-o", box.path("x.bundle"), box.path("empty"))
        #expect(empty.status == 2 && empty.stderr.contains("nothing to bundle"), "\(empty)")
        let twice = try box.signet("bundle", "create", "--key", box.path("k1"), "--key", box.path("k1"), "--name", "app", "--version", "1",
                                   "-o", box.path("x.bundle"), box.path("src"))
        #expect(twice.status == 2 && twice.stderr.contains("given twice"), "\(twice)")
        #expect(!box.exists("x.bundle"))
    }

    @Test("argument errors are usage errors (exit 2): a bad --name, two inputs with one base name")
    func argumentErrorsAreUsage() throws {
        let box = try Self.sandbox()
        try box.makeTree("other", ["a.txt": "another a"])
        let badName = try box.signet("bundle", "create", "--key", box.path("k1"), "--name", "../x", "--version", "1", "-o", box.path("x.bundle"), box.path("src"))
        #expect(badName.stderr.contains("bundle name"), "\(badName)")
        #expect(badName.status == 2, "a bad --name is a usage error: \(badName)")
        let clash = try box.signet("bundle", "create", "--key", box.path("k1"), "--name", "app", "--version", "1", "-o", box.path("x.bundle"),
                                   box.path("src/a.txt"), box.path("other/a.txt"))
        #expect(clash.stderr.contains("appears twice"), "\(clash)")
        #expect(clash.status == 2, "two inputs sharing a base name is a usage error: \(clash)")
        #expect(try box.signet("bundle", "create", "--key", box.path("k1"), "--name", "app", "--version", "0", "-o", box.path("x.bundle"), box.path("src")).status == 2)
        #expect(!box.exists("x.bundle"))
    }

    @Test("k-of-n: two of three keys (ed25519, p256, rsa2048) must sign")
    func threshold() throws {
        let box = try Self.sandbox()
        try box.makeKey("k2", type: "p256")
        try box.makeKey("k3", type: "rsa2048")
        try box.trustInit("trust2.json", keys: ["k1", "k2", "k3"], threshold: 2)
        try box.createBundle("both.bundle", keys: ["k2", "k3"], version: 1, inputs: ["src"])
        let accepted = try box.bundleVerify("both.bundle", trust: "trust2.json")
        #expect(accepted.status == 0, "\(accepted)")
        try box.createBundle("one.bundle", keys: ["k1"], version: 2, inputs: ["src"])
        let short = try box.bundleVerify("one.bundle", trust: "trust2.json")
        #expect(short.status == 1, "\(short)")
        #expect(short.stderr.contains("2 valid signature(s) from trusted keys needed, found 1"), "\(short)")
        #expect(box.exists("one.bundle"))
        let extract = try box.bundleExtract("one.bundle", to: "dest", trust: "trust2.json")
        #expect(extract.status == 1 && !box.exists("dest"), "\(extract)")
        try box.createBundle("three.bundle", keys: ["k1", "k2", "k3"], version: 3, inputs: ["src"])
        #expect(try box.bundleVerify("three.bundle", trust: "trust2.json").status == 0)
        // Two keys, both needed: one signature short.
        try box.trustInit("both.json", keys: ["k1", "k2"], threshold: 2)
        try box.createBundle("k2-only.bundle", keys: ["k2"], version: 1, inputs: ["src"])
        let oneShort = try box.bundleVerify("k2-only.bundle", trust: "both.json", state: "state-both")
        #expect(oneShort.status == 1 && oneShort.stderr.contains("valid signature(s) from trusted keys needed"), "\(oneShort)")
        try box.createBundle("k1-k2.bundle", keys: ["k1", "k2"], version: 1, inputs: ["src"])
        #expect(try box.bundleVerify("k1-k2.bundle", trust: "both.json", state: "state-both").status == 0)
    }

    @Test("rollback: an older version is refused (exit 1), the same release is accepted again, per name")
    func rollback() throws {
        let box = try Self.sandbox()
        for version in [1, 2, 3] { try box.createBundle("v\(version).bundle", keys: ["k1"], version: version, inputs: ["src"]) }
        try box.createBundle("other-v1.bundle", keys: ["k1"], name: "other", version: 1, inputs: ["src"])
        #expect(try box.bundleVerify("v2.bundle").status == 0)
        let older = try box.bundleVerify("v1.bundle")
        #expect(older.status == 1, "\(older)")
        #expect(older.stderr.contains("rollback"), "\(older)")
        #expect(older.stderr.contains("version 1 is older than version 2, already accepted (state folder"), "\(older)")
        let same = try box.bundleVerify("v2.bundle")
        #expect(same.status == 0, "the same release verifies again: \(same)")
        let extract = try box.bundleExtract("v1.bundle", to: "dest")
        #expect(extract.status == 1 && extract.stderr.contains("rollback") && !box.exists("dest"), "\(extract)")
        // Another name has its own history.
        #expect(try box.bundleVerify("other-v1.bundle").status == 0)
        #expect(try box.bundleVerify("v3.bundle").status == 0)
        #expect(try box.readText("state/app.json").contains(#""version":3"#))
        #expect(try box.readText("state/other.json").contains(#""version":1"#))
        // A fresh state (another client) accepts the old one.
        #expect(try box.bundleVerify("v1.bundle", state: "state2").status == 0)
    }

    @Test("verifiers racing on one state with two contents of one version: only one content is ever accepted")
    func racingVerifiers() throws {
        let box = try Self.sandbox()
        try box.createBundle("v1.bundle", keys: ["k1"], version: 1, inputs: ["src"])
        try box.makeTree("src-b", ["other.txt": "other content\n"])
        try box.createBundle("v1b.bundle", keys: ["k1"], version: 1, inputs: ["src-b"])
        for round in 0..<3 {
            // Four verifiers started together (threads, each running the binary), two per content.
            let codes = Codes()
            let group = DispatchGroup()
            for bundle in ["v1.bundle", "v1b.bundle", "v1.bundle", "v1b.bundle"] {
                DispatchQueue.global().async(group: group) {
                    let status = (try? box.bundleVerify(bundle, state: "state\(round)").status) ?? -1
                    codes.append(status)
                }
            }
            group.wait()
            #expect(codes.sorted == [0, 0, 1, 1], "round \(round)")
        }
    }

    /// Exit codes gathered from several threads.
    final class Codes: @unchecked Sendable {
        private let lock = NSLock()
        private var values: [Int32] = []
        func append(_ value: Int32) { lock.withLock { values.append(value) } }
        var sorted: [Int32] { lock.withLock { values.sorted() } }
    }

    @Test("extract into a folder whose parent is missing: exit 4, nothing written")
    func missingParent() throws {
        let box = try Self.sandbox()
        try box.createBundle("v1.bundle", keys: ["k1"], version: 1, inputs: ["src"])
        let before = try box.snapshot()
        let result = try box.bundleExtract("v1.bundle", to: "no/such/dest")
        #expect(result.status == 4 && result.stderr.contains("is not an existing folder"), "\(result)")
        #expect(Sandbox.differences(before, try box.snapshot()) == [])
    }

    @Test("the rollback state folder is private (0700), as BundleState documents")
    func stateFolderMode() throws {
        let box = try Self.sandbox()
        try box.createBundle("v1.bundle", keys: ["k1"], version: 1, inputs: ["src"])
        #expect(try box.bundleVerify("v1.bundle").status == 0)
        #expect(try box.mode("state") == 0o700, "BundleState: \"created (mode 0700) when missing\"")
    }

    @Test("the state advances only after complete success")
    func stateOnlyOnSuccess() throws {
        let box = try Self.sandbox()
        for version in [2, 3, 5] { try box.createBundle("v\(version).bundle", keys: ["k1"], version: version, inputs: ["src"]) }
        #expect(try box.bundleVerify("v2.bundle").status == 0)
        let state = try box.read("state/app.json")
        try Self.tamper(box, "v5.bundle", entry: "sub/b.txt")
        let tampered = try box.bundleVerify("v5.bundle")
        #expect(tampered.status == 1 && tampered.stderr.contains("\"sub/b.txt\" does not match its SHA-256"), "\(tampered)")
        let extract = try box.bundleExtract("v5.bundle", to: "dest")
        #expect(extract.status == 1 && !box.exists("dest"), "\(extract)")
        #expect(try box.read("state/app.json") == state)
        let genuine = try box.bundleExtract("v3.bundle", to: "dest")
        #expect(genuine.status == 0, "\(genuine)")
        #expect(try box.readText("state/app.json").contains(#""version":3"#))
        // No temporary folder is left beside DEST.
        #expect(try FileManager.default.contentsOfDirectory(atPath: box.folder.path).filter { $0.hasPrefix(".dest") } == [])
    }

    @Test("expiry: refused at create unless --allow-expired; verify exit 1; --at an earlier moment accepts")
    func expiry() throws {
        let box = try Self.sandbox()
        let refused = try box.signet("bundle", "create", "--key", box.path("k1"), "--name", "app", "--version", "1",
                                     "--expires", "2001-01-01T00:00:00Z", "-o", box.path("old.bundle"), box.path("src"))
        #expect(refused.status == 2 && refused.stderr.contains("--allow-expired"), "\(refused)")
        #expect(!box.exists("old.bundle"))
        try box.createBundle("old.bundle", keys: ["k1"], version: 1, inputs: ["src"], extra: ["--expires", "2001-01-01T00:00:00Z", "--allow-expired"])
        let expired = try box.bundleVerify("old.bundle")
        #expect(expired.status == 1 && expired.stderr.contains("expired"), "\(expired)")
        #expect(!box.exists("state/app.json"))
        let extract = try box.bundleExtract("old.bundle", to: "dest")
        #expect(extract.status == 1 && extract.stderr.contains("expired") && !box.exists("dest"), "\(extract)")
        let audit = try box.bundleVerify("old.bundle", extra: ["--at", "2000-06-01T00:00:00Z"])
        #expect(audit.status == 0, "\(audit)")
        let badDate = try box.bundleVerify("old.bundle", state: "state2", extra: ["--at", "yesterday"])
        #expect(badDate.status == 2, "\(badDate)")
    }

    @Test("--force: existing outputs are refused (exit 2) untouched, replaced with --force")
    func forceRules() throws {
        let box = try Self.sandbox()
        try box.write("app.bundle", "precious")
        let create = try box.signet("bundle", "create", "--key", box.path("k1"), "--name", "app", "--version", "1", "-o", box.path("app.bundle"), box.path("src"))
        #expect(create.status == 2 && create.stderr.contains("already exists"), "\(create)")
        #expect(try box.readText("app.bundle") == "precious")
        try box.createBundle("app.bundle", keys: ["k1"], version: 1, inputs: ["src"], extra: ["--force"])
        #expect(try box.bundleVerify("app.bundle").status == 0)
        let trust = try box.read("trust.json")
        let again = try box.signet("bundle", "trust", "init", "--key", box.path("k1.pub"), "-o", box.path("trust.json"))
        #expect(again.status == 2, "\(again)")
        #expect(try box.read("trust.json") == trust)
        try box.write("next.json", "precious")
        let rotate = try box.signet("bundle", "trust", "rotate", "--trust", box.path("trust.json"), "--key", box.path("k1.pub"),
                                    "--sign", box.path("k1"), "-o", box.path("next.json"))
        #expect(rotate.status == 2, "\(rotate)")
        #expect(try box.readText("next.json") == "precious")
        try box.signetOK("bundle", "trust", "rotate", "-q", "--trust", box.path("trust.json"), "--key", box.path("k1.pub"),
                         "--sign", box.path("k1"), "-o", box.path("next.json"), "--force")
        #expect(try box.readText("next.json").contains(#""version":2"#))
    }

    @Test("extract replaces an earlier extraction whole; refuses a folder it did not make")
    func extractionReplaces() throws {
        let box = try Self.sandbox()
        try box.createBundle("v1.bundle", keys: ["k1"], version: 1, inputs: ["src"])
        try box.makeTree("src2", ["a.txt": "alpha 2\n", "new/d.txt": "delta\n"])
        try box.createBundle("v2.bundle", keys: ["k1"], version: 2, inputs: ["src2"])
        #expect(try box.bundleExtract("v1.bundle", to: "dest").status == 0)
        let replaced = try box.bundleExtract("v2.bundle", to: "dest")
        #expect(replaced.status == 0, "\(replaced)")
        #expect(Set(try box.snapshot(below: "dest").keys) == ["a.txt", "new", "new/d.txt", ".signet", ".signet/manifest.json", ".signet/signatures.json"])
        #expect(try box.readText("dest/a.txt") == "alpha 2\n")
        #expect(try box.bundleCheck("dest").status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: box.folder.path).filter { $0.contains(".signet-") } == [])
        // A folder that is not an extraction is left alone.
        try box.makeTree("mine", ["notes.txt": "mine"])
        let before = try box.snapshot()
        let refused = try box.bundleExtract("v2.bundle", to: "mine", state: "state2")
        #expect(refused.status == 2 && refused.stderr.contains("not a folder extracted by signet bundle"), "\(refused)")
        #expect(Sandbox.differences(before, try box.snapshot()).filter { !$0.hasSuffix("state2") && !$0.contains("state2/") } == [])
        try box.write("plain", "a file")
        #expect(try box.bundleExtract("v2.bundle", to: "plain", state: "state2").status == 2)
        #expect(try box.readText("plain") == "a file")
        // An empty folder is fine.
        try FileManager.default.createDirectory(atPath: box.path("empty"), withIntermediateDirectories: true)
        #expect(try box.bundleExtract("v2.bundle", to: "empty", state: "state3").status == 0)
        #expect(try box.readText("empty/new/d.txt") == "delta\n")
    }

    @Test("check at rest: exit 1 naming every changed, missing and added file")
    func checkAtRest() throws {
        let box = try Self.sandbox()
        try box.createBundle("v1.bundle", keys: ["k1"], version: 1, inputs: ["src"])
        #expect(try box.bundleExtract("v1.bundle", to: "dest").status == 0)
        try box.write("dest/a.txt", "alphA\n")
        try FileManager.default.removeItem(atPath: box.path("dest/sub/b.txt"))
        try box.write("dest/sub/added.txt", "new")
        let checked = try box.bundleCheck("dest")
        #expect(checked.status == 1, "\(checked)")
        #expect(checked.stderr.contains("3 file(s) changed since extraction"), "\(checked)")
        #expect(checked.stderr.contains("changed: a.txt"), "\(checked)")
        #expect(checked.stderr.contains("missing: sub/b.txt"), "\(checked)")
        #expect(checked.stderr.contains("added: sub/added.txt"), "\(checked)")
        #expect(!checked.stderr.contains("c.bin"), "\(checked)")
        // A file swapped for a symbolic link (even to identical content) is named too.
        try FileManager.default.removeItem(atPath: box.path("dest/sub/deeper/c.bin"))
        try FileManager.default.createSymbolicLink(atPath: box.path("dest/sub/deeper/c.bin"), withDestinationPath: box.path("src/sub/deeper/c.bin"))
        let linked = try box.bundleCheck("dest")
        #expect(linked.status == 1 && linked.stderr.contains("no longer a regular file: sub/deeper/c.bin"), "\(linked)")
        // Only the attribute changed: still named.
        #expect(try box.bundleExtract("v1.bundle", to: "dest2", state: "state2").status == 0)
        try box.python("import os, sys; os.setxattr(sys.argv[1], 'user.signet.sha256', b'00' * 32)", box.path("dest2/sub/deeper/c.bin"))
        let attribute = try box.bundleCheck("dest2")
        #expect(attribute.status == 1 && attribute.stderr.contains("changed: sub/deeper/c.bin"), "\(attribute)")
        // A trust root that does not hold the signer refuses the folder too.
        try box.makeKey("k9")
        try box.trustInit("trust9.json", keys: ["k9"])
        #expect(try box.bundleCheck("dest2", trust: "trust9.json").status == 1)
    }
}
