import SignetAPI
import Foundation
import SignetBundle
import SignetCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns an admin's upload into the next stored version of a resource.
///
/// A tar of files becomes a bundle the server builds and signs with its signing key (which the
/// trust root must hold, with a threshold of one); a bundle signed offline (k of n) is taken
/// as it is. Either way the bundle is verified against the current trust root — name, expiry,
/// signatures — before it is stored, so the server never serves what its clients would refuse,
/// and it is stored in one transaction, so a failed or interrupted publish is never served.
struct ResourcePublisher: Sendable {
    let store: ServerStore
    let signer: (any Signer)?
    let limits: BundleLimits

    /// What was uploaded.
    enum Upload: Sendable {
        /// A tar of files, for the server to bundle and sign.
        case tar
        /// A bundle signed offline.
        case bundle
    }

    /// Publishes the upload at `path` (inside `workFolder`, which the caller removes) as the
    /// next version of `name`; `created` is false when the same bundle was already the newest
    /// version (an upload retried).
    func publish(
        name: String, upload path: String, kind: Upload, expires: Date?, by admin: String, workFolder: String
    ) async throws -> (record: ResourceRecord, created: Bool) {
        do {
            try BundleName.validate(name, source: "the resource name")
        } catch {
            throw ServerError.unprocessable(field: "name", detail: String(describing: error))
        }
        guard let trust = try await store.trustRoots.current() else {
            throw ServerError.conflict(detail: "the server has no trust root yet, so it cannot publish")
        }
        let latest = try await store.resources.latest(name: name)
        let bundlePath: String
        switch kind {
        case .bundle:
            bundlePath = path
        case .tar:
            bundlePath = try await build(name: name, version: (latest?.version ?? 0) + 1, tar: path, expires: expires, trust: trust, workFolder: workFolder)
        }
        let verified: VerifiedBundle
        do {
            verified = try await BundleVerifier(trust: trust, limits: limits, now: store.clock.now, expectedName: name).verify(path: bundlePath)
        } catch let error as BundleError {
            // The work folder's path means nothing to the client.
            throw ServerError.unprocessable(field: "the bundle", detail: error.description.replacingOccurrences(of: bundlePath + ": ", with: ""))
        } catch {
            throw ServerError.unprocessable(field: "the bundle", detail: "\(error)")
        }
        let manifestDigest = Hex.encode(verified.manifestDigest)
        if let latest, verified.manifest.version <= latest.version {
            if verified.manifest.version == latest.version, latest.manifestSHA256 == manifestDigest { return (latest, false) }
            throw ServerError.conflict(detail: "\(name) is already at version \(latest.version); a version is published once, and only a newer one after it")
        }
        let unstored = ResourceRecord(
            name: name, version: verified.manifest.version, size: 0, sha256: "", manifestSHA256: manifestDigest,
            expiresAt: verified.manifest.expires.map { Int64($0.timeIntervalSince1970) }, signedBy: kind == .tar ? "server" : "offline",
            publishedBy: admin, publishedAt: store.now)
        let record = try await store.resources.publish(unstored, bundlePath: bundlePath)
        return (record, true)
    }

    /// Unpacks the tar into a folder beside it and bundles that folder as version `version`,
    /// signed by the server's key.
    private func build(name: String, version: Int64, tar: String, expires: Date?, trust: TrustRoot, workFolder: String) async throws -> String {
        guard let signer else { throw ServerError.conflict(detail: "the server has no signing key; upload a bundle signed offline") }
        let keyID = signer.publicKey.fingerprint
        guard trust.threshold == 1, trust.keys.contains(where: { $0.keyID == keyID }) else {
            throw ServerError.conflict(detail: "the trust root (version \(trust.version)) needs \(trust.threshold) signature(s) from its keys and the server's key \(keyID) \(trust.keys.contains { $0.keyID == keyID } ? "is one" : "is not among them"); upload a bundle signed offline")
        }
        let tree = workFolder + "/tree"
        let entries = try Self.unpack(tar: tar, into: tree, limits: limits)
        guard !entries.isEmpty else { throw ServerError.unprocessable(field: "the tar", detail: "it holds no files") }
        let output = workFolder + "/bundle"
        do {
            _ = try await BundleCreator(name: name, version: version, expires: expires, created: store.clock.now, limits: limits)
                .create(inputs: [tree], signers: [signer], output: output)
        } catch let error as BundleError {
            switch error {
            case .invalidArgument, .unsafeEntry: throw ServerError.unprocessable(field: "the tar", detail: error.description)
            default: throw ServerError.unavailable(detail: "building the bundle: \(error)")
            }
        } catch {
            throw ServerError.unavailable(detail: "building the bundle: \(error)")
        }
        return output
    }

    /// Writes the tar's regular files under `folder` (created here), each created exclusively
    /// and never through a link.
    static func unpack(tar: String, into folder: String, limits: BundleLimits) throws -> [TarReader.Entry] {
        guard mkdir(folder, 0o700) == 0 else { throw ServerError.unavailable(detail: "\(folder): \(String(cString: strerror(errno)))") }
        let input: TarFile
        do { input = try TarFile(path: tar) } catch { throw ServerError.unavailable(detail: "\(tar): \(error)") }
        do {
            return try TarReader(limits: limits).read(input) { (entry, data) throws in
                let components = entry.path.split(separator: "/").map(String.init)
                var parent = folder
                for component in components.dropLast() {
                    parent += "/" + component
                    if mkdir(parent, 0o700) != 0, errno != EEXIST {
                        throw ServerError.unprocessable(field: "the tar", detail: "\(entry.path): a file and a folder of the same name")
                    }
                }
                let fd = open(folder + "/" + entry.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
                guard fd >= 0 else {
                    throw ServerError.unprocessable(field: "the tar", detail: "\(entry.path): listed twice, or a file and a folder of the same name")
                }
                defer { close(fd) }
                var remaining = entry.size
                while remaining > 0 {
                    let bytes = try data(1 << 20)
                    let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                    guard written == bytes.count else { throw ServerError.unavailable(detail: "\(folder): \(String(cString: strerror(errno)))") }
                    remaining -= Int64(bytes.count)
                }
            }
        } catch let error as ServerError {
            throw error
        } catch let error as BundleError {
            guard case .malformed(let source, let detail) = error else { throw ServerError.unprocessable(field: "the tar", detail: error.description) }
            throw ServerError.unprocessable(field: source, detail: detail)
        } catch {
            throw ServerError.unavailable(detail: "\(tar): \(error)")
        }
    }
}

/// A tar archive read from a file.
final class TarFile: TarInput {
    private let input: FileInput

    init(path: String) throws { input = try FileInput(path: path) }

    func read(_ count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let got: Int
            do {
                got = try bytes.withUnsafeMutableBytes { buffer throws in
                    try input.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
                }
            } catch {
                throw ServerError.unavailable(detail: "reading the upload: \(error)")
            }
            if got == 0 { break }
            filled += got
        }
        return filled == count ? bytes : Array(bytes[..<filled])
    }
}
