import Foundation
import SignetCore
import Testing
@testable import SignetBundle

/// The one-pass manifest reader must accept exactly the canonical bytes: whatever it accepts
/// re-serialises to itself, and everything else falls to the general reader.
@Suite("canonical manifest scanner")
struct CanonicalManifestScannerTests {
    static func manifest(paths: [String], expires: Date? = Date(timeIntervalSince1970: 1_900_000_000)) -> BundleManifest {
        BundleManifest(
            name: "app.v-1_2", version: 42, created: Date(timeIntervalSince1970: 1_700_000_000), expires: expires,
            files: paths.enumerated().map { BundleManifest.File(path: $0.element, size: Int64($0.offset * 1000), sha256: [UInt8](repeating: UInt8($0.offset), count: 32)) })
    }

    static let samples: [BundleManifest] = [
        manifest(paths: []),
        manifest(paths: ["a.txt"], expires: nil),
        manifest(paths: ["a \"quoted\" \\ name", "ctl\u{01}\u{1F}x", "del\u{7F}", "é/ü/日本", "z"]),
    ]

    @Test("canonical bytes are read in one pass, to the same manifest")
    func acceptsCanonical() throws {
        for sample in Self.samples {
            let bytes = sample.canonicalBytes
            var scanner = CanonicalManifestScanner(bytes)
            let scanned = scanner.scan(limits: BundleLimits())
            let fields = try #require(scanned, "\(String(decoding: bytes, as: UTF8.self))")
            #expect(fields.files.map(\.path) == sample.files.map(\.path))
            #expect(try BundleManifest(bytes: bytes, source: "m") == sample)
        }
    }

    @Test("of every single-byte change to a canonical manifest, the scanner accepts only what is itself canonical")
    func mutations() throws {
        var accepted = 0
        var declined = 0
        let replacements: [UInt8] = [0x20, 0x0A, 0x22, 0x5C, 0x30, 0x31, 0x39, 0x41, 0x46, 0x61, 0x66, 0x75, 0x2C, 0x7D, 0x5D, 0x2D, 0x2B, 0x6E, 0x00, 0xC3, 0xFF]
        for sample in Self.samples {
            let canonical = sample.canonicalBytes
            for position in canonical.indices {
                for replacement in replacements where replacement != canonical[position] {
                    var mutated = canonical
                    mutated[position] = replacement
                    var scanner = CanonicalManifestScanner(mutated)
                    guard scanner.scan(limits: BundleLimits()) != nil else {
                        declined += 1
                        continue
                    }
                    accepted += 1
                    // Accepted: it must be a manifest whose canonical form is exactly these bytes
                    // (or be refused for its meaning: a bad name, date or digest).
                    if let parsed = try? BundleManifest(bytes: mutated, source: "m") {
                        #expect(parsed.canonicalBytes == mutated, "position \(position) -> \(replacement)")
                    }
                }
            }
        }
        // Both outcomes occur: the test sees acceptance (changes inside strings, digits) and refusal.
        #expect(accepted > 100 && declined > 1000, "accepted \(accepted), declined \(declined)")
    }

    @Test("non-canonical spellings fall to the general reader and are refused as not canonical", arguments: [
        (#","version":42}"#, #", "version":42}"#),
        (#""version":42"#, #""version":042"#),
        (#"{"created""#, #"{ "created""#),
        ("\\u001f", "\\u001F"),
        ("\\\"quoted", "\\u0022quoted"),
    ])
    func nonCanonical(from: String, to: String) throws {
        let canonical = String(decoding: Self.samples[2].canonicalBytes, as: UTF8.self)
        #expect(canonical.contains(from), "the change does not apply")
        let text = canonical.replacingOccurrences(of: from, with: to)
        var scanner = CanonicalManifestScanner(Array(text.utf8))
        #expect(scanner.scan(limits: BundleLimits()) == nil)
        let error = try #require(throws: BundleError.self) { try BundleManifest(bytes: Array(text.utf8), source: "m") }
        #expect(error.code == "malformed", "\(error)")
    }
}
