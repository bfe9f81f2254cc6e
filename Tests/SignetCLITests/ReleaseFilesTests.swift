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

    /// Scripts/check-imports, which CI runs on this package, on a package made here: a target
    /// that imports another it does not name (even one reached through a dependency) is refused
    /// with the file and line; named, it passes. Imports inside a multi-line string (python a
    /// test runs) are not imports.
    @Test func anUndeclaredImportIsRefused() throws {
        let folder = try TemporaryFolder(prefix: "signet-imports")
        func manifest(_ cDependencies: String) -> String {
            """
            // swift-tools-version: 6.0
            import PackageDescription
            let package = Package(name: "Fixture", targets: [
                .target(name: "A"),
                .target(name: "B", dependencies: ["A"]),
                .target(name: "C", dependencies: [\(cDependencies)]),
            ])
            """
        }
        _ = try folder.write("Package.swift", manifest(#""B""#))
        for (target, source) in [
            ("A", "public let a = 1\n"),
            ("B", "import A\npublic let b = a\n"),
            ("C", "import B\n@preconcurrency import A\nimport Foundation\nlet script = \"\"\"\nimport hashlib\n\"\"\"\n"),
        ] {
            try FileManager.default.createDirectory(atPath: folder.file("Sources/\(target)"), withIntermediateDirectories: true)
            _ = try folder.write("Sources/\(target)/\(target).swift", source)
        }
        let script = Self.root.appendingPathComponent("Scripts/check-imports").path
        let refused = try ProcessRunner.run(script, [folder.path])
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.out == "Sources/C/C.swift:2: C imports A, which Package.swift does not declare for it\n", "\(refused)")
        _ = try folder.write("Package.swift", manifest(#""A", "B""#))
        let passed = try ProcessRunner.run(script, [folder.path])
        #expect(passed.status == 0, "\(passed)")
    }
}
