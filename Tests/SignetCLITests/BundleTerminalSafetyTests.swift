import Foundation
import SignetBundle
import SignetTestSupport
import Testing

/// Issue 29, terminal safety of `signet bundle`: whatever a bundle says about itself is shown
/// with its control characters escaped (``TerminalText``). Signed bundles may hold paths with
/// bidirectional controls, separators and C1 characters (``BundlePath`` refuses only C0 and
/// DEL); `inspect` reads a manifest without verifying it, so a forged one may carry any control
/// character in its paths and name; and `check` names the files it finds on disk.
@Suite("signet bundle: no control character from a bundle reaches the terminal")
struct BundleTerminalSafetyTests {
    /// A sandbox with key k, trust.json pinning it, and `files` (path → content) under `src`.
    static func sandbox(_ files: [String: String]) throws -> Sandbox {
        let box = try Sandbox()
        try box.makeKey("k")
        try box.trustInit("trust.json", keys: ["k"])
        try box.makeTree("src", files)
        return box
    }

    /// Writes `output`: a bundle of `manifest` (canonical, never signed) and the signatures of
    /// the real bundle `base`, with no file entries; what `inspect` reads all the same.
    static func forge(_ box: Sandbox, _ manifest: BundleManifest, from base: String, to output: String) throws {
        try box.write(output + ".manifest", Data(manifest.canonicalBytes))
        try box.python(
            """
            import sys, zipfile
            base, manifest, out = sys.argv[1:4]
            signatures = zipfile.ZipFile(base).read(".signet/signatures.json")
            data = open(manifest, "rb").read()
            def info(name):
                i = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
                i.create_system = 3
                i.external_attr = 0o100644 << 16
                return i
            with zipfile.ZipFile(out, "w") as z:
                z.writestr(info(".signet/manifest.json"), data)
                z.writestr(info(".signet/signatures.json"), signatures)
            """, box.path(base), box.path(output + ".manifest"), box.path(output))
    }

    /// The number of lines (line feeds) in `result`'s standard output.
    static func lineCount(_ result: RunResult) -> Int {
        result.stdout.filter { $0 == UInt8(ascii: "\n") }.count
    }

