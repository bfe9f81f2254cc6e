import Foundation
import SignetTestSupport
import Testing

/// What a release carries beside the code: the licence, and a changelog whose newest entry is
/// the version `signet --version` prints.
@Suite struct ReleaseFilesTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func theChangelogsNewestEntryIsTheVersionPrinted() throws {
        let folder = try TemporaryFolder(prefix: "signet-version")
        let result = try SignetBinary.run(["--version"], in: folder.url)
        #expect(result.status == 0, "\(result)")
        let printed = result.out.trimmingCharacters(in: .whitespacesAndNewlines)
        let changelog = try String(contentsOf: Self.root.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        let newest = try #require(changelog.split(separator: "\n").first { $0.hasPrefix("## ") })
        #expect(newest.hasPrefix("## \(printed) "), "CHANGELOG.md's newest entry is \"\(newest)\", signet --version prints \(printed)")
        #expect(printed.split(separator: ".").count == 3 && printed.split(separator: ".").allSatisfy { Int($0) != nil })
    }

    @Test func theLicenceIsApache2() throws {
        let licence = try String(contentsOf: Self.root.appendingPathComponent("LICENSE"), encoding: .utf8)
        #expect(licence.contains("Apache License") && licence.contains("Version 2.0, January 2004"))
        #expect(licence.contains("END OF TERMS AND CONDITIONS"))
    }
}
