import Foundation
import SignetCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Verifies a bundle and writes its files into a folder: everything goes to a temporary folder
/// beside the destination, each file is checked against the manifest as it is written, and
/// only a complete, verified tree is renamed into place. The destination is never half
/// written, and on any failure it is left as it was.
public struct BundleExtractor: Sendable {
    /// What the bundle must pass (trust root, limits, expected name, expiry) before anything is
    /// put in place.
    public var verifier: BundleVerifier

    /// An extractor that writes only bundles `verifier` accepts.
    public init(verifier: BundleVerifier) {
        self.verifier = verifier
    }

    /// Extracts the bundle at `path` into `destination`, which must not exist, be an empty
    /// folder, or hold an earlier extraction (it is then replaced). Records the version in
    /// `state` after the new tree is in place.
    ///
    /// An earlier extraction is a floor of its own, whatever `state` says (a fresh or another
    /// state folder must not let DEST be downgraded): the bundle must have its name, and must
    /// not be older, nor the same version with another manifest
    /// (``BundleRelease/requireNoRollback(from:floor:)``). The same release again repairs a
    /// damaged tree.
    public func extract(path: String, to destination: String, state: BundleState, progress: BundleVerifier.Progress? = nil) async throws -> VerifiedBundle {
        let destination = destination.count > 1 && destination.hasSuffix("/") ? String(destination.dropLast()) : destination
        let parent = AtomicFile.parentFolder(of: destination)
        let base = destination.split(separator: "/").last.map(String.init) ?? destination
        guard base != ".", base != "..", !base.isEmpty else {
            throw BundleError.invalidArgument(detail: "\(destination): name the folder to extract into")
        }
        guard BundleFiles.lstatMode(parent) == S_IFDIR else { throw BundleError.io(path: parent, detail: "is not an existing folder") }
        let replacing = try Self.checkDestination(destination)

        return try await state.locked {
            let opened = try verifier.open(path)
            let release = opened.verified.release
            if replacing, let installed = try Self.installedRelease(destination, limits: verifier.limits) {
                try release.requireNoRollback(from: installed, floor: "installed in \(destination)")
            }
            try state.requireNoRollback(release)
            // Made and registered in one step, removed on a signal too (the CLI's SignalCleanup),
            // not only when this returns.
            let (temporary, registration) = try TemporaryFiles.uninterrupted { () throws -> (String, Int) in
                var template = Array("\(parent)/.\(base).signet-XXXXXX".utf8CString)
                guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else { throw BundleFiles.error(parent) }
                let temporary = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                return (temporary, TemporaryFiles.register(temporary, isFolder: true))
            }
            var placed = false
            defer {
                if !placed { BundleFiles.removeTree(temporary) }
                TemporaryFiles.unregister(registration)
            }
            chmod(temporary, 0o755)

            let manifestDigest = Hex.encode(opened.verified.manifestDigest)
            try await opened.hashAll(progress: progress) { (file) throws in
                try FileWriterSink(folder: temporary, file: file, manifestDigest: manifestDigest)
            }
            try TemporaryFiles.uninterrupted { () throws in try BundleFiles.makeFolders(temporary + "/" + BundlePath.reservedFolder) }
            try Self.writeSmall(opened.manifestBytes, to: temporary + "/" + BundleLayout.manifestEntry)
            try Self.writeSmall(SignatureList.bytes(opened.signatures), to: temporary + "/" + BundleLayout.signaturesEntry)
            AtomicFile.syncFolder(temporary + "/" + BundlePath.reservedFolder)
            AtomicFile.syncFolder(temporary)

            try Self.swap(temporary, into: destination, replacing: replacing, parent: parent, base: base)
            placed = true
            try state.record(opened.manifest, manifestDigest: opened.verified.manifestDigest, at: verifier.now)
            return opened.verified
        }
    }

