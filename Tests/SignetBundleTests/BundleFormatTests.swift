import Foundation
import SignetCore
import Testing
@testable import SignetBundle

@Suite struct BundleFormatTests {
    // MARK: Canonical JSON

    @Test("canonical JSON: sorted members by UTF-8 bytes, minimal escapes, no whitespace")
    func canonical() throws {
        let value = CanonicalJSON.object([
            "b": .integer(-12), "a": .array([.bool(true), .null]), "é": .string("x"), "Z": .string("q\"\\\n\u{1}é/"),
        ])
        #expect(String(decoding: value.bytes, as: UTF8.self) == #"{"Z":"q\"\\\u000a\u0001é/","a":[true,null],"b":-12,"é":"x"}"#)
        #expect(try CanonicalJSON.parse(value.bytes, source: "t") == value)
        #expect(try CanonicalJSON.parse(Array(" { \"a\" : [ 1 , 2 ] } ".utf8), source: "t") == .object(["a": .array([.integer(1), .integer(2)])]))
    }

    @Test("JSON that is refused", arguments: ["{\"a\":1.5}", "{\"a\":0.1}", "[", "{\"a\":}", "", "nul", "{\"a\":\"\\ud800\"}x"])
    func refusedJSON(text: String) throws {
        let error = try BundleTest.thrown { try CanonicalJSON.parse(Array(text.utf8), source: "t.json") }
        guard case .malformed(let source, _) = error else { Issue.record("\(error)"); return }
        #expect(source == "t.json")
    }

    @Test("nesting deeper than 16 levels is refused")
    func deepNesting() throws {
        let text = String(repeating: "[", count: 40) + String(repeating: "]", count: 40)
        _ = try BundleTest.thrown { try CanonicalJSON.parse(Array(text.utf8), source: "t") }
    }

    // MARK: Manifest

    private func manifest() -> BundleManifest {
        BundleManifest(
            name: "app", version: 7, created: Date(timeIntervalSince1970: 1_700_000_000), expires: Date(timeIntervalSince1970: 1_900_000_000),
            files: [.init(path: "z.txt", size: 3, sha256: Array(repeating: 0xAB, count: 32)), .init(path: "a/b", size: 0, sha256: Array(repeating: 1, count: 32))])
    }

    @Test("a manifest round-trips through its canonical bytes, files sorted")
    func manifestRoundTrip() throws {
        let original = manifest()
        #expect(original.files.map(\.path) == ["a/b", "z.txt"])
        let parsed = try BundleManifest(bytes: original.canonicalBytes, source: "m")
        #expect(parsed == original)
        #expect(String(decoding: original.canonicalBytes, as: UTF8.self).hasPrefix(#"{"created":"2023-11-14T22:13:20Z","expires":"2030-03-17T17:46:40Z","files":[{"path":"a/b""#))
    }

    @Test(
        "manifests that are refused",
        arguments: [
            ("not canonical (spaces)", ",\"name\"", ", \"name\""),
            ("unknown member", "{\"created\"", "{\"extra\":1,\"created\""),
            ("wrong format", "signet-bundle-manifest-v1", "signet-bundle-manifest-v2"),
            ("version as string", "\"version\":7", "\"version\":\"7\""),
            ("version zero", "\"version\":7", "\"version\":0"),
            ("negative size", "\"size\":3", "\"size\":-3"),
            ("uppercase digest", "abababab", "ABABABAB"),
            ("short digest", "abababababababababababababababababababababababababababababababab", "abab"),
            ("bad date", "2023-11-14T22:13:20Z", "2023-11-14 22:13:20"),
            ("date with offset", "2023-11-14T22:13:20Z", "2023-11-14T23:13:20+01"),
            ("bad name", "\"name\":\"app\"", "\"name\":\"../app\""),
            ("files not an array", "\"files\":[", "\"files\":7,\"x\":["),
        ])
    func refusedManifest(label: String, from: String, to: String) throws {
        let original = String(decoding: manifest().canonicalBytes, as: UTF8.self)
        #expect(original.contains(from), "\(label): the change does not apply")
        let text = original.replacingOccurrences(of: from, with: to)
        let error = try BundleTest.thrown { try BundleManifest(bytes: Array(text.utf8), source: "m") }
        #expect(error.category == .malformedInput, "\(label): \(error)")
    }

