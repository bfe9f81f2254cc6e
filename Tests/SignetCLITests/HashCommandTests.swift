import Foundation
import SignetTestSupport
import Testing

@Suite("signet hash")
struct HashCommandTests {
    @Test("prints the same lines as sha256sum, sha384sum and sha512sum", arguments: ["sha256", "sha384", "sha512"])
    func matchesCoreutils(algorithm: String) throws {
        let box = try Sandbox()
        try box.write("a.txt", "hello\n")
        try box.write("b.bin", Data((0..<5000).map { UInt8($0 % 251) }))
        try box.write("with space.txt", "")
        let ours = try box.signet("hash", "-a", algorithm, "a.txt", "b.bin", "with space.txt")
        let theirs = try box.must("\(algorithm)sum", "a.txt", "b.bin", "with space.txt")
        #expect(ours.status == 0, "\(ours)")
        #expect(ours.out == theirs.out)
    }

    @Test("reads standard input and escapes names like sha256sum")
    func stdinAndEscaping() throws {
        let box = try Sandbox()
        let stdin = try box.signet("hash", stdin: Data("abc".utf8))
        #expect(stdin.out == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad  -\n")
        try box.write("odd\\name", "x")
        let ours = try box.signet("hash", "odd\\name")
        let theirs = try box.must("sha256sum", "odd\\name")
        #expect(ours.out == theirs.out)
        #expect(ours.out.hasPrefix("\\"))
    }

    @Test("--tag prints BSD lines like sha256sum --tag")
    func tagged() throws {
        let box = try Sandbox()
        try box.write("a.txt", "hello\n")
        #expect(try box.signet("hash", "--tag", "a.txt").out == (try box.must("sha256sum", "--tag", "a.txt").out))
    }

    @Test("--check reads lists written by sha256sum and reports each file")
    func checkList() throws {
        let box = try Sandbox()
        try box.write("a.txt", "one\n")
        try box.write("b.txt", "two\n")
        try box.write("list", try box.must("sha256sum", "a.txt", "b.txt").out + (try box.must("sha512sum", "--tag", "a.txt").out))
        let good = try box.signet("hash", "--check", "list")
        #expect(good.status == 0, "\(good)")
        #expect(good.out == "a.txt: OK\nb.txt: OK\na.txt: OK\n")

        try box.write("b.txt", "changed\n")
        let bad = try box.signet("hash", "-c", "list")
        #expect(bad.status == 1)
        #expect(bad.out == "a.txt: OK\nb.txt: FAILED\na.txt: OK\n")
        #expect(bad.stderr.contains("1 computed checksum did NOT match"))
        // sha256sum agrees on what failed.
        #expect(try box.tool("sha256sum", "--check", "list").status == 1)

        let quiet = try box.signet("hash", "--check", "--quiet", "list")
        #expect(quiet.out == "b.txt: FAILED\n")
    }

    @Test("--check reports missing files and improper lines; exits 3 when nothing is readable")
    func checkNegatives() throws {
        let box = try Sandbox()
        try box.write("a.txt", "one\n")
        let hash = try box.must("sha256sum", "a.txt").out
        try box.write("list", hash + "this is not a checksum line\n" + hash.replacingOccurrences(of: "a.txt", with: "gone.txt"))
        let result = try box.signet("hash", "--check", "list")
        #expect(result.status == 1)
        #expect(result.out.contains("gone.txt: FAILED open or read"))
        #expect(result.stderr.contains("gone.txt: no such file or directory"))
        #expect(result.stderr.contains("1 line is improperly formatted"))

        let ignoring = try box.signet("hash", "--check", "--ignore-missing", "list")
        #expect(ignoring.status == 0, "\(ignoring)")

        let strict = try box.signet("hash", "--check", "--strict", "list")
        #expect(strict.status == 3)

        try box.write("garbage", "no checksums here\n")
        let garbage = try box.signet("hash", "--check", "garbage")
        #expect(garbage.status == 3)
        #expect(garbage.stderr.contains("garbage: no properly formatted checksum lines found"))

        try box.write("md5list", try box.must("md5sum", "a.txt").out)
        let insecure = try box.signet("hash", "--check", "md5list")
        #expect(insecure.status == 2)
        #expect(insecure.stderr.contains("--insecure"))
        #expect(try box.signet("hash", "--check", "--insecure", "md5list").status == 0)
    }

    @Test("MD5 and SHA-1 only with --insecure")
    func insecureDigests() throws {
        let box = try Sandbox()
        try box.write("a.txt", "hello\n")
        let refused = try box.signet("hash", "-a", "md5", "a.txt")
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("md5 is broken"))
        #expect(try box.signet("hash", "-a", "md5", "--insecure", "a.txt").out == (try box.must("md5sum", "a.txt").out))
        #expect(try box.signet("hash", "-a", "sha1", "--insecure", "a.txt").out == (try box.must("sha1sum", "a.txt").out))
    }

    @Test("bad inputs give precise errors and the contract's exit codes")
    func negatives() throws {
        let box = try Sandbox()
        try FileManager.default.createDirectory(atPath: box.path("folder"), withIntermediateDirectories: true)
        try box.write("a.txt", "x")
        let missing = try box.signet("hash", "missing.txt", "a.txt")
        #expect(missing.status == 4)
        #expect(missing.stderr.contains("missing.txt: no such file or directory"))
        #expect(missing.out.hasSuffix("  a.txt\n"), "the other files are still hashed")

        let folder = try box.signet("hash", "folder")
        #expect(folder.status == 4)
        #expect(folder.stderr.contains("folder: is a directory"))

        let unknown = try box.signet("hash", "-a", "sha3", "a.txt")
        #expect(unknown.status == 2)
        #expect(unknown.stderr.contains("The value 'sha3' is invalid for '-a <ALG>'"))

        let badFlag = try box.signet("hash", "--frobnicate")
        #expect(badFlag.status == 2)
    }

    @Test("hashes many files in parallel, in order")
    func manyFiles() throws {
        let box = try Sandbox()
        var names: [String] = []
        for index in 0..<40 {
            let name = "f\(index)"
            try box.write(name, Data(repeating: UInt8(index), count: 10_000 * (index % 7 + 1)))
            names.append(name)
        }
        let ours = try box.signet(arguments: ["hash"] + names)
        let theirs = try box.run(try #require(ProcessRunner.which("sha256sum")), names, stdin: nil)
        #expect(ours.out == theirs.out)
    }
}
