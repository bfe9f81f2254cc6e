import Foundation
import HTTPTypes
import SignetBundle
import SignetServer
import SignetTestSupport
import Testing

/// `TarReader` on archives that real writers made at test time (GNU tar in its gnu, pax and
/// ustar formats, python's `tarfile` in pax and GNU formats), on hostile archives built byte by
/// byte, and `ResourceAnswer.decide` on conditional and range requests.
@Suite struct TarReaderTests {
    /// One regular file as the reader handed it over.
    struct File: Equatable, CustomStringConvertible {
        var path: String
        var data: [UInt8]
        init(_ path: String, _ data: [UInt8]) {
            self.path = path
            self.data = data
        }
        init(_ path: String, _ text: String) { self.init(path, Array(text.utf8)) }
        var description: String { "\(path) (\(data.count) bytes)" }
    }

    /// Reads `bytes`, taking each file's data `chunk` bytes at a time into `files` (an entry is
    /// added as soon as the reader hands it over, so a refusal shows what came before it).
    @discardableResult
    static func read(
        _ bytes: [UInt8], limits: BundleLimits = BundleLimits(), chunk: Int = 1000, into files: inout [File]
    ) throws -> [TarReader.Entry] {
        try TarReader(limits: limits).read(TarBytes(bytes)) { (entry, data) throws in
            files.append(File(entry.path, []))
            var have = 0
            while Int64(have) < entry.size {
                let part = try data(chunk)
                let expected = min(chunk, Int(entry.size) - have)
                #expect(part.count == expected, "\(entry.path)")
                if part.isEmpty { break }
                files[files.count - 1].data += part
                have += part.count
            }
        }
    }

    /// The files of an archive the reader takes; its returned entries must be those files.
    static func files(_ bytes: [UInt8], limits: BundleLimits = BundleLimits(), chunk: Int = 1000) throws -> [File] {
        var files: [File] = []
        let entries = try read(bytes, limits: limits, chunk: chunk, into: &files)
        #expect(entries.map(\.path) == files.map(\.path))
        #expect(entries.map(\.size) == files.map { Int64($0.data.count) })
        return files
    }

