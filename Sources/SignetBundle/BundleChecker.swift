import Foundation
import SignetCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Re-verifies an extracted folder at rest under a ``BundleVerifier``'s rules: the manifest
/// kept in `DEST/.signet/` must still carry a threshold of valid signatures under the current
/// trust root, have the expected name (when the verifier's ``BundleVerifier/expectedName`` is
/// set), not have expired at its ``BundleVerifier/now``, and not be a rollback against a
/// ``BundleState`` (when one is given) — a tree put back to an older signed release is refused
/// like a bundle would be. Every listed path must follow the extraction rules
/// (``BundlePath``: nothing is ever read outside the folder), and every file must be there,
/// regular, inside real folders, with the listed size and SHA-256 (and matching
/// `user.signet.sha256` attribute where there is one), with no file added.
public struct BundleChecker: Sendable {
    /// The rules: the trust root the kept manifest's signatures are checked against now (it may
    /// have been rotated since the tree was extracted), the limits, the moment expiry is judged
    /// at and the expected name.
    public var verifier: BundleVerifier

    /// A checker for trees under `verifier`'s rules, as ``BundleExtractor`` extracts under them.
    public init(verifier: BundleVerifier) {
        self.verifier = verifier
    }

    /// Returns the manifest when nothing changed; throws ``BundleError/changedAtRest(folder:problems:)``
    /// naming every file that did, or the refusal (expired, rollback against `state`, another
    /// name, an unsafe path) of the manifest itself. `state` is only read.
    public func check(folder: String, state: BundleState? = nil) async throws -> BundleManifest {
        let (trust, limits) = (verifier.trust, verifier.limits)
        let folder = folder.count > 1 && folder.hasSuffix("/") ? String(folder.dropLast()) : folder
        let manifestPath = folder + "/" + BundleLayout.manifestEntry
        guard BundleFiles.lstatMode(manifestPath) == S_IFREG else {
            throw BundleError.io(path: folder, detail: "not a folder extracted by signet bundle (no \(BundleLayout.manifestEntry))")
        }
        let manifestBytes = try BundleFiles.read(manifestPath, limit: limits.maximumManifestSize)
        let signaturesPath = folder + "/" + BundleLayout.signaturesEntry
        let signatures = try SignatureList.parse(try BundleFiles.read(signaturesPath, limit: limits.maximumSignaturesSize), source: signaturesPath, limits: limits)
        _ = try BundleSignature.requireThreshold(signatures, over: manifestBytes, keys: trust.keys, threshold: trust.threshold, source: manifestPath)
        let manifest = try BundleManifest(bytes: manifestBytes, source: manifestPath, limits: limits)
        try manifest.requireCurrent(expectedName: verifier.expectedName, now: verifier.now)
        if let state {
            try state.requireNoRollback(BundleRelease(manifest, manifestBytes: manifestBytes))
        }
        for file in manifest.files { try BundlePath.validate(file.path, source: manifestPath, limits: limits) }
        try BundlePath.checkCollisions(manifest.files.map(\.path), source: manifestPath)

        let listed = Dictionary(manifest.files.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
        var problems: [String] = []
        var present: [String] = []
        walk(folder, prefix: "", into: &present, problems: &problems)
        for path in present where listed[path] == nil { problems.append("added: \(BundleError.printable(path))") }
        let checks = try await Self.checkFiles(manifest.files, in: folder)
        problems += checks
        guard problems.isEmpty else { throw BundleError.changedAtRest(folder: folder, problems: problems.sorted()) }
        return manifest
    }

    /// Every file of `files` checked on all cores; returns the problems found.
    private static func checkFiles(_ files: [BundleManifest.File], in folder: String) async throws -> [String] {
        let workers = max(1, min(SystemInfo.activeProcessorCount, files.count))
        return try await withThrowingTaskGroup(of: [String].self) { group in
            for worker in 0..<workers {
                group.addTask {
                    var problems: [String] = []
                    for index in stride(from: worker, to: files.count, by: workers) {
                        if let problem = checkFile(files[index], in: folder) { problems.append(problem) }
                    }
                    return problems
                }
            }
            var all: [String] = []
            for try await problems in group { all += problems }
            return all
        }
    }

    private static func checkFile(_ file: BundleManifest.File, in folder: String) -> String? {
        let path = folder + "/" + file.path
        let name = BundleError.printable(file.path)
        // Every folder on the way must be a real one: a planted link must not lead outside.
        var prefix = folder
        for component in file.path.split(separator: "/").dropLast() {
            prefix += "/" + component
            switch BundleFiles.lstatMode(prefix) {
            case S_IFDIR?: continue
            case nil: return "missing: \(name)"
            default: return "no longer inside a real folder: \(name) (\(BundleError.printable(String(prefix.dropFirst(folder.count + 1)))) is not a folder)"
            }
        }
        var info = stat()
        guard lstat(path, &info) == 0 else { return "missing: \(name)" }
        guard (info.st_mode & S_IFMT) == S_IFREG else { return "no longer a regular file: \(name)" }
        guard Int64(info.st_size) == file.size else { return "changed: \(name) (\(info.st_size) bytes, was \(file.size))" }
        guard let digest = try? FileDigester.digest(path: path, algorithm: .sha256) else { return "unreadable: \(name)" }
        guard ConstantTime.equals(digest.bytes, file.sha256) else { return "changed: \(name) (content differs)" }
        if let recorded = ExtendedAttributes.get(ExtendedAttributes.fileDigest, of: path), recorded != Hex.encode(file.sha256) {
            return "changed: \(name) (its \(ExtendedAttributes.fileDigest) attribute differs from the manifest)"
        }
        return nil
    }

    private func walk(_ folder: String, prefix: String, into paths: inout [String], problems: inout [String]) {
        guard let handle = opendir(folder) else {
            problems.append("unreadable folder: \(prefix.isEmpty ? "." : prefix)")
            return
        }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        closedir(handle)
        for name in names {
            let path = prefix.isEmpty ? name : prefix + "/" + name
            if path == BundlePath.reservedFolder { continue }
            if BundleFiles.lstatMode(folder + "/" + name) == S_IFDIR {
                walk(folder + "/" + name, prefix: path, into: &paths, problems: &problems)
            } else {
                paths.append(path)
            }
        }
    }
}
