import Foundation
import SignetCore
import SignetTestSupport
import Testing
@testable import SignetBundle

@Suite struct BundleZipTests {
    private func writeZip(_ path: String, _ entries: [(String, [UInt8])]) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        #expect(fd >= 0)
        defer { close(fd) }
        var writer = ZipWriter(fd: fd, path: path)
        for (name, bytes) in entries { try writer.add(name: name, bytes: bytes) }
        try writer.finish()
    }

    @Test("what the writer makes, the reader reads back and python's zipfile agrees")
    func roundTrip() throws {
        let scratch = try TemporaryFolder()
        let path = scratch.file("t.zip")
        let entries: [(String, [UInt8])] = [("a.txt", Array("hello".utf8)), ("dir/ünï.bin", (0..<100_000).map { UInt8(truncatingIfNeeded: $0) }), ("empty", [])]
        try writeZip(path, entries)
        let reader = try ZipReader(path: path, limits: BundleLimits())
        #expect(reader.entries.map(\.name) == entries.map(\.0))
        for (entry, expected) in zip(reader.entries, entries) { #expect(try reader.read(entry, limit: 1 << 20) == expected.1) }

        let script = """
        import zipfile, sys, hashlib
        z = zipfile.ZipFile(sys.argv[1])
        assert z.testzip() is None
        print(";".join(i.filename + "=" + hashlib.sha256(z.read(i)).hexdigest() for i in z.infolist()))
        """
        let output = try python(script, path)
        let expected = entries.map { "\($0.0)=\(DigestAlgorithm.sha256.hash($0.1).hex)" }.joined(separator: ";")
        #expect(output == expected)
    }

    @Test("more than 65,534 entries use ZIP64 end records, read by us and by python")
    func zip64Count() throws {
        let scratch = try TemporaryFolder()
        let path = scratch.file("many.zip")
        let entries = (0..<70_000).map { ("f\($0)", [UInt8(truncatingIfNeeded: $0)]) }
        try writeZip(path, entries)
        let reader = try ZipReader(path: path, limits: BundleLimits())
        #expect(reader.entries.count == 70_000)
        #expect(reader.entries.last?.name == "f69999")
        #expect(try python("import zipfile,sys; z=zipfile.ZipFile(sys.argv[1]); print(len(z.infolist()), z.read('f69999')[0])", path) == "70000 \(69_999 & 0xFF)")
    }

    @Test("python-made zips: stored ones are read; deflated, symlink and directory entries are refused")
    func pythonZips() throws {
        let scratch = try TemporaryFolder()
        let path = scratch.file("p.zip")
        _ = try python("""
        import zipfile, sys
        with zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_STORED) as z:
            z.writestr('x/y.txt', b'content')
        """, path)
        #expect(try ZipReader(path: path, limits: BundleLimits()).entries.map(\.name) == ["x/y.txt"])

        let cases: [(String, String)] = [
            ("z.writestr(zipfile.ZipInfo('d.txt'), b'0' * 100000, compress_type=zipfile.ZIP_DEFLATED)", "compressed entry"),
            ("i = zipfile.ZipInfo('link'); i.create_system = 3; i.external_attr = 0o120777 << 16; z.writestr(i, 'target')", "symbolic link"),
            ("i = zipfile.ZipInfo('dev'); i.create_system = 3; i.external_attr = 0o020644 << 16; z.writestr(i, '')", "device"),
            ("z.writestr(zipfile.ZipInfo('folder/'), b'')", "directory entry"),
        ]
        for (statement, phrase) in cases {
            _ = try python("import zipfile, sys\nwith zipfile.ZipFile(sys.argv[1], 'w') as z:\n    \(statement)", path)
            let error = try BundleTest.thrown { try ZipReader(path: path, limits: BundleLimits()) }
            #expect(error.description.contains(phrase), "\(statement): \(error)")
            #expect(error.category == .malformedInput)
        }
    }

    @Test("damaged zips are refused with malformed input, never a crash")
    func damaged() throws {
        let scratch = try TemporaryFolder()
        let path = scratch.file("t.zip")
        try writeZip(path, [("a.txt", Array("hello world".utf8)), ("b.txt", Array(repeating: 7, count: 300))])
        let good = try scratch.read("t.zip")
        // Every truncation and garbage is refused as malformed input.
        var variants: [[UInt8]] = [[], Array("PK".utf8), Array(repeating: 0, count: 100)]
        variants += (0..<good.count).map { Array(good.prefix($0)) }
        variants.append(good + [0])
        for variant in variants {
            try Data(variant).write(to: URL(fileURLWithPath: path))
            let error = try BundleTest.thrown { try ZipReader(path: path, limits: BundleLimits()) }
            #expect(error.category == .malformedInput, "\(variant.count) bytes: \(error)")
        }
        // A flipped byte anywhere: refused as malformed, or (inside data or a CRC, which the
        // SHA-256 of the manifest catches) read back; never a crash.
        for index in 0..<good.count {
            var copy = good
            copy[index] ^= 0xFF
            try Data(copy).write(to: URL(fileURLWithPath: path))
            do {
                let reader = try ZipReader(path: path, limits: BundleLimits())
                for entry in reader.entries { _ = try reader.read(entry, limit: 1 << 20) }
            } catch {
                #expect((error as? BundleError)?.category == .malformedInput, "byte \(index): \(error)")
            }
        }
    }

    @Test("the local header must agree with the directory (size lie, other name)")
    func localHeaderLies() throws {
        let scratch = try TemporaryFolder()
        let path = scratch.file("t.zip")
        try writeZip(path, [("a.txt", Array("hello world".utf8)), ("b.txt", Array("second".utf8))])
        let good = try scratch.read("t.zip")
        var sizeLie = good
        sizeLie[22] = 200  // the first local header's uncompressed size
        try Data(sizeLie).write(to: URL(fileURLWithPath: path))
        #expect(try BundleTest.thrown { try ZipReader(path: path, limits: BundleLimits()) }.description.contains("size lie"))
        var renamed = good
        renamed[30] = UInt8(ascii: "z")  // the first local header's name
        try Data(renamed).write(to: URL(fileURLWithPath: path))
        #expect(try BundleTest.thrown { try ZipReader(path: path, limits: BundleLimits()) }.description.contains("different file"))
    }

    @Test("an entry count over the limit is refused before the directory is read")
    func entryLimit() throws {
        let scratch = try TemporaryFolder()
        let path = scratch.file("t.zip")
        try writeZip(path, (0..<20).map { ("f\($0)", [1]) })
        var limits = BundleLimits()
        limits.maximumEntries = 10
        #expect(try BundleTest.thrown { try ZipReader(path: path, limits: limits) }.description.contains("more than the limit"))
    }

    private func python(_ script: String, _ argument: String) throws -> String {
        try Python.runOK(script, [argument]).out.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