    /// The detail of the `.malformed(source: "the tar", …)` refusal of `bytes`; `handed`
    /// (unless nil) is the files handed over before it.
    static func refusal(
        _ bytes: [UInt8], limits: BundleLimits = BundleLimits(), handed: [String]? = [], sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> String {
        var files: [File] = []
        let error = try thrown(BundleError.self, sourceLocation: sourceLocation) { try Self.read(bytes, limits: limits, into: &files) }
        if let handed { #expect(files.map(\.path) == handed, "files handed over before the refusal", sourceLocation: sourceLocation) }
        #expect(error.category == .malformedInput, sourceLocation: sourceLocation)
        guard case .malformed(let field, let detail) = error else {
            Issue.record("not malformed: \(error)", sourceLocation: sourceLocation)
            return ""
        }
        #expect(field == "the tar", sourceLocation: sourceLocation)
        return detail
    }

    static func contains(_ bytes: [UInt8], _ text: String) -> Bool {
        let needle = Array(text.utf8)
        return bytes.indices.contains { bytes[$0...].starts(with: needle) }
    }

    // MARK: Archives from real writers

    /// Runs GNU tar in `folder` and returns the archive it wrote to standard output.
    static func gnuTar(_ arguments: [String], in folder: TemporaryFolder) throws -> [UInt8] {
        let tar = try #require(ProcessRunner.which("tar"), "tar is not installed (Debian package tar)")
        let version = try ProcessRunner.run(tar, ["--version"])
        try #require(version.out.contains("GNU tar"), "these archives need GNU tar: \(version.out.prefix(60))")
        let result = try ProcessRunner.run(tar, ["--sort=name"] + arguments, in: folder.url)
        try #require(result.status == 0, "tar \(arguments): \(result)")
        return Array(result.stdout)
    }

    @Test func gnuFormatLongNameFromGNUTar() throws {
        let folder = try TemporaryFolder()
        let long = "deep/" + String(repeating: "n", count: 120) + ".txt"
        try folder.write("src/" + long, "long name\n")
        try folder.write("src/top.txt", "top\n")
        let bytes = try Self.gnuTar(["--format=gnu", "-cf", "-", "-C", "src", "deep", "top.txt"], in: folder)
        #expect(Self.contains(bytes, "././@LongLink"), "the long name is not in an L entry")
        #expect(bytes.count == 10240, "GNU tar pads to its 10 KiB record with zeros, which the reader takes")
        #expect(try Self.files(bytes) == [File(long, "long name\n"), File("top.txt", "top\n")])
    }

    @Test func paxLongPathFromGNUTar() throws {
        let folder = try TemporaryFolder()
        let long = "pax/" + String(repeating: "p", count: 150) + ".txt"
        try folder.write("src/" + long, "pax data")
        try folder.write("src/pax/short.txt", "")
        let bytes = try Self.gnuTar(["--format=pax", "-cf", "-", "-C", "src", "pax"], in: folder)
        #expect(Self.contains(bytes, "path=" + long + "\n"), "the long path is not in a pax record")
        #expect(try Self.files(bytes) == [File(long, "pax data"), File("pax/short.txt", "")])
    }

    @Test func ustarPrefixFieldFromGNUTar() throws {
        let folder = try TemporaryFolder()
        let long = "u/" + String(repeating: "d", count: 60) + "/" + String(repeating: "e", count: 60) + "/f.txt"
        try folder.write("src/" + long, "prefixed\n")
        let bytes = try Self.gnuTar(["--format=ustar", "-cf", "-", "-C", "src", "u"], in: folder)
        #expect(!Self.contains(bytes, long), "the path was not split into the prefix and name fields")
        #expect(try Self.files(bytes) == [File(long, "prefixed\n")])
    }

    @Test func dotSlashEntriesFromGNUTar() throws {
        let folder = try TemporaryFolder()
        try folder.write("src/a.txt", "a\n")
        try folder.write("src/sub/b.txt", "b\n")
        let bytes = try Self.gnuTar(["-C", "src", "-cf", "-", "."], in: folder)
        #expect(Self.contains(bytes, "./sub/b.txt"))
        #expect(try Self.files(bytes, chunk: 1) == [File("a.txt", "a\n"), File("sub/b.txt", "b\n")])
    }

    @Test func linksFromGNUTarAreRefused() throws {
        let folder = try TemporaryFolder()
        try folder.write("src/hard.txt", "t\n")
        try FileManager.default.linkItem(atPath: folder.file("src/hard.txt"), toPath: folder.file("src/target.txt"))
        try FileManager.default.createSymbolicLink(atPath: folder.file("src/link"), withDestinationPath: "target.txt")
        let hard = try Self.gnuTar(["-cf", "-", "-C", "src", "hard.txt", "target.txt"], in: folder)
        #expect(try Self.refusal(hard, handed: ["hard.txt"]).contains("target.txt is a hard link; a resource holds regular files only"))
        let symbolic = try Self.gnuTar(["-cf", "-", "-C", "src", "link"], in: folder)
        #expect(try Self.refusal(symbolic).contains("link is a symbolic link"))
    }

    static let pythonWriter = #"""
        import io, sys, tarfile
        fmt = {"pax": tarfile.PAX_FORMAT, "gnu": tarfile.GNU_FORMAT}[sys.argv[1]]
        files = [
            ("docs/" + "l" * 130 + ".txt", b"long name\n"),
            ("docs/na\u00efve-\u00fcn\u00efcode.txt", "utf-8 \u2713\n".encode()),
            ("empty.txt", b""),
            ("block.bin", bytes(i % 251 for i in range(512))),
            ("odd.bin", bytes((i * 7) % 256 for i in range(513))),
        ]
        with tarfile.open(sys.argv[2], "w", format=fmt, encoding="utf-8") as archive:
            folder = tarfile.TarInfo("docs")
            folder.type = tarfile.DIRTYPE
            archive.addfile(folder)
            for name, data in files:
                info = tarfile.TarInfo(name)
                info.size = len(data)
                info.mtime = 1700000000
                archive.addfile(info, io.BytesIO(data))
        """#

    @Test(arguments: ["pax", "gnu"])
    func pythonTarfile(format: String) throws {
        let folder = try TemporaryFolder()
        try Python.runOK(Self.pythonWriter, [format, folder.file("out.tar")])
        let bytes = try folder.read("out.tar")
        #expect(Self.contains(bytes, format == "pax" ? "path=docs/lll" : "././@LongLink"))
        let block: [UInt8] = (0..<512).map { UInt8($0 % 251) }
        let odd: [UInt8] = (0..<513).map { UInt8(($0 * 7) % 256) }
        let expected: [File] = [
            File("docs/" + String(repeating: "l", count: 130) + ".txt", "long name\n"),
            File("docs/na\u{EF}ve-\u{FC}n\u{EF}code.txt", "utf-8 \u{2713}\n"), File("empty.txt", ""),
            File("block.bin", block), File("odd.bin", odd),
        ]
        #expect(try Self.files(bytes, chunk: 7) == expected)
    }

    // MARK: Built archives the reader takes

    @Test func builtArchivesAreReadExactly() throws {
        typealias T = TarBuilder
        func check(_ name: String, _ bytes: [UInt8], _ expected: [File], sourceLocation: SourceLocation = #_sourceLocation) throws {
            #expect(try Self.files(bytes) == expected, "\(name)", sourceLocation: sourceLocation)
            #expect(try Self.files(bytes, chunk: 3) == expected, "\(name), in chunks of 3", sourceLocation: sourceLocation)
        }
        try check("empty archive", T.end, [])
        try check("one zero block, then the end of input", T.join(T.file("a.txt", "a"), T.zeros(512)), [File("a.txt", "a")])
        try check("70 000 zero bytes after the end", T.archive(T.file("a.txt", "a")) + T.zeros(70_000), [File("a.txt", "a")])
        try check("POSIX prefix field", T.archive(T.file("name.txt", "p", prefix: "pre/fix")), [File("pre/fix/name.txt", "p")])
        try check(
            "GNU magic: bytes 345… are no prefix", T.archive(T.file("plain.txt", "g", prefix: "junk", magic: T.gnu)), [File("plain.txt", "g")])
        try check(
            "./ stripped; folders skipped", T.archive(T.header("./", type: "5"), T.header("./d/", type: "5"), T.file("././d/x.txt", "x")),
            [File("d/x.txt", "x")])
        try check(
            "types NUL and 7", T.archive(T.file("nul.txt", "n", type: "\u{0}"), T.file("c.txt", "c", type: "7")),
            [File("nul.txt", "n"), File("c.txt", "c")])
        try check(
            "pax path, for the next entry only",
            T.archive(T.pax([("path", "real/name.txt")]), T.file("ignored.txt", "1"), T.file("second.txt", "2")),
            [File("real/name.txt", "1"), File("second.txt", "2")])
        try check(
            "pax size over the header's",
            T.archive(T.pax([("size", "5")]), T.header("sized.txt", size: 0), T.padded(Array("hello".utf8)), T.file("after.txt", "x")),
            [File("sized.txt", "hello"), File("after.txt", "x")])
        try check(
            "pax header of exactly 64 KiB", T.archive(T.paxRaw(T.record("comment", String(repeating: "c", count: 65_521))), T.file("a.txt", "a")),
            [File("a.txt", "a")])
        try check("global pax without path or size", T.archive(T.pax([("comment", "hi")], type: "g"), T.file("a.txt", "a")), [File("a.txt", "a")])
        try check(
            "GNU long name", T.archive(T.longName(String(repeating: "L", count: 200)), T.file("cut", "l")),
            [File(String(repeating: "L", count: 200), "l")])
        try check(
            "base-256 size 5", T.archive(T.header("b.txt", sizeField: [0x80] + T.zeros(10) + [5]), T.padded(Array("hello".utf8))),
            [File("b.txt", "hello")])
        try check(
            "base-256 size 513", T.archive(T.header("b.bin", sizeField: [0x80] + T.zeros(9) + [2, 1]), T.padded(T.zeros(513))),
            [File("b.bin", T.zeros(513))])
        var limits = BundleLimits()
        (limits.maximumEntries, limits.maximumTotalSize) = (2, 10)
        #expect(try Self.files(T.archive(T.file("a.txt", "123456"), T.file("b.txt", "7890")), limits: limits).count == 2, "at both limits")
    }

    @Test func theDataFunctionGivesNoMoreThanTheEntry() throws {
        var given: [[UInt8]] = []
        try TarReader().read(TarBytes(TarBuilder.archive(TarBuilder.file("a.txt", "hello")))) { (_, data) throws in
            given = try [data(100), data(1)]
        }
        #expect(given == [Array("hello".utf8), []])
    }

    @Test func aFileReadInPartIsRefused() throws {
        for count in [0, 3] {
            let error = try thrown(BundleError.self) {
                try TarReader().read(TarBytes(TarBuilder.archive(TarBuilder.file("a.txt", "hello")))) { (_, data) throws in
                    if count > 0 { _ = try data(count) }
                }
            }
            #expect(error == .malformed(source: "the tar", detail: "a.txt: its data was not read whole"))
        }
        let own = try thrown(ServerError.self) {
            try TarReader().read(TarBytes(TarBuilder.archive(TarBuilder.file("a.txt", "hello")))) { (_, _) throws in
                throw ServerError.conflict(detail: "the writer's own refusal")
            }
        }
        #expect(own == .conflict(detail: "the writer's own refusal"), "the file function's error passes through unchanged")
    }

    // MARK: Hostile archives

    struct Hostile: Sendable, CustomStringConvertible {
        var name: String
        var bytes: [UInt8]
        var detail: String
        var handed: [String]? = []
        var limits = BundleLimits()
        var description: String { name }
    }

    static let hostile: [Hostile] = {
        typealias T = TarBuilder
        var cases: [Hostile] = []
        func add(_ name: String, _ bytes: [UInt8], _ detail: String, handed: [String]? = [], limits: BundleLimits = BundleLimits()) {
            cases.append(Hostile(name: name, bytes: bytes, detail: detail, handed: handed, limits: limits))
        }
        func limits(entries: Int = 100_000, total: Int64 = 64 << 30, path: Int = 1024) -> BundleLimits {
            var limits = BundleLimits()
            (limits.maximumEntries, limits.maximumTotalSize, limits.maximumPathLength) = (entries, total, path)
            return limits
        }
        let file = T.file("a.txt", "hello")
        let hello = T.padded(Array("hello".utf8))
        var damaged = T.header("a.txt", size: 5)
        damaged[0] ^= 1
        let truncated = "it ends inside an entry (truncated)"
        add("empty input", [], "it ends inside a header block (truncated)")
        add("truncated header", file + Array(T.header("b.txt").prefix(100)), "it ends inside a header block (truncated)", handed: ["a.txt"])
        add("truncated data", T.header("a.txt", size: 1000) + T.zeros(600), truncated, handed: ["a.txt"])
        add("truncated padding", T.header("a.txt", size: 5) + Array("hello".utf8), truncated, handed: ["a.txt"])
        add("truncated pax header", T.header("x", type: "x", size: 100) + T.zeros(50), truncated)
        add("bad checksum", T.archive(damaged, hello), "a header's checksum is wrong")
        add("checksum not octal", T.archive(T.header("a.txt", checksum: Array("zzzzzz\u{0} ".utf8))), "a header's checksum is not an octal number")
        add("no checksum", T.archive(T.header("a.txt", checksum: T.zeros(8))), "a header's checksum is not an octal number")
        add("size not octal", T.archive(T.header("a.txt", sizeField: Array("00000000009\u{0}".utf8))), "a header's size is not an octal number")
        add("negative base-256 size", T.archive(T.header("a.txt", sizeField: [UInt8](repeating: 0xFF, count: 12))), "a header's size is negative")
        add("random bytes", TestBytes.random(count: 1024, seed: 18), "not a ustar, pax or GNU tar archive (a header has no ustar magic)")
        add("a zip", [0x50, 0x4B, 3, 4] + T.zeros(1020), "a header has no ustar magic")
        add("V7 tar without magic", T.archive(T.file("a.txt", "a", magic: T.zeros(8))), "a header has no ustar magic")
        add("hard link", T.archive(T.header("h", type: "1", linkName: "a.txt")), "h is a hard link; a resource holds regular files only")
        add("symbolic link", T.archive(T.header("s", type: "2", linkName: "/etc/passwd")), "s is a symbolic link; a resource holds regular files only")
        add("character device", T.archive(T.header("c", type: "3")), "c is a device or FIFO; a resource holds regular files only")
        add("block device", T.archive(T.header("b", type: "4")), "b is a device or FIFO")
        add("FIFO", T.archive(T.header("f", type: "6")), "f is a device or FIFO")
        add("GNU sparse file", T.archive(T.header("sp", type: "S")), "sp has the entry type S, which is not a regular file or folder")
        add("../x", T.archive(T.file("../x", "x")), "entry \"../x\": \"..\" path component")
        add("/etc/passwd", T.archive(T.file("/etc/passwd", "x")), "entry \"/etc/passwd\": absolute path")
        add(".signet/manifest.json", T.archive(T.file(".signet/manifest.json", "{}")), ".signet/ is reserved for Signet's own files")
        add("backslash", T.archive(T.file("a\\b", "x")), "backslash in path")
        add("control character", T.archive(T.file("a\u{1}b", "x")), "control character in path")
        add("empty component", T.archive(T.file("a//b", "x")), "empty path component")
        add("path over the limit", T.archive(T.file("abcdefghijk.txt", "x")), "path longer than 10 bytes", limits: limits(path: 10))
        add("unsafe folder", T.archive(T.header("../up/", type: "5")), "\"..\" path component")
        add("unsafe GNU long name", T.archive(T.longName("../" + String(repeating: "x", count: 120)), T.file("short.txt", "x")), "\"..\" path component")
        add("pax path over a safe name", T.archive(T.pax([("path", "../evil.txt")]), T.file("safe.txt", "x")), "entry \"../evil.txt\": \"..\" path component")
        // Collisions are found once every path is known: what was handed over before is not pinned.
        add("duplicate path", T.archive(T.file("a.txt", "1"), T.file("a.txt", "2")), "entry \"a.txt\": appears twice", handed: nil)
        add(
            "case-insensitive twins", T.archive(T.file("A.txt", "1"), T.file("a.txt", "2")), "entry \"a.txt\": differs from \"A.txt\" only in case",
            handed: nil)
        add("file and folder", T.archive(T.file("a", "1"), T.file("a/b", "2")), "entry \"a/b\": lies inside \"a\", which is a file", handed: nil)
        add("pax header over 64 KiB", T.archive(T.header("x", type: "x", size: 65_537)), "an extended header of 65537 bytes is over the limit")
        add(
            "GNU long name over 64 KiB", T.archive(T.header("././@LongLink", type: "L", size: 65_537, magic: T.gnu)),
            "an extended header of 65537 bytes is over the limit")
        for record in ["5 a=b\n", "path=x\n", "7 path\n", "99 path=x\n", "3 \n"] {
            add("pax record \(record.debugDescription)", T.archive(T.paxRaw(Array(record.utf8)), file), "a pax header is malformed")
        }
        add("pax path not UTF-8", T.archive(T.paxRaw(Array("9 path=".utf8) + [0xFF, 0x0A]), file), "a pax path is not UTF-8")
        add("negative pax size", T.archive(T.pax([("size", "-1")]), file), "a pax size of \"-1\"")
        add("pax size not a number", T.archive(T.pax([("size", "5k")]), file), "a pax size of \"5k\"")
        add("global pax path", T.archive(T.pax([("path", "x.txt")], type: "g"), file), "a global pax header sets a path or size")
        add("non-zero byte after the end", T.archive(file) + [1], "data follows the end of the archive", handed: ["a.txt"])
        add("entry after one zero block", T.archive(file, T.zeros(512), T.file("b.txt", "b")), "data follows the end of the archive", handed: ["a.txt"])
        add("more entries than the limit", T.archive(T.file("a", "1"), T.file("b", "2"), T.file("c", "3")), "more than 2 files",
            handed: ["a", "b"], limits: limits(entries: 2))
        add("total size over the limit", T.archive(T.file("a", "123456"), T.file("b", "12345")), "its files add up to more than 10 bytes",
            handed: ["a"], limits: limits(total: 10))
        return cases
    }()

    @Test(arguments: hostile)
    func hostileArchiveIsRefused(_ hostile: Hostile) throws {
        let detail = try Self.refusal(hostile.bytes, limits: hostile.limits, handed: hostile.handed)
        #expect(detail.contains(hostile.detail), "\(detail)")
    }

    /// An archive with a number that once trapped the reader (integer overflow, a negative
    /// `prefix` count) or was misread (a base-256 size of 2^63 + 5 read as 5); the fuzzer's
    /// finds, also replayed from Fuzz/regressions/tar/.
    struct HugeNumber: Sendable, CustomStringConvertible {
        var description: String
        var bytes: [UInt8]
    }

    static let hugeNumbers: [HugeNumber] = {
        typealias T = TarBuilder
        return [
            HugeNumber(description: "base-256 checksum", bytes: T.archive(T.header("a.txt", checksum: [0x80] + T.zeros(7)))),
            HugeNumber(description: "pax size Int64.max", bytes: T.archive(T.pax([("size", String(Int64.max))]), T.header("a.txt"))),
            HugeNumber(
                description: "base-256 size Int64.max on an extended header",
                bytes: T.archive(T.header("x", type: "x", sizeField: [0x80, 0, 0, 0, 0x7F] + [UInt8](repeating: 0xFF, count: 7)))),
            HugeNumber(
                description: "total size past Int64.max",
                bytes: T.archive(T.file("a.txt", String(repeating: "a", count: 600)), T.pax([("size", String(Int64.max - 511))]), T.header("b.txt"))),
            HugeNumber(
                description: "base-256 size 2^63 + 5",
                bytes: T.archive(T.header("a.txt", sizeField: [0x80, 0, 0, 0, 0x80] + T.zeros(6) + [5]), T.padded(Array("hello".utf8)))),
        ]
    }()

    @Test(arguments: hugeNumbers)
    func hugeNumbersAreRefused(_ huge: HugeNumber) throws {
        _ = try Self.refusal(huge.bytes, handed: nil)
    }
}
