import Foundation
import Testing

/// `signet bundle verify` and `extract` against a hostile-bundle corpus that the tests generate
/// with python3's zipfile and struct. Every refusal must carry the contract's exit code and a
/// precise message, write nothing anywhere (no file beside or above DEST, no temporary folder
/// left), leave DEST — an earlier good extraction — byte for byte as it was, and leave the
/// rollback state untouched. Cases that must get past the signature check reuse the manifest
/// and signatures of a real bundle made by signet.
@Suite("signet bundle: hostile bundles")
struct BundleHostileTests {
    /// One refusal: the bundle (a sandbox path), the exit code and a phrase of the message.
    struct Case: Sendable {
        var bundle: String
        var status: Int32
        var phrase: String
    }

    /// Writes the corpus into `out` from a real bundle (`base`, app version 2, files a.txt,
    /// b.txt, sub/c.txt) and another real one of the same name and version (`other`).
    static let generator = #"""
        import os, random, struct, sys, warnings, zipfile
        warnings.simplefilter("ignore")
        base, other, out, absolute = sys.argv[1:5]
        def read(path):
            with zipfile.ZipFile(path) as z:
                return [(i.filename, z.read(i)) for i in z.infolist()]
        def info(name, mode=0o100644):
            i = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            i.create_system = 3
            i.external_attr = mode << 16
            return i
        def write(case, items):
            with zipfile.ZipFile(os.path.join(out, case), "w") as z:
                for item in items:
                    name, data = item[0], item[1]
                    z.writestr(name if isinstance(name, zipfile.ZipInfo) else info(name), data,
                               compress_type=item[2] if len(item) > 2 else zipfile.ZIP_STORED)
        def raw(case, data):
            with open(os.path.join(out, case), "wb") as f:
                f.write(data)
        def directory(data):
            end = data.rfind(b"PK\x05\x06")
            size, offset = struct.unpack_from("<LL", data, end + 12)
            found, pos = {}, offset
            while pos < offset + size:
                fields = struct.unpack_from("<4s6H3L5H2L", data, pos)
                nlen, xlen, clen, local = fields[10], fields[11], fields[12], fields[16]
                found[data[pos + 46:pos + 46 + nlen].decode()] = (pos, local)
                pos += 46 + nlen + xlen + clen
            return found, offset
        E = read(base)
        signed = dict(E)
        files = [(n, d) for n, d in E if not n.startswith(".signet/")]
        write("pristine", E)
        write("slip", E + [("../evil.txt", b"pwned")])
        write("slip-nested", E + [("sub/../../evil.txt", b"pwned")])
        write("absolute", E + [(absolute, b"pwned")])
        write("drive", E + [("C:/evil.txt", b"pwned")])
        write("dot", E + [("./evil.txt", b"pwned")])
        write("empty-component", E + [("sub//evil.txt", b"pwned")])
        write("symlink", E + [(info("link", 0o120777), b"../../outside")])
        write("symlink-shadow", [(info("sub", 0o120777), b"../..")] + E)
        write("device", E + [(info("dev", 0o020644), b"")])
        write("fifo", E + [(info("fifo", 0o010644), b"")])
        write("directory", E + [(info("dir/", 0o040755), b"")])
        write("duplicate", E + [files[0]])
        write("case", E + [("A.txt", signed["a.txt"])])
        write("file-as-folder", E + [("a.txt/evil.txt", b"pwned")])
        write("reserved", E + [(".signet/evil.json", b"{}")])
        write("reserved-case", E + [(".SIGNET/manifest.json", signed[".signet/manifest.json"])])
        write("bomb", E + [("bomb.bin", bytes(50 << 20), zipfile.ZIP_DEFLATED)])
        write("backslash", E + [("a\\b", b"x")])
        write("control", E + [("a\x01b.txt", b"x")])
        write("placeholder", E + [("XXXXXXXX.txt", b"x")])
        with open(os.path.join(out, "placeholder"), "rb") as f:
            raw("nonutf8", f.read().replace(b"XXXXXXXX.txt", b"\xff\xfe\xc0\xafXXXX.txt"))
        os.remove(os.path.join(out, "placeholder"))
        with open(base, "rb") as f:
            original = f.read()
        entries, directory_offset = directory(original)
        central, local = entries["a.txt"]
        size = len(signed["a.txt"])
        lie = bytearray(original)
        struct.pack_into("<2L", lie, local + 18, size + 1, size + 1)
        raw("sizelie-local", bytes(lie))
        lie = bytearray(original)
        struct.pack_into("<2L", lie, local + 18, 0x7FFF0000, 0x7FFF0000)
        struct.pack_into("<2L", lie, central + 20, 0x7FFF0000, 0x7FFF0000)
        raw("sizelie-huge", bytes(lie))
        for case, field, value in [("descriptor", 8, 0x0808), ("encrypted", 8, 0x0801)]:
            patched = bytearray(original)
            struct.pack_into("<H", patched, central + field, value)
            raw(case, bytes(patched))
        patched = bytearray(original)
        struct.pack_into("<2L", patched, central + 20, 0xFFFFFFFF, 0xFFFFFFFF)
        raw("zip64-damaged", bytes(patched))
        end = original.rfind(b"PK\x05\x06")
        count, cd_size = struct.unpack_from("<HL", original, end + 10)
        nlen, xlen, clen = struct.unpack_from("<3H", original, central + 28)
        record = original[central:central + 46 + nlen + xlen + clen]
        raw("shared-data", original[:end] + record + struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, count + 1, count + 1,
                                                                   cd_size + len(record), directory_offset, 0))
        raw("prepended", b"MZ" + bytes(98) + original)
        raw("appended", original + b"trailing junk" * 4)
        write("long-name", E + [("d/" * 600 + "x", b"x")])
        write("normalisation", E + [("e\u0301.txt", b"decomposed"), ("\u00e9.txt", b"composed")])
        for cut in [1, 21, 22, 30, 100, len(original) // 2, directory_offset, len(original) - 23, len(original) - 22, len(original) - 1]:
            raw("truncated-%d" % cut, original[:cut])
        raw("spliced", original[:200] + original[directory_offset:])
        def shifted(at, blob):
            # Inserts blob at `at` (at most the directory's offset) and moves every offset after
            # it, so that an ordinary zip reader still reads the archive: bytes no signature covers.
            data = bytearray(original[:at] + blob + original[at:])
            end = data.rfind(b"PK\x05\x06")
            size, offset = struct.unpack_from("<LL", data, end + 12)
            struct.pack_into("<L", data, end + 16, offset + len(blob))
            pos = offset + len(blob)
            while pos < offset + len(blob) + size:
                nlen, xlen, clen = struct.unpack_from("<3H", data, pos + 28)
                local, = struct.unpack_from("<L", data, pos + 42)
                if local >= at:
                    struct.pack_into("<L", data, pos + 42, local + len(blob))
                pos += 46 + nlen + xlen + clen
            return bytes(data)
        locals_sorted = sorted(local for _, local in entries.values())
        raw("polyglot", shifted(0, b"#!/bin/sh\necho owned > /tmp/owned\nexit 0\n"))
        raw("gap-between", shifted(locals_sorted[1], b"\0" * 64))
        raw("gap-before-directory", shifted(directory_offset, b"hidden payload"))
        import zlib
        hidden = b"#!/bin/sh\necho owned\n"
        header = struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0x800, 0, 0, 0x21, zlib.crc32(hidden), len(hidden), len(hidden), 9, 0)
        raw("hidden-entry", shifted(directory_offset, header + b"hidden.sh" + hidden))
        raw("comment", original[:-2] + struct.pack("<H", 5) + b"hello")
        raw("garbage", random.Random(7).randbytes(4096))
        raw("empty", b"")
        raw("eocd-lies", random.Random(8).randbytes(512) + struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 5, 5, 4000, 100, 0))
        write("no-manifest", files)
        write("extra", E + [("extra.txt", b"slipped in")])
        write("missing", [(n, d) for n, d in E if n != "b.txt"])
        nlen, xlen = struct.unpack_from("<2H", original, local + 26)
        tampered = bytearray(original)
        tampered[local + 30 + nlen + xlen + 2] ^= 0x01
        raw("tampered", bytes(tampered))
        write("size-differs", [(n, d + b"!" if n == "a.txt" else d) for n, d in E])
        B = read(other)
        write("swapped", [(n, d) for n, d in B if n != ".signet/signatures.json"] + [(".signet/signatures.json", signed[".signet/signatures.json"])])
        write("unsigned", files + [(".signet/manifest.json", signed[".signet/manifest.json"]),
                                   (".signet/signatures.json", b'{"format":"signet-bundle-signatures-v1","signatures":[]}')])
        """#

    /// A sandbox with keys k1, k2 (trusted, threshold 2) and k3 (not trusted), real bundles,
    /// the generated corpus in `corpus/`, and `deep/dest` holding an extraction of app
    /// version 1 (so the state says 1 and version 2 bundles get past the rollback check).
    static func fixture() throws -> (Sandbox, absolute: String) {
        let box = try Sandbox()
        for key in ["k1", "k2", "k3"] { try box.makeKey(key) }
        try box.trustInit("trust.json", keys: ["k1", "k2"], threshold: 2)
        try box.makeTree("v1", ["a.txt": "first\n", "b.txt": "b1\n", "sub/c.txt": "c1\n"])
        try box.makeTree("v2", ["a.txt": "hello\n", "b.txt": "b2\n", "sub/c.txt": "c2\n"])
        try box.makeTree("v2b", ["a.txt": "hello\n", "b.txt": "another\n", "sub/c.txt": "c2\n"])
        try box.createBundle("good-v1.bundle", keys: ["k1", "k2"], version: 1, inputs: ["v1"])
        try box.makeTree("v1b", ["a.txt": "first, again\n", "b.txt": "b1\n", "sub/c.txt": "c1\n"])
        try box.createBundle("other-v1.bundle", keys: ["k1", "k2"], version: 1, inputs: ["v1b"])
        try box.createBundle("base.bundle", keys: ["k1", "k2"], version: 2, inputs: ["v2"])
        try box.createBundle("other.bundle", keys: ["k1", "k2"], version: 2, inputs: ["v2b"])
        try box.createBundle("unknown-key.bundle", keys: ["k3"], version: 2, inputs: ["v2"])
        try box.createBundle("untrusted-second.bundle", keys: ["k1", "k3"], version: 2, inputs: ["v2"])
        try box.createBundle("one-signature.bundle", keys: ["k2"], version: 2, inputs: ["v2"])
        try box.createBundle(
            "expired.bundle", keys: ["k1", "k2"], version: 3, inputs: ["v2"], extra: ["--expires", "2001-01-01T00:00:00Z", "--allow-expired"])
        try FileManager.default.createDirectory(atPath: box.path("corpus"), withIntermediateDirectories: true)
        let absolute = "/tmp/signet-evil-\(UUID().uuidString)"
        try box.python(Self.generator, box.path("base.bundle"), box.path("other.bundle"), box.path("corpus"), absolute)
        try FileManager.default.createDirectory(atPath: box.path("deep"), withIntermediateDirectories: true)
        let extracted = try box.bundleExtract("good-v1.bundle", to: "deep/dest")
        try #require(extracted.status == 0, "\(extracted)")
        return (box, absolute)
    }

    /// Runs verify and extract on each case; checks the refusal and that nothing changed.
    static func expectRefusals(_ cases: [Case], in box: Sandbox, absolute: String) throws {
        let state = try box.read("state/app.json")
        for item in cases {
            let before = try box.snapshot()
            for (verb, result) in [("verify", try box.bundleVerify(item.bundle)), ("extract", try box.bundleExtract(item.bundle, to: "deep/dest"))] {
                #expect((1...4).contains(result.status), "\(item.bundle) \(verb) must fail with an exit code, not a signal: \(result)")
                #expect(result.status == item.status, "\(item.bundle) \(verb): \(result)")
                #expect(result.stderr.contains(item.phrase), "\(item.bundle) \(verb): expected \"\(item.phrase)\" in \(result.stderr)")
                #expect(!result.stderr.contains("Fatal error"), "\(item.bundle) \(verb): \(result)")
                #expect(result.stdout.isEmpty, "\(item.bundle) \(verb)")
            }
            #expect(Sandbox.differences(before, try box.snapshot()) == [], "\(item.bundle): something was written")
            #expect(try box.read("state/app.json") == state, "\(item.bundle): the state changed")
            #expect(!FileManager.default.fileExists(atPath: absolute), "\(item.bundle) wrote \(absolute)")
        }
        let destination = try box.snapshot(below: "deep/dest")
        #expect(destination["a.txt"] == .file(Data("first\n".utf8)), "DEST no longer holds version 1")
        #expect(Set(destination.keys) == ["a.txt", "b.txt", "sub", "sub/c.txt", ".signet", ".signet/manifest.json", ".signet/signatures.json"])
        #expect(try box.xattr("deep/dest/a.txt", "user.signet.sha256") == (try box.sha256("v1/a.txt")))
        #expect(try box.bundleCheck("deep/dest").status == 0)
    }

    /// After the refusals, the unaltered rewrite of the base bundle is accepted: the corpus
    /// differs from a good bundle only by its hostile change, and no refusal advanced the state.
    static func expectPristineAccepted(in box: Sandbox) throws {
        let extracted = try box.bundleExtract("corpus/pristine", to: "deep/dest")
        #expect(extracted.status == 0, "\(extracted)")
        #expect(try box.readText("deep/dest/a.txt") == "hello\n")
        #expect(try box.readText("state/app.json").contains(#""version":2"#))
        #expect(try box.bundleCheck("deep/dest").status == 0)
    }

    @Test("unsafe entry names and kinds: exit 3 before anything is written")
    func unsafeEntries() throws {
        let (box, absolute) = try Self.fixture()
        let cases = [
            Case(bundle: "corpus/slip", status: 3, phrase: "entry \"../evil.txt\": \"..\" path component"),
            Case(bundle: "corpus/slip-nested", status: 3, phrase: "\"..\" path component"),
            Case(bundle: "corpus/absolute", status: 3, phrase: "absolute path"),
            Case(bundle: "corpus/drive", status: 3, phrase: "drive letter"),
            Case(bundle: "corpus/dot", status: 3, phrase: "\".\" path component"),
            Case(bundle: "corpus/empty-component", status: 3, phrase: "empty path component"),
            Case(bundle: "corpus/symlink", status: 3, phrase: "entry \"link\": symbolic link"),
            Case(bundle: "corpus/symlink-shadow", status: 3, phrase: "entry \"sub\": symbolic link"),
            Case(bundle: "corpus/device", status: 3, phrase: "device, pipe or socket"),
            Case(bundle: "corpus/fifo", status: 3, phrase: "device, pipe or socket"),
            Case(bundle: "corpus/directory", status: 3, phrase: "directory entry"),
            Case(bundle: "corpus/duplicate", status: 3, phrase: "entry \"a.txt\": appears twice"),
            Case(bundle: "corpus/case", status: 3, phrase: "differs from \"a.txt\" only in case"),
            Case(bundle: "corpus/file-as-folder", status: 3, phrase: "which is a file"),
            Case(bundle: "corpus/reserved", status: 3, phrase: "reserved"),
            Case(bundle: "corpus/reserved-case", status: 3, phrase: "reserved"),
            Case(bundle: "corpus/bomb", status: 3, phrase: "entry \"bomb.bin\": compressed entry"),
            Case(bundle: "corpus/backslash", status: 3, phrase: "backslash in path"),
            Case(bundle: "corpus/control", status: 3, phrase: "entry \"a\\u{1}b.txt\": control character in path"),
            Case(bundle: "corpus/nonutf8", status: 3, phrase: "name is not valid UTF-8"),
            Case(bundle: "corpus/normalisation", status: 3, phrase: "entry \"\u{00e9}.txt\""),
        ]
        try Self.expectRefusals(cases, in: box, absolute: absolute)
        try Self.expectPristineAccepted(in: box)
    }

    @Test("size lies, truncation, garbage: exit 3 (never a signal)")
    func damagedZips() throws {
        let (box, absolute) = try Self.fixture()
        let names = try FileManager.default.contentsOfDirectory(atPath: box.path("corpus"))
        let truncated = names.filter { $0.hasPrefix("truncated-") }.sorted()
        #expect(truncated.count == 10)
        var cases = [
            Case(bundle: "corpus/sizelie-local", status: 3, phrase: "entry \"a.txt\": size lie: the local header says 7 bytes, the directory 6"),
            Case(bundle: "corpus/sizelie-huge", status: 3, phrase: "size lie"),
            Case(bundle: "corpus/spliced", status: 3, phrase: "not a valid bundle zip"),
            Case(bundle: "corpus/garbage", status: 3, phrase: "no end-of-central-directory record"),
            Case(bundle: "corpus/empty", status: 3, phrase: "too short to be a zip (0 bytes)"),
            Case(bundle: "corpus/eocd-lies", status: 3, phrase: "not a valid bundle zip"),
            Case(bundle: "corpus/no-manifest", status: 3, phrase: "not a Signet bundle"),
            Case(bundle: "corpus/descriptor", status: 3, phrase: "entry \"a.txt\": entry with a trailing data descriptor"),
            Case(bundle: "corpus/encrypted", status: 3, phrase: "entry \"a.txt\": encrypted entry"),
            Case(bundle: "corpus/zip64-damaged", status: 3, phrase: "damaged ZIP64 field"),
            Case(bundle: "corpus/shared-data", status: 3, phrase: "its data overlaps \"a.txt\""),
            Case(bundle: "corpus/prepended", status: 3, phrase: "the central directory is not where the end record says"),
            Case(bundle: "corpus/appended", status: 3, phrase: "no end-of-central-directory record"),
            Case(bundle: "corpus/long-name", status: 3, phrase: "name longer than 1024 bytes"),
            // Canonical bundles: every byte accounted for, however a plain zip reader sees them.
            Case(bundle: "corpus/polyglot", status: 3, phrase: "bytes at the start of the file belong to no listed entry"),
            Case(bundle: "corpus/gap-between", status: 3, phrase: "64 bytes after entry \"a.txt\" belong to no listed entry"),
            Case(bundle: "corpus/gap-before-directory", status: 3, phrase: "14 bytes before the central directory belong to no listed entry"),
            Case(bundle: "corpus/hidden-entry", status: 3, phrase: "bytes before the central directory belong to no listed entry"),
            Case(bundle: "corpus/comment", status: 3, phrase: "an archive comment of 5 bytes follows the end record"),
        ]
        cases += truncated.map { Case(bundle: "corpus/" + $0, status: 3, phrase: "not a valid bundle zip") }
        try Self.expectRefusals(cases, in: box, absolute: absolute)
        try Self.expectPristineAccepted(in: box)
    }

    @Test("well formed but not genuine: exit 1 (signatures, listing, digests, expiry, rollback)")
    func notGenuine() throws {
        let (box, absolute) = try Self.fixture()
        let cases = [
            Case(bundle: "corpus/extra", status: 1, phrase: "not listed in the manifest: \"extra.txt\""),
            Case(bundle: "corpus/missing", status: 1, phrase: "listed in the manifest but missing: \"b.txt\""),
            Case(bundle: "corpus/tampered", status: 1, phrase: "\"a.txt\" does not match its SHA-256"),
            Case(bundle: "corpus/size-differs", status: 1, phrase: "\"a.txt\" is 7 bytes; the manifest says 6"),
            Case(bundle: "corpus/swapped", status: 1, phrase: "does not verify"),
            Case(bundle: "corpus/unsigned", status: 1, phrase: "it has no signatures"),
            Case(bundle: "unknown-key.bundle", status: 1, phrase: "is not a trusted key"),
            Case(bundle: "untrusted-second.bundle", status: 1, phrase: "2 valid signature(s) from trusted keys needed, found 1"),
            Case(bundle: "one-signature.bundle", status: 1, phrase: "2 valid signature(s) from trusted keys needed, found 1"),
            Case(bundle: "expired.bundle", status: 1, phrase: "expired at 2001-01-01T00:00:00Z"),
            Case(bundle: "other-v1.bundle", status: 1, phrase: "rollback refused: app version 1 has other content than the version 1"),
        ]
        try Self.expectRefusals(cases, in: box, absolute: absolute)
        // The manifest swapped in is itself genuine (bundle B verifies on its own), so only
        // the pairing with A's signatures was refused.
        let other = try box.bundleVerify("other.bundle", state: "scratch-state")
        #expect(other.status == 0, "\(other)")
        try Self.expectPristineAccepted(in: box)
        // The same release again repairs; another version 2 is refused; version 1 is a rollback,
        // also with a fresh state, because DEST is a floor of its own.
        #expect(try box.bundleExtract("base.bundle", to: "deep/dest").status == 0)
        let reused = try box.bundleExtract("other.bundle", to: "deep/dest")
        #expect(reused.status == 1 && reused.stderr.contains("app version 2 has other content than the version 2 installed in"), "\(reused)")
        let older = try box.bundleExtract("good-v1.bundle", to: "deep/dest", state: "fresh-state")
        #expect(older.status == 1 && older.stderr.contains("app version 1 is older than version 2, installed in"), "\(older)")
        #expect(try box.readText("deep/dest/a.txt") == "hello\n")
    }

    @Test("inspect (which verifies nothing) never writes a hostile manifest's control characters to the terminal")
    func inspectEscapes() throws {
        let box = try Sandbox()
        try box.makeKey("k1")
        try box.makeTree("src", ["a.txt": "alpha\n"])
        try box.createBundle("base.bundle", keys: ["k1"], version: 1, inputs: ["src"])
        // A manifest anyone can write (inspect checks no signature) listing a path with ESC,
        // BEL and a C1 CSI: terminal escape sequences (retitle the window, clear the screen).
        try box.python(
            """
            import json, sys, zipfile
            z = zipfile.ZipFile(sys.argv[1])
            items = [(i.filename, z.read(i)) for i in z.infolist()]
            with zipfile.ZipFile(sys.argv[2], "w") as out:
                for name, data in items:
                    if name == ".signet/manifest.json":
                        manifest = json.loads(data)
                        manifest["files"].append({"path": "z\\x1b]0;owned\\x07\\x1b[2J\\u009bX", "size": 1, "sha256": "00" * 32})
                        data = json.dumps(manifest, separators=(",", ":"), sort_keys=True, ensure_ascii=False).encode()
                    out.writestr(name, data)
            """, box.path("base.bundle"), box.path("escape.bundle"))
        let shown = try box.signet("bundle", "inspect", box.path("escape.bundle"))
        #expect(shown.status == 0, "\(shown)")
        #expect(shown.out.contains("owned"), "\(shown)")
        #expect(!shown.stdout.contains(0x1B), "inspect printed a raw ESC from the bundle: \(shown.out.debugDescription)")
        #expect(!shown.stdout.contains(0x07), "inspect printed a raw BEL from the bundle")
        let printedCSI = shown.out.unicodeScalars.contains("\u{9B}")
        #expect(!printedCSI, "inspect printed a raw C1 CSI from the bundle")
        let json = try box.signet("bundle", "inspect", "--json", box.path("escape.bundle"))
        #expect(json.status == 0 && !json.stdout.contains(0x1B) && !json.stdout.contains(0x07), "\(json)")
    }
}
