import Foundation
import SignetTestSupport
import Testing

/// `Vectors/verify_vectors.py` (which the README cites) checks every vector file in Vectors/
/// with python's `cryptography`, independently of SignetHTTP. Running it here makes a vector
/// that no longer holds (or a script that no longer runs) fail the suite.
@Suite("the vector files pass verify_vectors.py")
struct VectorScriptTests {
    /// The script in the source tree, next to this file.
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Vectors/verify_vectors.py")

    /// The examples the script reports, each with its own OK line.
    static let examples = [
        "B.2.1", "B.2.2", "B.2.3", "B.2.4", "B.2.5", "B.2.6", "B.3", "B.4", "2.5+3.2", "4.3-sig1", "4.3-proxy_sig", "2.4-reqres",
    ]

    @Test("python3 verify_vectors.py exits 0 and reports every check passed")
    func verifyVectorsScript() throws {
        try #require(FileManager.default.fileExists(atPath: Self.script.path), "\(Self.script.path) is missing")
        let result = try Python.runScript(Self.script, in: Self.script.deletingLastPathComponent())
        // The script reports on standard output; standard error only carries python's own complaints.
        let text = result.out

        #expect(result.status == 0, "verify_vectors.py failed (Scripts/test installs python3 and cryptography):\n\(result)")
        #expect(!(text + result.stderr).contains("FAIL"), "\(result)")
        let lines = text.split(separator: "\n").map(String.init)
        // The last line is the summary: "checks passed: N, failed: 0".
        let summary = try #require(lines.last, "no output")
        let prefix = "checks passed: "
        let suffix = ", failed: 0"
        try #require(summary.hasPrefix(prefix) && summary.hasSuffix(suffix), "summary line: \(summary)\n\(text)")
        let passed = try #require(Int(summary.dropFirst(prefix.count).dropLast(suffix.count)), "summary line: \(summary)")
        #expect(passed >= 253, "fewer checks than the vector files held when this test was written: \(summary)")
        for example in Self.examples {
            #expect(lines.contains { $0.hasPrefix("  \(example) ") && $0.hasSuffix(" OK") }, "no OK line for \(example):\n\(text)")
        }
        #expect(lines.contains("RFC 9421 component lines checked: 40"), "\(text)")
        #expect(lines.contains("RFC 9530 digests checked: 25 (+ multi-member field values)"), "\(text)")
    }
}