    @Test("a manifest listing files out of order, or a path twice, is refused naming the path")
    func unsortedOrRepeatedFiles() throws {
        func manifest(_ paths: [String]) -> [UInt8] {
            let digest = String(repeating: "ab", count: 32)
            let files = paths.map { #"{"path":"\#($0)","sha256":"\#(digest)","size":1}"# }.joined(separator: ",")
            return Array(#"{"created":"2026-01-01T00:00:00Z","expires":null,"files":[\#(files)],"format":"signet-bundle-manifest-v1","name":"app","version":1}"#.utf8)
        }
        _ = try BundleManifest(bytes: manifest(["a.txt", "b.txt"]), source: "m")
        let unsorted = try BundleTest.thrown { try BundleManifest(bytes: manifest(["b.txt", "a.txt"]), source: "m") }
        #expect(unsorted == .malformed(source: "m", detail: "the manifest's files are not sorted by path (\"a.txt\" after \"b.txt\")"))
        let twice = try BundleTest.thrown { try BundleManifest(bytes: manifest(["a.txt", "a.txt"]), source: "m") }
        #expect(twice == .malformed(source: "m", detail: "the manifest lists \"a.txt\" twice"))
        let equivalent = try BundleTest.thrown { try BundleManifest(bytes: manifest(["cafe\u{301}", "caf\u{E9}"]), source: "m") }
        #expect(equivalent == .malformed(source: "m", detail: "the manifest lists \"caf\u{E9}\" twice"))
    }

    @Test("bundle names", arguments: [("app", true), ("A-b_c.9", true), (String(repeating: "a", count: 128), true),
                                      ("", false), (".hidden", false), ("-x", false), ("a/b", false), ("a b", false), ("é", false),
                                      (String(repeating: "a", count: 129), false)])
    func names(name: String, valid: Bool) {
        #expect(((try? BundleName.validate(name, source: "t")) != nil) == valid, "\(name)")
    }

    // MARK: Paths

    @Test("entry paths that are refused", arguments: [
        ("../evil", "\"..\""), ("a/../../evil", "\"..\""), ("/etc/passwd", "absolute"), ("a\\b", "backslash"), ("C:/x", "drive letter"),
        ("a//b", "empty path component"), ("a/./b", "\".\""), ("dir/", "directory entry"), ("a\u{0}b", "control character"),
        ("a\nb", "control character"), (".signet/x", "reserved"), (".SIGNET/manifest.json", "reserved"), ("", "empty path"),
    ])
    func refusedPaths(path: String, phrase: String) throws {
        let error = try BundleTest.thrown { try BundlePath.validate(path, source: "b", limits: BundleLimits()) }
        #expect(error.description.contains(phrase), "\(error)")
        #expect(error.category == .malformedInput)
    }

    @Test("paths that are fine", arguments: ["a", "a/b/c.txt", ".hidden", "dir/.signet", "ünïcödé/名前.txt", "..a", "a.."])
    func acceptedPaths(path: String) throws {
        try BundlePath.validate(path, source: "b", limits: BundleLimits())
    }

    @Test("a path over the length limit is refused")
    func longPath() throws {
        var limits = BundleLimits()
        limits.maximumPathLength = 10
        _ = try BundleTest.thrown { try BundlePath.validate("abcdefghijk", source: "b", limits: limits) }
    }

    @Test("collisions: twice, by case, by Unicode normalisation, file used as folder")
    func collisions() throws {
        for (paths, phrase) in [(["a", "a"], "twice"), (["A.txt", "a.txt"], "only in case"), (["caf\u{E9}", "cafe\u{301}"], "only in Unicode normalisation"), (["caf\u{C9}", "cafe\u{301}"], "only in case"),
                                (["a", "a/b"], "which is a file"), (["x/A", "x/a/b"], "which is a file")] {
            let error = try BundleTest.thrown { try BundlePath.checkCollisions(paths, source: "b") }
            #expect(error.description.contains(phrase), "\(paths): \(error)")
        }
        try BundlePath.checkCollisions(["a/b", "a/c", "b"], source: "b")
    }

    // MARK: Trust roots

    @Test("a trust root round-trips; its file is canonical JSON")
    func trustRoundTrip() throws {
        let root = try TrustRoot(threshold: 2, keys: BundleTest.trusted(BundleTest.ed25519, BundleTest.p256))
        let parsed = try TrustRoot(bytes: root.fileBytes, source: "t")
        #expect(parsed == root)
        #expect(parsed.keys.map(\.algorithm) == [.ed25519, .ecdsaP256SHA256])
    }

    @Test("trust roots that cannot be made")
    func invalidRoots() throws {
        _ = try BundleTest.thrown { try TrustRoot(threshold: 1, keys: []) }
        _ = try BundleTest.thrown { try TrustRoot(threshold: 3, keys: BundleTest.trusted(BundleTest.ed25519, BundleTest.p256)) }
        _ = try BundleTest.thrown { try TrustRoot(threshold: 0, keys: BundleTest.trusted(BundleTest.ed25519)) }
        _ = try BundleTest.thrown { try TrustRoot(threshold: 1, keys: BundleTest.trusted(BundleTest.ed25519, BundleTest.ed25519)) }
        _ = try BundleTest.thrown { try TrustedKey(publicKey: BundleTest.ed25519.publicKey, algorithm: .ecdsaP256SHA256) }
    }

    @Test("trust files that are refused", arguments: [
        ("\"threshold\":1", "\"threshold\":2"), ("\"threshold\":1", "\"threshold\":0"), ("signet-trust-root-v1", "signet-trust-root-v9"),
        ("\"alg\":\"ed25519\"", "\"alg\":\"ecdsa-p256-sha256\""), ("\"alg\":\"ed25519\"", "\"alg\":\"md5\""), ("sha256/", "sha1/"),
        ("\"version\":1", "\"version\":1.5"), ("{\"root\"", "{\"extra\":0,\"root\""), ("\"public-key\":\"MC", "\"public-key\":\"!!"),
    ])
    func refusedTrust(from: String, to: String) throws {
        let root = try TrustRoot(threshold: 1, keys: BundleTest.trusted(BundleTest.ed25519))
        let text = String(decoding: root.fileBytes, as: UTF8.self)
        #expect(text.contains(from))
        let error = try BundleTest.thrown { try TrustRoot(bytes: Array(text.replacingOccurrences(of: from, with: to).utf8), source: "trust.json") }
        #expect(error.category == .malformedInput, "\(error)")
        #expect(error.description.hasPrefix("trust.json: "))
    }

    @Test("a keyid that does not match its key is refused")
    func keyIDMismatch() throws {
        let root = try TrustRoot(threshold: 1, keys: BundleTest.trusted(BundleTest.ed25519))
        let other = BundleTest.other.publicKey.fingerprint.description
        let text = String(decoding: root.fileBytes, as: UTF8.self).replacingOccurrences(of: BundleTest.ed25519.publicKey.fingerprint.description, with: other)
        let error = try BundleTest.thrown { try TrustRoot(bytes: Array(text.utf8), source: "t") }
        #expect(error.description.contains("does not match"))
    }
}
