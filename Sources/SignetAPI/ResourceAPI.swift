import HTTPTypes

/// The wire types of the resource and trust endpoints.
public enum ResourceAPI {
    /// `GET /v1/admin/resources`: every published version.
    public struct List: Codable, Sendable {
        public var items: [ResourceRecord]
        public init(items: [ResourceRecord]) { self.items = items }
    }

    /// `GET /v1/trust`: the trust roots after the version asked for, oldest first, each the
    /// text of its file (canonical JSON, `docs/formats/bundle.md`).
    public struct TrustChain: Codable, Sendable {
        public var roots: [String]
        public init(roots: [String]) { self.roots = roots }
    }

    /// `POST /v1/admin/trust`: the version of the trust root now in force.
    public struct TrustRotated: Codable, Sendable, Equatable {
        public var version: Int64
        public init(version: Int64) { self.version = version }
    }

    /// The media types a resource is published as and served in.
    public static let tarType = "application/x-tar"
    public static let bundleType = "application/zip"
    /// The field naming the version a resource answer carries.
    public static let versionField = HTTPField.Name("Signet-Resource-Version")!
}

/// A published version of a resource: a signed bundle kept by the server.
public struct ResourceRecord: Sendable, Equatable, Codable {
    public var name: String
    public var version: Int64
    /// The bundle's size in bytes and its SHA-256 (hex), which is also its entity tag.
    public var size: Int64
    public var sha256: String
    /// The SHA-256 of its manifest (hex).
    public var manifestSHA256: String
    /// When the manifest says it expires (Unix seconds), nil for never.
    public var expiresAt: Int64?
    /// `server` (built and signed by the server) or `offline` (uploaded signed).
    public var signedBy: String
    /// The admin who published it, and when (Unix seconds).
    public var publishedBy: String
    public var publishedAt: Int64

    public init(
        name: String, version: Int64, size: Int64, sha256: String, manifestSHA256: String, expiresAt: Int64?, signedBy: String,
        publishedBy: String, publishedAt: Int64
    ) {
        self.name = name
        self.version = version
        self.size = size
        self.sha256 = sha256
        self.manifestSHA256 = manifestSHA256
        self.expiresAt = expiresAt
        self.signedBy = signedBy
        self.publishedBy = publishedBy
        self.publishedAt = publishedAt
    }

    /// The strong entity tag: the bundle's digest, quoted.
    public var etag: String { "\"\(sha256)\"" }
}
