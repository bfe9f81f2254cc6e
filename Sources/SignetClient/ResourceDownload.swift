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

/// What a resource's fetch keeps in the state folder beside the rollback state
/// (`NAME.json`, ``BundleState``). Resource names never start with a dot and never hold a
/// slash, so these names cannot meet one:
///
/// ```
/// STATE/.trust.json              the newest trust root accepted
/// STATE/.partial/NAME            the bytes of a download so far
/// STATE/.partial-tag/NAME        the ETag they belong to
/// STATE/.installed-tag/NAME      the ETag and manifest digest of the version in place
/// ```
struct ResourceDownload: Sendable {
    let folder: String
    let name: String

    static func trustRootPath(in folder: String) -> String { folder + "/.trust.json" }

    var partialPath: String { "\(folder)/.partial/\(name)" }
    var partialTagPath: String { "\(folder)/.partial-tag/\(name)" }
    var installedPath: String { "\(folder)/.installed-tag/\(name)" }

    /// Creates the state folder and its subfolders (0700).
    func makeFolders() throws {
        for path in [folder, folder + "/.partial", folder + "/.partial-tag", folder + "/.installed-tag"] {
            do {
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw ClientError.storage(detail: "\(path): cannot create the resource state folder: \(error.localizedDescription)")
            }
        }
    }

    /// The partial download to resume: its size and the tag it belongs to; nil when there is
    /// none (or no tag to resume it with).
    var partial: (size: Int64, tag: String)? {
        var info = stat()
        guard lstat(partialPath, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size > 0, let tag = Self.read(partialTagPath) else {
            return nil
        }
        return (Int64(info.st_size), tag)
    }

    func discardPartial() {
        unlink(partialPath)
        unlink(partialTagPath)
    }

    /// The version in place: its tag, its version and the manifest's bytes.
    struct Installed {
        let tag: String
        let version: Int64
        let manifest: [UInt8]
    }

    /// The version in place, when `destination` still holds exactly the manifest the state
    /// recorded (else the whole bundle is asked for again).
    func installed(destination: String, state: BundleState) -> Installed? {
        guard let text = Self.read(installedPath), let space = text.firstIndex(of: " "),
              let accepted = try? state.accepted(of: name),
              Hex.encode(accepted.manifestDigest) == text[text.index(after: space)...],
              let manifest = try? FileInput.readAll(path: destination + "/.signet/manifest.json", limit: 32 << 20),
              DigestAlgorithm.sha256.hash(manifest).bytes == accepted.manifestDigest
        else { return nil }
        return Installed(tag: String(text[..<space]), version: accepted.version, manifest: manifest)
    }

    /// Records the tag of the version now in place: the SHA-256 of the bundle the client
    /// itself downloaded and verified, never a header it was given.
    func recordInstalled(tag: String, manifestDigest: [UInt8]) {
        try? AtomicFile.write(Array("\(tag) \(Hex.encode(manifestDigest))".utf8), to: installedPath, permissions: .standard, overwrite: true)
    }

    static func read(_ path: String) -> String? {
        guard let bytes = try? FileInput.readAll(path: path, limit: 4096), let text = String(validating: bytes, as: UTF8.self), !text.isEmpty else {
            return nil
        }
        return text
    }
}

/// Writes a 200 (from the start) or a 206 that continues the partial download, hashing what
/// this response brings; refuses a body over the size limit or one still coming after the
/// deadline (a server trickling bytes to hold the client). `@unchecked Sendable`: the
/// connection calls it on one event loop, one call at a time, and the client reads it only
/// after the response completed.
final class DownloadSink: HTTPSBodySink, @unchecked Sendable {
    let download: ResourceDownload
    /// The size of the partial download resumed (0: none) and the tag it belongs to.
    let resumeFrom: Int64
    let resumeTag: String?
    let maximumSize: Int64
    let deadline: ContinuousClock.Instant
    private var descriptor: Int32 = -1
    private var hasher = DigestAlgorithm.sha256.makeHasher()
    private var received: Int64 = 0
    private(set) var isAccepted = false
    private(set) var isPartial = false
    /// Why the sink stopped the download, when it did.
    private(set) var refusal: ClientError?

    init(download: ResourceDownload, resuming partial: (size: Int64, tag: String)?, maximumSize: Int64, deadline: ContinuousClock.Instant) {
        self.download = download
        self.resumeFrom = partial?.size ?? 0
        self.resumeTag = partial?.tag
        self.maximumSize = maximumSize
        self.deadline = deadline
    }

    /// The digests of the bytes this response brought, for its Content-Digest (nil when none).
    var digests: [ContentDigest.Algorithm: [UInt8]]? { received == 0 ? nil : [.sha256: hasher.finalize().bytes] }

    /// The SHA-256 of the whole downloaded file: this response's when it brought all of it,
    /// else the file hashed again (a resumed download).
    func wholeFileDigest() throws -> [UInt8] {
        if !isPartial { return hasher.finalize().bytes }
        do {
            return try FileDigester.digest(path: download.partialPath, algorithm: .sha256).bytes
        } catch {
            throw ClientError.storage(detail: "\(download.partialPath): \(error)")
        }
    }

    private func refuse(_ error: ClientError) -> ClientError {
        refusal = error
        return error
    }

    func accepts(_ head: HTTPResponse) throws -> Bool {
        let flags: Int32
        switch head.status.code {
        case 200:
            flags = O_WRONLY | O_CREAT | O_TRUNC
        case 206:
            guard resumeFrom > 0, let range = head.headerFields[.contentRange], range.hasPrefix("bytes \(resumeFrom)-"),
                  head.headerFields[.eTag] == resumeTag
            else {
                throw refuse(.malformedResponse(detail: "a partial answer that does not continue the download"))
            }
            flags = O_WRONLY | O_APPEND
            isPartial = true
        default:
            return false
        }
        guard let tag = head.headerFields[.eTag], !tag.isEmpty, !tag.contains("\n") else {
            throw refuse(.malformedResponse(detail: "the resource has no ETag"))
        }
        if let length = head.headerFields[.contentLength].flatMap({ Int64($0) }), length > maximumSize - (isPartial ? resumeFrom : 0) {
            throw refuse(.resourceRefused(code: "client.tooLarge", detail: "the resource is \(length) bytes, over the limit of \(maximumSize)"))
        }
        if !isPartial {
            do {
                try AtomicFile.write(Array(tag.utf8), to: download.partialTagPath, permissions: .standard, overwrite: true)
            } catch {
                throw refuse(.storage(detail: "\(download.partialTagPath): \(error)"))
            }
        }
        descriptor = open(download.partialPath, flags | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw refuse(.storage(detail: "\(download.partialPath): \(String(cString: strerror(errno)))")) }
        isAccepted = true
        return true
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        received += Int64(bytes.count)
        guard received + (isPartial ? resumeFrom : 0) <= maximumSize else {
            throw refuse(.resourceRefused(code: "client.tooLarge", detail: "the resource is over the limit of \(maximumSize) bytes"))
        }
        guard ContinuousClock.now < deadline else {
            throw refuse(.unreachable(detail: "the download did not finish in time"))
        }
        hasher.update(bufferPointer: bytes)
        var offset = 0
        while offset < bytes.count {
            let written = posixWrite(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            guard written > 0 else {
                if written < 0, errno == EINTR { continue }
                throw refuse(.storage(detail: "\(download.partialPath): \(String(cString: strerror(errno)))"))
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