    /// Whether `destination` exists (and may be replaced); refuses anything that is not an
    /// empty folder or an earlier extraction.
    static func checkDestination(_ destination: String) throws -> Bool {
        switch BundleFiles.lstatMode(destination) {
        case nil: return false
        case S_IFDIR?:
            if BundleFiles.lstatMode(destination + "/" + BundleLayout.manifestEntry) == S_IFREG { return true }
            guard let handle = opendir(destination) else { throw BundleFiles.error(destination) }
            defer { closedir(handle) }
            while let entry = readdir(handle) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                if name != "." && name != ".." {
                    throw BundleError.invalidArgument(
                        detail: "\(destination): exists and is not a folder extracted by signet bundle (no \(BundleLayout.manifestEntry)); it is left alone — choose another destination")
                }
            }
            return true
        default:
            throw BundleError.invalidArgument(detail: "\(destination): exists and is not a folder")
        }
    }

    /// The release an earlier extraction in `destination` holds, from its `.signet/manifest.json`;
    /// nil for a missing or empty folder.
    static func installedRelease(_ destination: String, limits: BundleLimits) throws -> BundleRelease? {
        let path = destination + "/" + BundleLayout.manifestEntry
        guard BundleFiles.lstatMode(path) == S_IFREG else { return nil }
        let bytes = try BundleFiles.read(path, limit: limits.maximumManifestSize)
        let manifest = try BundleManifest(bytes: bytes, source: path, limits: limits)
        return BundleRelease(manifest, manifestBytes: bytes)
    }

    /// Renames the new tree into place; an old one is moved aside first and removed after. A
    /// signal's cleanup never runs between the two renames (``TemporaryFiles/uninterrupted(_:)``):
    /// the destination is the old tree or the new one.
    /// The old tree, once aside, is registered with ``TemporaryFiles`` until it is removed, so a
    /// signal during its removal does not leave it behind.
    private static func swap(_ temporary: String, into destination: String, replacing: Bool, parent: String, base: String) throws {
        let old = try TemporaryFiles.uninterrupted { () throws -> (path: String, registration: Int)? in
            guard let old = try swapNow(temporary, into: destination, replacing: replacing, parent: parent, base: base) else { return nil }
            return (old, TemporaryFiles.register(old, isFolder: true))
        }
        if let old {
            BundleFiles.removeTree(old.path)
            TemporaryFiles.unregister(old.registration)
        }
    }

    /// The renames; returns the old tree set aside, if there was one.
    private static func swapNow(_ temporary: String, into destination: String, replacing: Bool, parent: String, base: String) throws -> String? {
        guard replacing else {
            guard rename(temporary, destination) == 0 else { throw BundleFiles.error(destination) }
            AtomicFile.syncFolder(parent)
            return nil
        }
        var template = Array("\(parent)/.\(base).signet-old-XXXXXX".utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else { throw BundleFiles.error(parent) }
        let old = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard rename(destination, old) == 0 else {
            let code = errno
            rmdir(old)
            throw BundleFiles.error(destination, code)
        }
        guard rename(temporary, destination) == 0 else {
            let code = errno
            rename(old, destination)
            throw BundleFiles.error(destination, code)
        }
        AtomicFile.syncFolder(parent)
        return old
    }

    private static func writeSmall(_ bytes: [UInt8], to path: String) throws {
        let fd = TemporaryFiles.uninterrupted { open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644) }
        guard fd >= 0 else { throw BundleFiles.error(path) }
        defer { close(fd) }
        try BundleFiles.writeAll(fd, bytes, path: path)
        guard fsync(fd) == 0 else { throw BundleFiles.error(path) }
    }
}

/// Writes one extracted file; created exclusively (never through a link), synced, and given
/// its `user.signet.*` attributes once its digest matched.
private final class FileWriterSink: EntrySink {
    let path: String
    let fd: Int32
    /// Starts the disk writeback as the file is written, so that its `fsync` waits for the tail.
    var pacer: WritebackPacer
    let file: BundleManifest.File
    let manifestDigest: String

    init(folder: String, file: BundleManifest.File, manifestDigest: String) throws {
        path = folder + "/" + file.path
        self.file = file
        self.manifestDigest = manifestDigest
        // Made in one step that a signal's cleanup never splits: a file it has not seen is never
        // created in the staging folder it removes.
        let path = path
        fd = try TemporaryFiles.uninterrupted { () throws -> Int32 in
            try BundleFiles.makeFolders(AtomicFile.parentFolder(of: path))
            return open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        }
        guard fd >= 0 else { throw BundleFiles.error(path) }
        pacer = WritebackPacer(fileDescriptor: fd)
    }

    deinit { close(fd) }

    func write(_ chunk: UnsafeRawBufferPointer) throws {
        try BundleFiles.writeAll(fd, chunk, path: path)
        pacer.appended(chunk.count)
    }

    func finish() throws {
        guard fsync(fd) == 0 else { throw BundleFiles.error(path) }
        if try ExtendedAttributes.set(ExtendedAttributes.fileDigest, Hex.encode(file.sha256), on: path) {
            try ExtendedAttributes.set(ExtendedAttributes.manifestDigest, manifestDigest, on: path)
        }
    }
}
