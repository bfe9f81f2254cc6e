import Foundation
import SignetCore

extension BundleManifest {
    /// Refuses a manifest of another name than `expectedName` (when given) or past its expiry at `now`.
    func requireCurrent(expectedName: String?, now: Date) throws {
        if let expectedName, name != expectedName {
            throw BundleError.wrongName(expected: expectedName, found: name, reason: "the one expected")
        }
        if let expires, now > expires {
            throw BundleError.expired(name: name, expires: BundleDate.format(expires), now: BundleDate.format(now))
        }
    }
}

/// A bundle that passed every check.
public struct VerifiedBundle: Sendable {
    /// What the bundle says, now trusted.
    public let manifest: BundleManifest
    /// The trusted keys whose signatures verified.
    public let signedBy: [KeyFingerprint]
    /// SHA-256 of the manifest bytes: what extracted files are tied to.
    public let manifestDigest: [UInt8]

    /// What rollback protection records of it.
    public var release: BundleRelease {
        BundleRelease(name: manifest.name, version: manifest.version, manifestDigest: manifestDigest)
    }
}

/// Checks bundles against a pinned ``TrustRoot``: a canonical zip with safe entries, a
/// threshold of valid signatures from trusted keys with their pinned algorithms, the expected
/// name (when ``expectedName`` is set), not expired, no rollback against a ``BundleState``
/// (when one is given; ``BundleRelease/requireNoRollback(from:floor:)``), and every file present
/// with the size and SHA-256 the manifest lists, with nothing unlisted.
public struct BundleVerifier: Sendable {
    /// Called with the number of bytes just hashed.
    public typealias Progress = @Sendable (Int) -> Void

    /// The pinned keys, each with its algorithm, and the threshold of them that must have signed.
    public var trust: TrustRoot
    /// Bounds checked before anything is read into memory or written.
    public var limits: BundleLimits
    /// The moment expiry is judged at (an audit may choose another).
    public var now: Date
    /// The product the caller expects: a bundle of any other name is refused
    /// (``BundleError/wrongName(expected:found:reason:)``), however well signed. Trust roots
    /// often sign several products (and betas); without this, one can stand in for another.
    public var expectedName: String?

    /// A verifier for bundles signed under `trust`; `now` is the moment expiry is judged at, and
    /// `expectedName`, when set, the only bundle name accepted.
    public init(trust: TrustRoot, limits: BundleLimits = BundleLimits(), now: Date = Date(), expectedName: String? = nil) {
        self.trust = trust
        self.limits = limits
        self.now = now
        self.expectedName = expectedName
    }

    /// Verifies the bundle at `path`; with a `state`, refuses rollback (an older version, or
    /// the accepted version with other content) and records the release once everything passed.
    public func verify(path: String, state: BundleState? = nil, progress: Progress? = nil) async throws -> VerifiedBundle {
        guard let state else {
            let opened = try open(path)
            try await opened.hashAll(progress: progress)
            return opened.verified
        }
        return try await state.locked {
            let opened = try open(path)
            try state.requireNoRollback(opened.verified.release)
            try await opened.hashAll(progress: progress)
            try state.record(opened.manifest, manifestDigest: opened.verified.manifestDigest, at: now)
            return opened.verified
        }
    }

    /// Every check that needs no file content: structure, signatures, manifest, expiry and
    /// the match between zip entries and listed files.
    func open(_ path: String) throws -> OpenedBundle {
        let zip = try ZipReader(path: path, limits: limits)
        var byName: [String: ZipEntry] = [:]
        for entry in zip.entries {
            if entry.name != BundleLayout.manifestEntry && entry.name != BundleLayout.signaturesEntry {
                try BundlePath.validate(entry.name, source: path, limits: limits)
            }
            guard byName.updateValue(entry, forKey: entry.name) == nil else {
                throw BundleError.unsafeEntry(source: path, entry: entry.name, detail: "appears twice")
            }
        }
        try BundlePath.checkCollisions(zip.entries.map(\.name), source: path)
        guard let manifestEntry = byName.removeValue(forKey: BundleLayout.manifestEntry),
            let signaturesEntry = byName.removeValue(forKey: BundleLayout.signaturesEntry)
        else {
            throw BundleError.malformed(source: path, detail: "not a Signet bundle: no \(BundleLayout.manifestEntry) and \(BundleLayout.signaturesEntry)")
        }
        let manifestBytes = try zip.read(manifestEntry, limit: limits.maximumManifestSize)
        let signatures = try SignatureList.parse(
            try zip.read(signaturesEntry, limit: limits.maximumSignaturesSize), source: path + ": " + BundleLayout.signaturesEntry, limits: limits)
        // The signatures are checked before the manifest is even parsed.
        let signers = try BundleSignature.requireThreshold(signatures, over: manifestBytes, keys: trust.keys, threshold: trust.threshold, source: path)
        let manifest = try BundleManifest(bytes: manifestBytes, source: path + ": " + BundleLayout.manifestEntry, limits: limits)
        try manifest.requireCurrent(expectedName: expectedName, now: now)
        var files: [(BundleManifest.File, ZipEntry)] = []
        var missing: [String] = []
        for file in manifest.files {
            guard let entry = byName.removeValue(forKey: file.path) else {
                missing.append(file.path)
                continue
            }
            guard entry.size == UInt64(file.size) else {
                throw BundleError.verificationFailed(
                    source: path, detail: "\"\(BundleError.printable(file.path))\" is \(entry.size) bytes; the manifest says \(file.size)")
            }
            files.append((file, entry))
        }
        guard missing.isEmpty else {
            throw BundleError.verificationFailed(
                source: path, detail: "listed in the manifest but missing: " + missing.map { "\"\(BundleError.printable($0))\"" }.joined(separator: ", "))
        }
        guard byName.isEmpty else {
            throw BundleError.verificationFailed(
                source: path, detail: "not listed in the manifest: " + byName.keys.sorted().map { "\"\(BundleError.printable($0))\"" }.joined(separator: ", "))
        }
        let verified = VerifiedBundle(manifest: manifest, signedBy: signers, manifestDigest: DigestAlgorithm.sha256.hash(manifestBytes).bytes)
        return OpenedBundle(path: path, zip: zip, files: files, signatures: signatures, manifestBytes: manifestBytes, verified: verified)
    }
}

