import SignetCore

/// Entry points for the libFuzzer targets (`SignetFuzzTargets`) into the bundle parsers that
/// are not API: the zip reader, the canonical-JSON parser and the signature list. Not API:
/// `package`, for the fuzz targets and their replay tests only.
package enum BundleFuzzing {
    /// One entry the zip reader accepted, with the bytes it reads for it.
    package struct ZipEntryContent: Sendable, Equatable {
        package let name: String
        package let size: UInt64
        package let dataOffset: UInt64
        package let content: [UInt8]
    }

    /// Opens the zip at `path` as bundles are opened, and reads every entry it accepts.
    package static func zipEntries(path: String, limits: BundleLimits = BundleLimits()) throws -> [ZipEntryContent] {
        let zip = try ZipReader(path: path, limits: limits)
        var entries: [ZipEntryContent] = []
        for entry in zip.entries {
            let content = try zip.read(entry, limit: Int(clamping: entry.size))
            entries.append(ZipEntryContent(name: entry.name, size: entry.size, dataOffset: entry.dataOffset, content: content))
        }
        return entries
    }

    /// The canonical bytes of a JSON text as manifests, signature lists and trust roots parse
    /// it; nil when the parser refuses the text.
    package static func canonicalJSON(_ bytes: [UInt8]) -> [UInt8]? {
        guard let value = try? CanonicalJSON.parse(bytes, source: "fuzz input") else { return nil }
        return value.bytes
    }

    /// Parses a `.signet/signatures.json` entry.
    package static func signatureList(_ bytes: [UInt8], limits: BundleLimits = BundleLimits()) throws -> [BundleSignature] {
        try SignatureList.parse(bytes, source: "fuzz input", limits: limits)
    }

    /// The bytes of a `.signet/signatures.json` entry, as bundles are written.
    package static func signatureListBytes(_ signatures: [BundleSignature]) -> [UInt8] {
        SignatureList.bytes(signatures)
    }
}
