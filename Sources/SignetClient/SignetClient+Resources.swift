import Foundation
import HTTPTypes
import SignetBundle
import SignetCore
import SignetHTTP
import SignetTLS
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What ``SignetClient/fetchResource(_:into:)`` did.
public struct FetchedResource: Sendable, Equatable {
    /// The resource's name and the version now in place.
    public var name: String
    public var version: Int64
    /// false when the server answered that the version in place is its newest (nothing was
    /// downloaded).
    public var updated: Bool
    /// The number of files in place (0 when not updated).
    public var files: Int
    /// The version of the trust root it was verified against (after walking rotations).
    public var trustRootVersion: Int64
}

extension SignetClient {
    /// Brings the resource `name` in `destination` up to the server's newest version.
    ///
    /// First the trust root: the server's rotations since the one the client holds are each
    /// checked against the one before (a threshold of its keys must have signed the next) and
    /// the newest kept in the state folder. Then the download — `If-None-Match` with the
    /// version in place (nothing is downloaded when it is current), resuming a partial download
    /// with `Range`/`If-Range` — with the response signature checked when the server's key is
    /// configured. The bundle is verified against the trust root, its name, its expiry and the
    /// rollback state (no older version, no reused one), extracted beside `destination` and
    /// swapped in whole. A resource that fails any check leaves the previous one in place.
    public func fetchResource(_ name: String, into destination: String) async throws(ClientError) -> FetchedResource {
        guard let shipped = configuration.trustRoot, let stateFolder = configuration.resourceState else {
            throw .invalidConfiguration(detail: "fetching a resource needs a trust root and a resource state folder in the client's configuration")
        }
        do {
            try BundleName.validate(name, source: "the resource name")
        } catch {
            throw .invalidConfiguration(detail: error.description)
        }
        guard !fetching.contains(name) else { throw .storage(detail: "\(name) is being fetched already") }
        fetching.insert(name)
        defer { fetching.remove(name) }
        try Self.makeFolder(stateFolder)
        let trust = try await updatedTrustRoot(shipped: shipped, stateFolder: stateFolder)
        let state = BundleState(folder: stateFolder)
        let download = ResourceDownload(folder: stateFolder, name: name)
        var retried = false
        while true {
            var request = HTTPRequest(method: .get, scheme: scheme, authority: authority, path: "/v1/resources/\(name)")
            request.headerFields[.accept] = "application/zip, application/problem+json"
            if let installed = download.installedTag(destination: destination, state: state) {
                request.headerFields[.ifNoneMatch] = installed
            }
            let resumeFrom = download.partialSize
            if resumeFrom > 0, let tag = download.partialTag {
                request.headerFields[.range] = "bytes=\(resumeFrom)-"
                request.headerFields[.ifRange] = tag
            }
            try await sign(&request, body: nil)
            let sink = DownloadSink(download: download, resumeFrom: resumeFrom)
            let (head, body) = try await transport.download(request, to: sink)
            sink.close()
            if let serverKey = configuration.serverKey {
                do {
                    try await Self.verifyResponse(
                        head, bodyDigests: sink.isAccepted ? sink.digests : ContentDigest.digests(of: body), answering: request, key: serverKey)
                } catch {
                    // Bytes that came with a forged answer are not resumed from.
                    if sink.isAccepted { download.discardPartial() }
                    throw error
                }
            }
            switch head.status.code {
            case 304:
                let version = (try? state.acceptedVersion(of: name)) ?? nil
                return FetchedResource(name: name, version: version ?? 0, updated: false, files: 0, trustRootVersion: trust.version)
            case 416 where !retried:
                download.discardPartial()
                retried = true
                continue
            case 200 where sink.isAccepted, 206 where sink.isAccepted:
                break
            default:
                try check(head, body, expecting: 200)
                throw .malformedResponse(detail: "the server answered \(head.status.code) without a bundle")
            }
            defer { download.discardPartial() }
            let verified: VerifiedBundle
            do {
                let verifier = BundleVerifier(trust: trust, expectedName: name)
                verified = try await BundleExtractor(verifier: verifier).extract(path: download.partialPath, to: destination, state: state)
            } catch let error as BundleError {
                throw Self.refusal(error)
            } catch {
                throw .storage(detail: "\(destination): \(error)")
            }
            download.recordInstalled(tag: head.headerFields[.eTag], manifestDigest: verified.manifestDigest)
            return FetchedResource(
                name: name, version: verified.manifest.version, updated: true, files: verified.manifest.files.count,
                trustRootVersion: trust.version)
        }
    }

    /// The newest trust root the client accepts: the one it ships with or a later one it
    /// walked to before, then the server's rotations since, each signed by the one before.
    func updatedTrustRoot(shipped: TrustRoot, stateFolder: String) async throws(ClientError) -> TrustRoot {
        let path = stateFolder + "/trust.json"
        var current = shipped
        if let stored = try? TrustRoot.load(path: path), stored.version > shipped.version { current = stored }
        let start = current.version
        let (head, body) = try await send(.get, "/v1/trust?since=\(current.version)", json: Optional<String>.none)
        try check(head, body, expecting: 200)
        struct Chain: Decodable { var roots: [String] }
        let chain = try decode(Chain.self, body)
        for text in chain.roots.prefix(1000) {
            let next: TrustRoot
            do {
                next = try TrustRoot(bytes: Array(text.utf8), source: "the server's trust root")
            } catch {
                throw .malformedResponse(detail: error.description)
            }
            guard next.version > current.version else { continue }
            do {
                try current.accepts(next, source: "trust root version \(next.version)")
            } catch {
                throw .trustRotationRefused(detail: error.description)
            }
            current = next
        }
        if current.version > start {
            do {
                try AtomicFile.write(current.fileBytes, to: path, permissions: .standard, overwrite: true)
            } catch {
                throw .storage(detail: "\(path): \(error)")
            }
        }
        return current
    }

