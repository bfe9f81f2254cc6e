#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import SignetCore
import SignetTestSupport
import Testing

/// `AtomicFile.write`: permissions, refusing or replacing existing files, no temporary files
/// left behind, and errors that name the path.
@Suite struct AtomicFileTests {
    /// The permission bits of `path`, from stat(2).
    static func mode(_ path: String) throws -> mode_t {
        var info = stat()
        let result = stat(path, &info)
        try #require(result == 0, "stat \(path) failed")
        return info.st_mode & 0o7777
    }

    static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }

    @Test(
        "new files get exactly the asked permissions",
        arguments: [(AtomicFile.Permissions.privateToOwner, mode_t(0o600)), (AtomicFile.Permissions.standard, mode_t(0o644))])
    func permissions(permissions: AtomicFile.Permissions, expected: mode_t) throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.file("out.key")
        let content = Array("secret content\n".utf8)
        try AtomicFile.write(content, to: path, permissions: permissions, overwrite: false)
        #expect(try Self.mode(path) == expected)
        #expect(Self.isRegularFile(path))
        #expect(try folder.read("out.key") == content)
        #expect(try folder.contents() == ["out.key"], "no temporary file left behind")
    }

    @Test("an existing file is refused without overwrite, and left untouched")
    func refusesExisting() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let original = Array("original\n".utf8)
        let path = try folder.write("key.pem", original)
        #expect(AtomicFile.exists(path))

        let error = try KeyTestSupport.thrown {
            try AtomicFile.write(Array("replacement\n".utf8), to: path, permissions: .privateToOwner, overwrite: false)
        }
        #expect(error == .outputExists(path: path))
        KeyTestSupport.check(error, is: "outputExists", mentioning: path, "already exists")
        #expect(error.category == .usage)
        #expect(try folder.read("key.pem") == original)
        #expect(try folder.contents() == ["key.pem"], "the temporary file is removed after a refusal")
    }

    @Test("an existing file is replaced with overwrite, with the new permissions")
    func overwrites() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = try folder.write("key.pem", Array("original, a little longer than the new content\n".utf8))
        #expect(chmod(path, 0o644) == 0)
        let replacement = Array("new\n".utf8)
        try AtomicFile.write(replacement, to: path, permissions: .privateToOwner, overwrite: true)
        #expect(try folder.read("key.pem") == replacement)
        #expect(try Self.mode(path) == 0o600)
        #expect(try folder.contents() == ["key.pem"])
    }

    @Test("overwrite is also fine when nothing exists yet")
    func overwriteNew() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        try AtomicFile.write(Array("x".utf8), to: folder.file("new.sig"), permissions: .standard, overwrite: true)
        #expect(try folder.read("new.sig") == Array("x".utf8))
        #expect(try folder.contents() == ["new.sig"])
    }

    @Test("empty and large contents are written exactly", arguments: [0, 1, 65_537, 3 << 20])
    func sizes(count: Int) throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let content = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        try AtomicFile.write(content, to: folder.file("blob"), permissions: .standard, overwrite: false)
        #expect(try folder.read("blob") == content)
    }

    @Test("any collection of bytes can be written")
    func collections() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let bytes: [UInt8] = Array(0...255)
        try AtomicFile.write(bytes[10..<20], to: folder.file("slice"), permissions: .standard, overwrite: false)
        try AtomicFile.write(Data(bytes), to: folder.file("data"), permissions: .standard, overwrite: false)
        #expect(try folder.read("slice") == Array(bytes[10..<20]))
        #expect(try folder.read("data") == bytes)
    }

    @Test("writing into a missing folder fails with .io naming the path")
    func missingFolder() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.file("missing/deeper/out.pem")
        for overwrite in [false, true] {
            let error = try KeyTestSupport.thrown {
                try AtomicFile.write(Array("x".utf8), to: path, permissions: .privateToOwner, overwrite: overwrite)
            }
            #expect(error == .io(path: path, detail: "no such file or directory"))
            KeyTestSupport.check(error, is: "io", mentioning: path)
            #expect(error.category == .environment)
        }
        #expect(try folder.contents().isEmpty)
    }

    @Test("a folder where the file should go is not replaced")
    func folderInTheWay() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        try FileManager.default.createDirectory(atPath: folder.file("out"), withIntermediateDirectories: false)
        for overwrite in [false, true] {
            let error = try KeyTestSupport.thrown {
                try AtomicFile.write(Array("x".utf8), to: folder.file("out"), permissions: .standard, overwrite: overwrite)
            }
            let expected: SignetErrorCode<SignetCoreError> = overwrite ? "io" : "outputExists"
            #expect(error.code == expected, "overwrite: \(overwrite)")
            #expect(error.description.contains(folder.file("out")))
        }
        #expect(try folder.contents() == ["out"], "no temporary file left behind")
        var isDirectory: ObjCBool = false
        let stillThere = FileManager.default.fileExists(atPath: folder.file("out"), isDirectory: &isDirectory)
        #expect(stillThere && isDirectory.boolValue, "the folder is still a folder")
    }

    @Test("exists() sees files, folders and dangling symbolic links")
    func exists() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        #expect(!AtomicFile.exists(folder.file("nothing")))
        try folder.write("file", Array("x".utf8))
        #expect(AtomicFile.exists(folder.file("file")))
        #expect(AtomicFile.exists(folder.path))
        #expect(symlink(folder.file("nowhere"), folder.file("dangling")) == 0)
        #expect(AtomicFile.exists(folder.file("dangling")))
        // …and writing without overwrite refuses to follow it.
        let error = try KeyTestSupport.thrown {
            try AtomicFile.write(Array("x".utf8), to: folder.file("dangling"), permissions: .standard, overwrite: false)
        }
        #expect(error == .outputExists(path: folder.file("dangling")))
        #expect(!AtomicFile.exists(folder.file("nowhere")))
    }
}
