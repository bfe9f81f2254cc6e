/// One release of a bundle as rollback protection sees it: its name, version and the SHA-256
/// of its exact manifest bytes.
public struct BundleRelease: Sendable, Equatable {
    public let name: String
    public let version: Int64
    public let manifestDigest: [UInt8]

    public init(name: String, version: Int64, manifestDigest: [UInt8]) {
        self.name = name
        self.version = version
        self.manifestDigest = manifestDigest
    }

    /// The rollback rule, as TUF states it: a version lower than `floor`'s is a rollback; the
    /// *same* version is accepted only when its manifest is byte-identical (re-verifying or
    /// repairing the same release), never for other content; a name other than `floor`'s is
    /// another product and is refused. `floor` says where the floor comes from, for messages.
    public func requireNoRollback(from accepted: BundleRelease, floor: String) throws(BundleError) {
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
