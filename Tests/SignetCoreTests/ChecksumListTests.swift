import Foundation
import SignetCore
import SignetTestSupport
import Testing

/// `ChecksumList`: what `sha256sum --check` reads, in the library.
@Suite("ChecksumList: parsing and checking")
struct ChecksumListTests {
    static let helloSHA256 = "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"  // "hello\n"

    @Test("GNU and BSD-tagged lines, comments and blank lines; improper lines counted; algorithms inferred, chosen or tagged")
    func parse() throws {
        let sha512 = String(repeating: "ab", count: 64)
        let text = """
            # a comment
            \(Self.helloSHA256)  a.txt

            SHA512 (b.txt) = \(sha512)
            not a checksum line
            \(sha512) *c.bin
            """
        let list = try ChecksumList(bytes: Array(text.utf8), source: "SUMS")
        #expect(list.entries.map(\.line.path) == ["a.txt", "b.txt", "c.bin"])
        #expect(list.entries.map(\.algorithm) == [.sha256, .sha512, .sha512])
        #expect(list.entries.map(\.lineNumber) == [2, 4, 6])
        #expect(list.improperLines == [5])
        // A chosen algorithm: lines of another length become improper; tags still win.
        let chosen = try ChecksumList(bytes: Array(text.utf8), source: "SUMS", algorithm: .sha256)
        #expect(chosen.entries.map(\.line.path) == ["a.txt", "b.txt"])
        #expect(chosen.improperLines == [5, 6])
    }

    @Test("MD5 and SHA-1 lines need the opt-in; a list with no checksum line is refused")
    func refusals() throws {
        let md5 = "b1946ac92492d2347c6235b4d2611184  a.txt\n"
        #expect(throws: SignetCoreError.insecureAlgorithm(source: "SUMS: line 1", algorithm: "md5")) {
            try ChecksumList(bytes: Array(md5.utf8), source: "SUMS")
        }
        #expect(try ChecksumList(bytes: Array(md5.utf8), source: "SUMS", allowInsecure: true).entries.first?.algorithm == .md5)
        #expect(throws: SignetCoreError.malformed(source: "SUMS", detail: "no properly formatted checksum lines found")) {
            try ChecksumList(bytes: Array("# only a comment\n\nnot one\n".utf8), source: "SUMS")
        }
    }

    @Test("check: ok, mismatch and unreadable, in list order; missing files skipped on request")
    func check() async throws {
        let scratch = try TemporaryFolder()
        let folder = scratch.path
        try scratch.write("good", "hello\n")
        try scratch.write("bad", "tampered\n")
        let text = ["good", "bad", "missing"].map { "\(Self.helloSHA256)  \(folder)/\($0)" }.joined(separator: "\n")
        let list = try ChecksumList(bytes: Array(text.utf8), source: "SUMS")
        var outcomes: [(String, ChecksumList.Outcome)] = []
        let checked = await list.check { entry, outcome in outcomes.append((entry.line.path, outcome)) }
        #expect(checked.count == 3)
        #expect(outcomes.map(\.0) == ["good", "bad", "missing"].map { folder + "/" + $0 })
        #expect(outcomes[0].1 == .ok)
        #expect(outcomes[1].1 == .mismatch)
        guard case .unreadable(let error) = outcomes[2].1 else { Issue.record("\(outcomes[2].1)"); return }
        #expect(error.code == "io")
        var skipping: [String] = []
        #expect(await list.check(skipMissing: true) { entry, _ in skipping.append(entry.line.path) }.count == 2)
        #expect(skipping == ["good", "bad"].map { folder + "/" + $0 })
    }
}
