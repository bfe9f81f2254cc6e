import Foundation
import SignetCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The last accepted version of each bundle name, kept durably in a folder: one small JSON
/// file per name, replaced atomically, behind a lock so two verifiers cannot both accept.
public struct BundleState: Sendable {
    /// The folder; created (mode 0700) when missing.
    public let folder: String

    /// The state kept in `folder`; nothing is read or created until it is used.
    public init(folder: String) {
        self.folder = folder
    }

    private func file(_ name: String) -> String { folder + "/" + name + ".json" }

    /// The last release accepted under `name`, or nil.
    public func accepted(of name: String) throws -> BundleRelease? {
        let path = file(name)
        guard BundleFiles.lstatMode(path) != nil else { return nil }
        let reader = try JSONObjectReader(
            CanonicalJSON.parse(try BundleFiles.read(path, limit: 4096), source: path), source: path, context: "the state",
            allowed: ["name", "version", "manifest-sha256", "accepted"])
        guard try reader.string("name") == name else { throw BundleError.malformed(source: path, detail: "holds the state of another name") }
        let version = try reader.integer("version", in: 1...Int64(1 << 53))
        let hex = try reader.string("manifest-sha256")
        guard hex.utf8.count == 64, let digest = Hex.decodeLowercase(hex) else {
            throw BundleError.malformed(source: path, detail: "manifest-sha256 must be 64 lowercase hex digits")
        }
        return BundleRelease(name: name, version: version, manifestDigest: digest)
    }

    /// The last version accepted under `name`, or nil.
    public func acceptedVersion(of name: String) throws -> Int64? {
        try accepted(of: name)?.version
    }

    /// Records that `manifest` was accepted.
    func record(_ manifest: BundleManifest, manifestDigest: [UInt8], at date: Date) throws {
        let bytes = CanonicalJSON.object([
            "name": .string(manifest.name), "version": .integer(manifest.version),
            "manifest-sha256": .string(Hex.encode(manifestDigest)), "accepted": .string(BundleDate.format(date)),
        ]).bytes + [0x0A]
        do {
            try AtomicFile.write(bytes, to: file(manifest.name), permissions: .standard, overwrite: true)
        } catch {
            throw BundleError(writing: error, to: file(manifest.name))
        }
    }

    /// Refuses `release` when it would roll back what this state accepted (``BundleRelease/requireNoRollback(from:floor:)``).
    func requireNoRollback(_ release: BundleRelease) throws {
        if let accepted = try accepted(of: release.name) {
            try release.requireNoRollback(from: accepted, floor: "already accepted (state folder \(folder))")
        }
    }

    /// Runs `body` holding the folder's lock (`flock` on `.lock`).
    func locked<R>(_ body: () async throws -> R) async throws -> R {
        try BundleFiles.makeFolders(folder, lastMode: 0o700)
        let fd = open(folder + "/.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw BundleFiles.error(folder + "/.lock") }
        defer { close(fd) }
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else { throw BundleFiles.error(folder + "/.lock") }
        }
        return try await body()
    }
}
