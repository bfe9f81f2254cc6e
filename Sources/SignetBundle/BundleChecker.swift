import Foundation
import SignetCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Re-verifies an extracted folder at rest: the manifest kept in `DEST/.signet/` must still
/// carry a threshold of valid signatures under the current trust root, and every file must be
/// there, regular, with the listed size and SHA-256 (and matching `user.signet.sha256`
/// attribute where there is one), with no file added.
public struct BundleChecker: Sendable {
    public var trust: TrustRoot
    public var limits: BundleLimits

    public init(trust: TrustRoot, limits: BundleLimits = BundleLimits()) {
        self.trust = trust
        self.limits = limits
    }

    /// Returns the manifest when nothing changed; throws ``BundleError/changedAtRest(folder:problems:)``
    /// naming every file that did.
    public func check(folder: String) async throws -> BundleManifest {
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

        let listed = Dictionary(uniqueKeysWithValues: manifest.files.map { ($0.path, $0) })
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