    static func refusal(_ error: BundleError) -> ClientError {
        switch error.code {
        case .rollback, .versionReused: return .rollback(detail: error.description)
        case .io, .outputExists, .invalidArgument: return .storage(detail: error.description)
        default: return .resourceRefused(code: error.code.description, detail: error.description)
        }
    }

    static func makeFolder(_ path: String) throws(ClientError) {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw .storage(detail: "\(path): cannot create the resource state folder: \(error.localizedDescription)")
        }
    }
}

/// The files a resource's download keeps in the state folder: `NAME.download` (the bytes so
/// far) and `NAME.download.etag` (the version they belong to), and `NAME.etag` (the version in
/// place and its manifest's digest, for `If-None-Match`).
struct ResourceDownload: Sendable {
    let folder: String
    let name: String

    var partialPath: String { "\(folder)/\(name).download" }
    var partialTagPath: String { partialPath + ".etag" }
    var installedPath: String { "\(folder)/\(name).etag" }

    var partialSize: Int64 {
        var info = stat()
        guard lstat(partialPath, &info) == 0, info.st_mode & S_IFMT == S_IFREG, partialTag != nil else { return 0 }
        return Int64(info.st_size)
    }

    var partialTag: String? { Self.read(partialTagPath) }

    func discardPartial() {
        unlink(partialPath)
        unlink(partialTagPath)
    }

    /// The tag of the version in place, when `destination` still holds exactly the manifest
    /// the state recorded (else the whole bundle is asked for again).
    func installedTag(destination: String, state: BundleState) -> String? {
        guard let text = Self.read(installedPath), let space = text.firstIndex(of: " "),
              let accepted = try? state.accepted(of: name),
              Hex.encode(accepted.manifestDigest) == text[text.index(after: space)...],
              let manifest = try? FileInput.readAll(path: destination + "/.signet/manifest.json", limit: 32 << 20),
              DigestAlgorithm.sha256.hash(manifest).bytes == accepted.manifestDigest
        else { return nil }
        return String(text[..<space])
    }

    func recordInstalled(tag: String?, manifestDigest: [UInt8]) {
        guard let tag, !tag.contains(" "), !tag.contains("\n") else { unlink(installedPath); return }
        try? AtomicFile.write(Array("\(tag) \(Hex.encode(manifestDigest))".utf8), to: installedPath, permissions: .standard, overwrite: true)
    }

    static func read(_ path: String) -> String? {
        guard let bytes = try? FileInput.readAll(path: path, limit: 4096), let text = String(validating: bytes, as: UTF8.self), !text.isEmpty else {
            return nil
        }
        return text
    }
}

/// Writes a 200 (from the start) or a 206 that continues the partial download into
/// `NAME.download`, hashing what this response brings for its `Content-Digest`.
/// `@unchecked Sendable`: the connection calls it on one event loop, one call at a time, and
/// the client reads it only after the response completed.
final class DownloadSink: HTTPSBodySink, @unchecked Sendable {
    let download: ResourceDownload
    let resumeFrom: Int64
    private var descriptor: Int32 = -1
    private var hasher = ContentDigest.Hasher(algorithms: [.sha256])
    private(set) var isAccepted = false

    init(download: ResourceDownload, resumeFrom: Int64) {
        self.download = download
        self.resumeFrom = resumeFrom
    }

    /// The digests of the bytes this response brought (nil when none).
    var digests: [ContentDigest.Algorithm: [UInt8]]? { hasher.byteCount == 0 ? nil : hasher.finalize() }

    func accepts(_ head: HTTPResponse) throws -> Bool {
        let flags: Int32
        switch head.status.code {
        case 200:
            flags = O_WRONLY | O_CREAT | O_TRUNC
        case 206:
            guard resumeFrom > 0, let range = head.headerFields[.contentRange], range.hasPrefix("bytes \(resumeFrom)-"),
                  head.headerFields[.eTag] == download.partialTag
            else {
                throw ClientError.malformedResponse(detail: "a partial answer that does not continue the download")
            }
            flags = O_WRONLY | O_APPEND
        default:
            return false
        }
        guard let tag = head.headerFields[.eTag], !tag.isEmpty, !tag.contains("\n") else {
            throw ClientError.malformedResponse(detail: "the resource has no ETag")
        }
        if head.status.code == 200 {
            unlink(download.partialTagPath)
            try AtomicFile.write(Array(tag.utf8), to: download.partialTagPath, permissions: .standard, overwrite: true)
        }
        descriptor = open(download.partialPath, flags | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw ClientError.storage(detail: "\(download.partialPath): \(String(cString: strerror(errno)))") }
        isAccepted = true
        return true
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        hasher.update(bytes)
        var offset = 0
        while offset < bytes.count {
            let written = posixWrite(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            guard written > 0 else {
                if written < 0, errno == EINTR { continue }
                throw ClientError.storage(detail: "\(download.partialPath): \(String(cString: strerror(errno)))")
            }
            offset += written
        }
    }

    func close() {
        if descriptor >= 0 { posixClose(descriptor) }
        descriptor = -1
    }

    deinit { close() }
}

private func posixWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
    Glibc.write(descriptor, bytes, count)
    #else
    Darwin.write(descriptor, bytes, count)
    #endif
}

private func posixClose(_ descriptor: Int32) {
    #if canImport(Glibc)
    _ = Glibc.close(descriptor)
    #else
    _ = Darwin.close(descriptor)
    #endif
}