    /// The `path` of every file `bundle inspect --json` lists.
    static func jsonPaths(_ result: RunResult) throws -> [String] {
        let object = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any], "not JSON: \(result)")
        let files = try #require(object["files"] as? [[String: Any]], "\(object)")
        return files.compactMap { $0["path"] as? String }
    }

    @Test("a signed bundle whose paths hold bidi controls, separators and a C1 CSI: inspect, verify, extract, check")
    func signedPathsAreEscaped() throws {
        let names = ["a\u{202e}txt.exe", "b\u{9b}2J.txt", "c\u{2066}d\u{2028}e\u{200f}.txt"]
        let box = try Self.sandbox(Dictionary(uniqueKeysWithValues: names.map { ($0, "content of \($0)\n") }))
        try box.createBundle("app.bundle", keys: ["k"], version: 1, inputs: ["src"])

        let text = try box.signetOK("bundle", "inspect", box.path("app.bundle"))
        #expect(text.out.contains("\\u{202e}") && text.out.contains("\\u{9b}2J") && text.out.contains("\\u{2028}"), "\(text)")
        #expect(Self.lineCount(text) == 7 + names.count, "one line per file: \(text)")
        TerminalText.expectClean(text, "bundle inspect")
        let json = try box.signetOK("bundle", "inspect", "--json", box.path("app.bundle"))
        TerminalText.expectClean(json, "bundle inspect --json")
        #expect(try Self.jsonPaths(json) == names, "the JSON does not carry the paths as they are: \(json)")

        let trust = ["--trust", box.path("trust.json"), "--state", box.path("state")]
        let verified = try box.signet(arguments: ["bundle", "verify"] + trust + [box.path("app.bundle")])
        #expect(verified.status == 0, "\(verified)")
        TerminalText.expectClean(verified, "bundle verify")
        let extracted = try box.signet(arguments: ["bundle", "extract"] + trust + [box.path("app.bundle"), box.path("dest")])
        #expect(extracted.status == 0, "\(extracted)")
        TerminalText.expectClean(extracted, "bundle extract")

        // Changed, removed and added at rest (the added name with C0 controls, from the disk):
        // check names every one, escaped.
        try box.write("dest/" + names[0], "changed\n")
        try FileManager.default.removeItem(atPath: box.path("dest/" + names[1]))
        try box.write("dest/x\u{1b}]0;x\u{07}\r\nsignet: OK.txt", "added\n")
        let checked = try box.bundleCheck("dest")
        #expect(checked.status == 1, "\(checked)")
        #expect(checked.stderr.contains("\\u{202e}") && checked.stderr.contains("\\u{9b}") && checked.stderr.contains("\\u{1b}]0;x"), "\(checked)")
        TerminalText.expectClean(checked, "bundle check")
    }

    @Test("a forged manifest with C0, DEL, C1 and bidi controls in its paths, and one with a hostile name")
    func forgedManifestsAreEscaped() throws {
        let box = try Self.sandbox(["a.txt": "a\n"])
        try box.createBundle("real.bundle", keys: ["k"], version: 1, inputs: ["src"])
        let paths = ["a\u{1b}[2J\u{1b}]0;x\u{07}.txt", "b\r\nsignet: OK.txt", "c\u{7f}\u{9b}\u{202e}.txt", "d\u{2029}\u{200f}\u{0}.txt"]
        let created = Date(timeIntervalSince1970: 1_700_000_000)
        let files = paths.map { BundleManifest.File(path: $0, size: 1, sha256: [UInt8](repeating: 0xab, count: 32)) }
        try Self.forge(box, BundleManifest(name: "app", version: 2, created: created, expires: nil, files: files), from: "real.bundle", to: "forged.bundle")

        let text = try box.signet(arguments: ["bundle", "inspect", box.path("forged.bundle")])
        #expect(text.status == 0, "inspect shows an unverified manifest as it says: \(text)")
        #expect(text.out.contains("\\u{1b}[2J") && text.out.contains("\\u{d}\\u{a}signet: OK"), "\(text)")
        #expect(Self.lineCount(text) == 7 + paths.count, "one line per file: \(text)")
        TerminalText.expectClean(text, "bundle inspect (forged)")
        let json = try box.signet(arguments: ["bundle", "inspect", "--json", box.path("forged.bundle")])
        #expect(json.status == 0, "\(json)")
        TerminalText.expectClean(json, "bundle inspect --json (forged)")
        #expect(try Self.jsonPaths(json) == paths, "the JSON does not carry the paths as they are: \(json)")

        // Refused by verify and extract (not signed, unsafe paths), escaped all the same.
        let trust = ["--trust", box.path("trust.json"), "--state", box.path("state")]
        let verified = try box.signet(arguments: ["bundle", "verify"] + trust + [box.path("forged.bundle")])
        #expect(verified.status != 0, "\(verified)")
        TerminalText.expectClean(verified, "bundle verify (forged)")
        let extracted = try box.signet(arguments: ["bundle", "extract"] + trust + [box.path("forged.bundle"), box.path("dest")])
        #expect(extracted.status != 0, "\(extracted)")
        #expect(!box.exists("dest"))
        TerminalText.expectClean(extracted, "bundle extract (forged)")

        // A name the manifest rules refuse: inspect refuses the bundle, quoting the name escaped
        // (verify stops earlier, at the signatures).
        let named = BundleManifest(name: "app\u{1b}]0;x\u{07}\r\n\u{9b}\u{202e}", version: 2, created: created, expires: nil, files: Array(files.prefix(1)))
        try Self.forge(box, named, from: "real.bundle", to: "named.bundle")
        for arguments in [["bundle", "inspect"], ["bundle", "inspect", "--json"]] {
            let refused = try box.signet(arguments: arguments + [box.path("named.bundle")])
            #expect(refused.status == 3, "\(arguments): \(refused)")
            #expect(refused.stderr.contains("\\u{1b}]0;x"), "\(arguments): the refusal does not quote the name: \(refused)")
            TerminalText.expectClean(refused, "\(arguments.joined(separator: " ")) (a hostile name)")
        }
    }

    @Test("a bundle whose own file name holds control characters: inspect and verify")
    func theBundlesOwnPathIsEscaped() throws {
        let box = try Self.sandbox(["a.txt": "a\n"])
        let name = "b\u{1b}]0;x\u{07}\u{9b}2J\u{202e}.bundle"
        try box.createBundle(name, keys: ["k"], version: 1, inputs: ["src"])
        let text = try box.signetOK("bundle", "inspect", box.path(name))
        TerminalText.expectClean(text, "bundle inspect (the bundle's own path)")
        let verified = try box.signet(arguments: ["bundle", "verify", "--trust", box.path("trust.json"), "--state", box.path("state"), box.path(name)])
        #expect(verified.status == 0, "\(verified)")
        TerminalText.expectClean(verified, "bundle verify (the bundle's own path)")
    }
}