/// A bundle whose structure, signatures and manifest were checked; its contents not yet.
struct OpenedBundle: Sendable {
    let path: String
    let zip: ZipReader
    let files: [(BundleManifest.File, ZipEntry)]
    let signatures: [BundleSignature]
    let manifestBytes: [UInt8]
    let verified: VerifiedBundle
    var manifest: BundleManifest { verified.manifest }

    /// Hashes every file on all cores; when `sink` is given, each file's content also goes to
    /// the ``EntrySink`` it makes for that file, which is finished only when the digest
    /// matched. Throws at the first mismatch.
    func hashAll(progress: BundleVerifier.Progress?, sink: (@Sendable (BundleManifest.File) throws -> any EntrySink)? = nil) async throws {
        let workers = max(1, min(SystemInfo.activeProcessorCount, files.count))
        // Largest first, each to the least loaded worker.
        var shares = [[(BundleManifest.File, ZipEntry)]](repeating: [], count: workers)
        var loads = [UInt64](repeating: 0, count: workers)
        for item in files.sorted(by: { $0.1.size > $1.1.size }) {
            let index = loads.indices.min { loads[$0] < loads[$1] }!
            shares[index].append(item)
            loads[index] += item.1.size + 4096
        }
        let zip = zip
        let path = path
        try await withThrowingTaskGroup(of: Void.self) { group in
            for share in shares {
                group.addTask {
                    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: FileInput.chunkSize, alignment: 16)
                    defer { buffer.deallocate() }
                    for (file, entry) in share {
                        try Task.checkCancellation()
                        var hasher = DigestAlgorithm.sha256.makeHasher()
                        let output = try sink?(file)
                        try zip.stream(entry, buffer: buffer) { (chunk) throws in
                            hasher.update(bufferPointer: chunk)
                            try output?.write(chunk)
                            progress?(chunk.count)
                        }
                        guard ConstantTime.equals(hasher.finalize().bytes, file.sha256) else {
                            throw BundleError.verificationFailed(
                                source: path, detail: "\"\(BundleError.printable(file.path))\" does not match its SHA-256 in the manifest (tampered or damaged)")
                        }
                        try output?.finish()
                    }
                }
            }
            try await group.waitForAll()
        }
    }
}

/// Where extraction sends one file's content while it is hashed.
protocol EntrySink: AnyObject {
    func write(_ chunk: UnsafeRawBufferPointer) throws
    /// Called only after the content matched the manifest.
    func finish() throws
}

/// What a bundle says about itself, read without a trust root: nothing in it is verified.
public struct BundleContents: Sendable {
    /// The manifest as the bundle states it, unverified.
    public let manifest: BundleManifest
    /// The signatures the bundle carries, none of them checked.
    public let signatures: [BundleSignature]
    /// The zip's entries besides Signet's own, with their sizes.
    public let entries: [(path: String, size: UInt64)]

    /// Reads the structure, manifest and signatures of the bundle at `path`.
    public init(path: String, limits: BundleLimits = BundleLimits()) throws {
        let zip = try ZipReader(path: path, limits: limits)
        guard let manifestEntry = zip.entries.first(where: { $0.name == BundleLayout.manifestEntry }),
            let signaturesEntry = zip.entries.first(where: { $0.name == BundleLayout.signaturesEntry })
        else {
            throw BundleError.malformed(source: path, detail: "not a Signet bundle: no \(BundleLayout.manifestEntry) and \(BundleLayout.signaturesEntry)")
        }
        manifest = try BundleManifest(bytes: try zip.read(manifestEntry, limit: limits.maximumManifestSize), source: path, limits: limits)
        signatures = try SignatureList.parse(try zip.read(signaturesEntry, limit: limits.maximumSignaturesSize), source: path, limits: limits)
        entries = zip.entries.filter { !$0.name.hasPrefix(BundlePath.reservedFolder + "/") }.map { ($0.name, $0.size) }
    }
}
