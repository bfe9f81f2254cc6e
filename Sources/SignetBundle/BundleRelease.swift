import SignetCore

/// One release of a bundle as rollback protection sees it: its name, version and the SHA-256
/// of its exact manifest bytes.
public struct BundleRelease: Sendable, Equatable {
    /// The bundle's name.
    public let name: String
    /// The release number.
    public let version: Int64
    /// SHA-256 of the exact manifest bytes: what tells two releases of the same version apart.
    public let manifestDigest: [UInt8]

    /// Release `version` of `name`, whose manifest bytes have the SHA-256 `manifestDigest`.
    public init(name: String, version: Int64, manifestDigest: [UInt8]) {
        self.name = name
        self.version = version
        self.manifestDigest = manifestDigest
    }

    /// The release `manifest` describes, whose exact stored bytes are `manifestBytes`.
    public init(_ manifest: BundleManifest, manifestBytes: [UInt8]) {
        self.init(name: manifest.name, version: manifest.version, manifestDigest: DigestAlgorithm.sha256.hash(manifestBytes).bytes)
    }

    /// The rollback rule, as TUF states it: a version lower than `floor`'s is a rollback; the
    /// *same* version is accepted only when its manifest is byte-identical (re-verifying or
    /// repairing the same release), never for other content; a name other than `floor`'s is
    /// another product and is refused. `floor` says where the floor comes from, for messages.
    public func requireNoRollback(from accepted: BundleRelease, floor: String) throws {
        guard name == accepted.name else {
            throw BundleError.wrongName(expected: accepted.name, found: name, reason: floor)
        }
        if version < accepted.version {
            throw BundleError.rollback(name: name, version: Int(version), accepted: Int(accepted.version), floor: floor)
        }
        if version == accepted.version, manifestDigest != accepted.manifestDigest {
            throw BundleError.versionReused(name: name, version: Int(version), floor: floor)
        }
    }
}
