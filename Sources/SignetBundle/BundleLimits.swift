/// Bounds on what a bundle may hold, checked before anything is read into memory or written.
public struct BundleLimits: Sendable, Equatable {
    /// Files in one bundle.
    public var maximumEntries: Int = 100_000
    /// Sum of the files' sizes (64 GiB).
    public var maximumTotalSize: Int64 = 64 << 30
    /// Bytes of a path inside the bundle.
    public var maximumPathLength: Int = 1024
    /// Bytes of the manifest (about 150 bytes a file).
    public var maximumManifestSize: Int = 32 << 20
    /// Bytes of the signatures entry and of a trust file.
    public var maximumSignaturesSize: Int = 1 << 20
    /// Signatures on one manifest, keys in one trust root.
    public var maximumSignatures: Int = 64
    /// The most an entry may expand when decompressed (deflate's own ceiling is about 1032).
    /// Signet writes stored entries, ratio 1; compressed ones are refused (see docs).
    public var maximumCompressionRatio: Int = 1

    /// The default bounds, as listed on each property.
    public init() {}
}
