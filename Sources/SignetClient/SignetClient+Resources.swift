import Foundation
import HTTPTypes
import SignetAPI
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
    public func fetchResource(_ name: String, into destination: String) async throws -> FetchedResource {
        guard let shipped = configuration.trustRoot, let stateFolder = configuration.resourceState else {
            throw ClientError.invalidConfiguration(detail: "fetching a resource needs a trust root and a resource state folder in the client's configuration")
        }
        do {
            try BundleName.validate(name, source: "the resource name")
        } catch {
            throw ClientError.invalidConfiguration(detail: String(describing: error))
        }
        guard !fetching.contains(name) else { throw ClientError.storage(detail: "\(name) is being fetched already") }
        fetching.insert(name)
        defer { fetching.remove(name) }
        let download = ResourceDownload(folder: stateFolder, name: name)
        try download.makeFolders()
        let trust = try await updatedTrustRoot(shipped: shipped, stateFolder: stateFolder)
        let state = BundleState(folder: stateFolder)
        var retried = false
        while true {
            let installed = download.installed(destination: destination, state: state)
            let (head, body, sink) = try await requestBundle(name, installed: installed?.tag, download: download)
            if head.status.code == 304, let installed {
                try Self.requireUnexpired(installed, destination: destination, name: name, now: configuration.clock.now)
                return FetchedResource(name: name, version: installed.version, updated: false, files: 0, trustRootVersion: trust.version)
            }
            switch head.status.code {
            case 416 where !retried:
                download.discardPartial()
                retried = true
                continue
            case 200 where sink.isAccepted, 206 where sink.isAccepted:
                break
            default:
                if head.status.code == 304 { throw ClientError.malformedResponse(detail: "304 Not Modified to a request that named no version") }
                try check(head, body, expecting: 200)
                throw ClientError.malformedResponse(detail: "the server answered \(head.status.code) without a bundle")
            }
            // The whole file must be the bundle the (signed) ETag names; a resumed file that is
            // not (a mix of two versions) is dropped and fetched again whole, once.
            let tag = "\"" + Hex.encode(try sink.wholeFileDigest()) + "\""
            guard tag == head.headerFields[.eTag] else {
                download.discardPartial()
                if !retried, head.status.code == 206 {
                    retried = true
                    continue
                }
                throw ClientError.malformedResponse(detail: "the downloaded bundle is not the one its ETag names")
            }
            defer { download.discardPartial() }
            let verified: VerifiedBundle
            do {
                let verifier = BundleVerifier(trust: trust, now: configuration.clock.now, expectedName: name)
                verified = try await BundleExtractor(verifier: verifier).extract(path: download.partialPath, to: destination, state: state)
            } catch let error as BundleError {
                throw Self.refusal(error)
            } catch {
                throw ClientError.storage(detail: "\(destination): \(error)")
            }
            download.recordInstalled(tag: tag, manifestDigest: verified.manifestDigest)
            return FetchedResource(
                name: name, version: verified.manifest.version, updated: true, files: verified.manifest.files.count,
                trustRootVersion: trust.version)
        }
    }

    /// One GET of the newest bundle: conditional on the version in place, resuming a partial
    /// download; the request's signature covers those fields and, when responses are checked,
    /// the answer's signature must cover its ETag (and Content-Range), so neither side's
    /// conditions can be changed on the way.
    private func requestBundle(
        _ name: String, installed: String?, download: ResourceDownload
    ) async throws -> (HTTPResponse, [UInt8], DownloadSink) {
        var request = HTTPRequest(method: .get, scheme: scheme, authority: authority, path: "/v1/resources/\(name)")
        request.headerFields[.accept] = "application/zip, application/problem+json"
        var covered: [SignatureComponent] = [.method, .targetURI]
        if let installed {
            request.headerFields[.ifNoneMatch] = installed
            covered.append(SignatureComponent("if-none-match"))
        }
        let partial = download.partial
        if let partial {
            request.headerFields[.range] = "bytes=\(partial.size)-"
            request.headerFields[.ifRange] = partial.tag
            covered += [SignatureComponent("range"), SignatureComponent("if-range")]
        }
        try await sign(&request, body: nil, components: covered)
        let sink = DownloadSink(
            download: download, resuming: partial, maximumSize: configuration.maximumResourceSize,
            deadline: ContinuousClock.now + configuration.maximumResourceDownloadTime)
        let head: HTTPResponse
        let body: [UInt8]
        do {
            (head, body) = try await transport.download(request, to: sink)
        } catch {
            sink.close()
            // The sink's own refusal (too big, too slow, a partial answer that does not fit) is
            // the reason, not the connection it closed; its bytes are not resumed from.
            if let refusal = sink.refusal {
                download.discardPartial()
                throw refusal
            }
            throw error
        }
        sink.close()
        if let serverKey = configuration.serverKey {
            do {
                // A 206's integrity is the whole file against the signed ETag (checked by the caller).
                let digests = sink.isAccepted ? (head.status.code == 200 ? sink.digests : nil) : ContentDigest.digests(of: body)
                var required = [SignatureComponent("etag")]
                if head.status.code == 206 { required.append(SignatureComponent("content-range")) }
                try await Self.verifyResponse(
                    head, bodyDigests: digests, answering: request, key: serverKey,
                    requiring: [200, 206, 304].contains(head.status.code) ? required : [])
            } catch {
                // Bytes that came with a forged answer are not resumed from.
                if sink.isAccepted { download.discardPartial() }
                throw error
            }
        }
        return (head, body, sink)
    }

    /// A version in place that the server says is current must not have expired meanwhile.
    static func requireUnexpired(_ installed: ResourceDownload.Installed, destination: String, name: String, now: Date) throws {
        let path = destination + "/.signet/manifest.json"
        do {
            let manifest = try BundleManifest(bytes: installed.manifest, source: path)
            if let expires = manifest.expires, expires < now {
                throw ClientError.resourceRefused(
                    code: "bundle.expired", detail: "\(name) in \(destination) expired at \(BundleDate.format(expires)) and the server has no newer version")
            }
        } catch let error as ClientError {
            throw error
        } catch {
            throw ClientError.storage(detail: "\(path): \(error)")
        }
    }

    /// The newest trust root the client accepts: the one it ships with or a later one it
    /// walked to before, then the server's rotations since, each signed by the one before.
    func updatedTrustRoot(shipped: TrustRoot, stateFolder: String) async throws -> TrustRoot {
        let path = ResourceDownload.trustRootPath(in: stateFolder)
        var current = shipped
        if let stored = try? TrustRoot.load(path: path), stored.version > shipped.version { current = stored }
        let start = current.version
        let (head, body) = try await send(.get, "/v1/trust?since=\(current.version)", json: Optional<String>.none)
        try check(head, body, expecting: 200)
        let chain = try decode(ResourceAPI.TrustChain.self, body)
        for text in chain.roots.prefix(1000) {
            let next: TrustRoot
            do {
                next = try TrustRoot(bytes: Array(text.utf8), source: "the server's trust root")
            } catch {
                throw ClientError.malformedResponse(detail: String(describing: error))
            }
            guard next.version > current.version else { continue }
            do {
                try current.accepts(next, source: "trust root version \(next.version)")
            } catch {
                throw ClientError.trustRotationRefused(detail: String(describing: error))
            }
            current = next
        }
        if current.version > start {
            do {
                try AtomicFile.write(current.fileBytes, to: path, permissions: .standard, overwrite: true)
            } catch {
                throw ClientError.storage(detail: "\(path): \(error)")
            }
        }
        return current
    }

    static func refusal(_ error: BundleError) -> ClientError {
        switch error {
        case .rollback, .versionReused: return .rollback(detail: error.description)
        case .io, .outputExists, .invalidArgument: return .storage(detail: error.description)
        default: return .resourceRefused(code: error.code.description, detail: error.description)
        }
    }
}

