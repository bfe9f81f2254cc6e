import SignetCore

/// Entry points for the libFuzzer targets (`SignetFuzzTargets`) into the bundle parsers that
/// are not API: the zip reader, the canonical-JSON parser and the signature list. Not API:
/// `@_spi(Fuzzing)`, for the fuzz targets and their replay tests only.
@_spi(Fuzzing) public enum BundleFuzzing {
    /// One entry the zip reader accepted, with the bytes it reads for it.
    public struct ZipEntryContent: Sendable, Equatable {
        public let name: String
        public let size: UInt64
        public let dataOffset: UInt64
        public let content: [UInt8]
    }

    /// Opens the zip at `path` as bundles are opened, and reads every entry it accepts.
    public static func zipEntries(path: String, limits: BundleLimits = BundleLimits()) throws(BundleError) -> [ZipEntryContent] {
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
    public static func canonicalJSON(_ bytes: [UInt8]) -> [UInt8]? {
        guard let value = try? CanonicalJSON.parse(bytes, source: "fuzz input") else { return nil }
        return value.bytes
    }

    /// Parses a `.signet/signatures.json` entry.
    public static func signatureList(_ bytes: [UInt8], limits: BundleLimits = BundleLimits()) throws(BundleError) -> [BundleSignature] {
        try SignatureList.parse(bytes, source: "fuzz input", limits: limits)
    }

    /// The bytes of a `.signet/signatures.json` entry, as bundles are written.
    public static func signatureListBytes(_ signatures: [BundleSignature]) -> [UInt8] {
        SignatureList.bytes(signatures)
    }
}
