import SignetAPI
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import SignetBundle
import SignetCore
import SignetHTTP

extension ServerRoutes {
    /// `POST /v1/admin/resources/{name}` (on `root`: its body is streamed, not collected),
    /// `GET /v1/admin/resources`, `GET /v1/resources/{name}[/{version}]`, `GET /v1/trust`,
    /// `POST /v1/admin/trust`.
    func addResourceRoutes(signed: RouterGroup<ServerRequestContext>, root: Router<ServerRequestContext>) {
        root.post("/v1/admin/resources/:name") { request, context in
            // Outside the signed group (its body streams), so the authority is checked here.
            try authorityCheck?.check(request, context: context)
            return try await publish(request, context: context)
        }
        signed.get("admin/resources") { request, context in
            _ = try context.principal(role: .admin)
            return try await responder.json(ResourceAPI.List(items: try await store.resources.all()), for: request, headers: [.cacheControl: "no-store"])
        }
        signed.get("resources/:name") { request, context in
            let name = try Self.pathParameter("name", context)
            guard context.identity != nil, let record = try await store.resources.latest(name: name) else {
                throw ServerError.notFound(what: "the resource \(name)")
            }
            return try await serve(record, for: request)
        }
        signed.get("resources/:name/:version") { request, context in
            let name = try Self.pathParameter("name", context)
            // Digits only, no sign and no leading zero: one spelling per version.
            let text = try Self.pathParameter("version", context)
            guard text.first != "0", text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let version = Int64(text), version >= 1 else {
                throw ServerError.badRequest(detail: "the version must be a whole number from 1")
            }
            guard context.identity != nil, let record = try await store.resources.find(name: name, version: version) else {
                throw ServerError.notFound(what: "version \(version) of the resource \(name)")
            }
            return try await serve(record, for: request)
        }
        signed.get("trust") { request, context in
            guard context.identity != nil else { throw ServerError.unauthorized(detail: "the request is not signed by an enrolled key") }
            var since: Int64 = 0
            if let text = request.uri.queryParameters.get("since") {
                guard let value = Int64(text), value >= 0 else { throw ServerError.badRequest(detail: "since must be a trust root version (0 or more)") }
                since = value
            }
            let roots = try await store.trustRoots.all(after: since).map { String(decoding: $0, as: UTF8.self) }
            return try await responder.json(ResourceAPI.TrustChain(roots: roots), for: request, headers: [.cacheControl: "no-cache"])
        }
        signed.post("admin/trust") { request, context in
            let admin = try context.principal(role: .admin)
            let body = try await request.body.collect(upTo: configuration.maximumBodySize)
            let next: TrustRoot
            do {
                next = try TrustRoot(bytes: Array(body.readableBytesView), source: "the trust root")
            } catch {
                throw ServerError.unprocessable(field: "the trust root", detail: "\(error)")
            }
            try await store.trustRoots.rotate(to: next)
            context.logger.notice("trust root rotated", metadata: ["version": "\(next.version)", "by": "\(admin.name)"])
            return try await responder.json(ResourceAPI.TrustRotated(version: next.version), status: .created, for: request)
        }
    }

    // MARK: Publishing

    /// Authenticates the request from its head — the signature must cover a `Content-Digest`
    /// — then streams the body to a work folder, checks it against that digest, and publishes.
    /// An unsigned or non-admin request is refused before a byte of its body is read.
    func publish(_ request: Request, context: ServerRequestContext) async throws -> Response {
        let name = try Self.pathParameter("name", context)
        let admin = try await authenticateHead(request)
        guard admin.principal.role == .admin else {
            throw ServerError.forbidden(detail: "the admin API takes requests signed by an admin key; \(admin.principal.name) is an app")
        }
        let mediaType = (request.headers[.contentType] ?? "").split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        let kind: ResourcePublisher.Upload
        switch mediaType {
        case ResourceAPI.tarType: kind = .tar
        case ResourceAPI.bundleType: kind = .bundle
        default:
            throw ServerError.unprocessable(
                field: "Content-Type", detail: "a resource is published as \(ResourceAPI.tarType) (files) or \(ResourceAPI.bundleType) (a bundle signed offline)")
        }
        var expires: Date?
        if let text = request.uri.queryParameters.get("expires") {
            guard kind == .tar else {
                throw ServerError.unprocessable(field: "expires", detail: "a bundle signed offline carries its own expiry; expires applies to a tar")
            }
            guard let date = ISO8601DateFormatter().date(from: text) else {
                throw ServerError.unprocessable(field: "expires", detail: "must be a date like 2027-01-01T00:00:00Z")
            }
            expires = date
        }
        let limit = configuration.maximumResourceSize
        if let length = request.headers[.contentLength].flatMap({ Int64($0) }), length > limit {
            throw ServerError.payloadTooLarge(limit: Int(limit))
        }
        let work = try Self.makeWorkFolder(in: configuration.workFolder ?? NSTemporaryDirectory())
        defer { try? FileManager.default.removeItem(atPath: work) }
        let upload = work + "/upload"
        try await Self.receive(request.body, to: upload, digests: admin.digests, limit: limit)
        let (record, created) = try await publisher.publish(
            name: name, upload: upload, kind: kind, expires: expires, by: admin.principal.name, workFolder: work)
        if created {
            context.logger.notice("published", metadata: ["resource": "\(name)", "version": "\(record.version)", "by": "\(admin.principal.name)"])
        }
        return try await responder.json(
            record, status: created ? .created : .ok, for: request, headers: [.location: "/v1/resources/\(name)/\(record.version)"])
    }

    /// The request's signer and the body digests its signature covers, checked from the head
    /// alone (the body is compared with the digests as it arrives).
    func authenticateHead(_ request: Request) async throws -> (principal: Principal, digests: [ContentDigest.Algorithm: [UInt8]]) {
        guard request.headers[.signatureInput] != nil, request.headers[.signature] != nil else {
            throw HTTPError(.unauthorized, headers: [.acceptSignature: verifier.acceptSignature], message: "the request is not signed")
        }
        guard let field = request.headers[.contentDigest], let digests = try? ContentDigest.parse(field), !digests.isEmpty else {
            throw ServerError.unauthorized(detail: "a publish must carry a Content-Digest (sha-256 or sha-512) that its signature covers")
        }
        let verified = try await authenticator().verify(head: request.head, bodyDigests: digests)
        return (try await principal(signing: verified), digests)
    }

    static func makeWorkFolder(in parent: String) throws -> String {
        let parent = parent.count > 1 && parent.hasSuffix("/") ? String(parent.dropLast()) : parent
        var template = Array("\(parent)/signet-publish-XXXXXX".utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            throw ServerError.unavailable(detail: "\(parent): cannot make a work folder: \(String(cString: strerror(errno)))")
        }
        return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Streams `body` into a new file at `path`, at most `limit` bytes, and checks it against
    /// the digests the request's signature covers.
    static func receive(_ body: RequestBody, to path: String, digests: [ContentDigest.Algorithm: [UInt8]], limit: Int64) async throws {
        let file: AtomicFileWriter
        do { file = try AtomicFileWriter(path: path, permissions: .privateToOwner) } catch { throw ServerError.unavailable(detail: "\(path): \(error)") }
        var hasher = ContentDigest.Hasher(algorithms: Set(digests.keys))
        var size: Int64 = 0
        for try await buffer in body {
            size += Int64(buffer.readableBytes)
            guard size <= limit else { throw ServerError.payloadTooLarge(limit: Int(limit)) }
            try buffer.withUnsafeReadableBytes { bytes in
                hasher.update(bytes)
                try file.write(bytes)
            }
        }
        do {
            try ContentDigest.verify(stated: digests, computed: hasher.finalize())
        } catch {
            throw ServerError.unauthorized(detail: "the body is not the one the request signed: \(String(describing: error))")
        }
        do { try file.commit(overwrite: false) } catch { throw ServerError.unavailable(detail: "\(path): \(error)") }
    }

    // MARK: Serving

    /// The stored bundle: whole, in part (`Range`), or 304 when the client has it
    /// (`If-None-Match`); read from the database a few chunks at a time.
    func serve(_ record: ResourceRecord, for request: Request) async throws -> Response {
        var fields: HTTPFields = [
            .eTag: record.etag, .cacheControl: "no-cache", .acceptRanges: "bytes", ResourceAPI.versionField: String(record.version),
        ]
        let answer = ResourceAnswer.decide(
            etag: record.etag, size: record.size, ifNoneMatch: request.headers[.ifNoneMatch], range: request.headers[.range],
            ifRange: request.headers[.ifRange])
        let range: ClosedRange<Int64>
        let status: HTTPResponse.Status
        var contentDigest: [ContentDigest.Algorithm: [UInt8]]?
        switch answer {
        case .notModified:
            return try await responder.streamed(
                status: .notModified, fields: fields, contentDigest: nil, covering: ["etag"], body: ResponseBody(), for: request)
        case .unsatisfiable:
            fields[.contentRange] = "bytes */\(record.size)"
            return await responder.problem(.rangeNotSatisfiable(size: record.size), for: request, headers: fields)
        case .full:
            guard record.size > 0, let whole = Hex.decode(record.sha256) else { throw ServerError.unavailable(detail: "resource \(record.name) is damaged") }
            range = 0...(record.size - 1)
            status = .ok
            contentDigest = [.sha256: whole]
        case .partial(let part):
            // No digest of the part (it would mean reading it twice): the signature covers the
            // ETag, the whole bundle's SHA-256, which the client checks the assembled file against.
            range = part
            status = .partialContent
            fields[.contentRange] = "bytes \(part.lowerBound)-\(part.upperBound)/\(record.size)"
        }
        fields[.contentType] = ResourceAPI.bundleType
        let routes = self
        let body = ResponseBody(contentLength: Int(range.count)) { writer in
            try await routes.forEachSlice(of: record, range) { try await writer.write($0) }
            try await writer.finish(nil)
        }
        return try await responder.streamed(
            status: status, fields: fields, contentDigest: contentDigest,
            covering: status == .partialContent ? ["etag", "content-range"] : ["etag"], body: body, for: request)
    }

    /// The most bytes a download holds at once (besides the socket's buffers): a slice of a
    /// stored chunk, read as the client drains the one before.
    static let downloadSlice = 128 << 10

    /// Calls `body` with the stored bytes of `range`, in order, a slice of at most
    /// ``downloadSlice`` bytes at a time, read from the database only when `body` has taken the
    /// one before (its write waits while the client does not read).
    func forEachSlice(of record: ResourceRecord, _ range: ClosedRange<Int64>, _ body: (ByteBuffer) async throws -> Void) async throws {
        let size = Int64(ServerStore.Resources.chunkSize)
        var position = range.lowerBound
        while position <= range.upperBound {
            let chunk = position / size
            let offset = position - chunk * size
            let length = Int(min(Int64(Self.downloadSlice), size - offset, range.upperBound - position + 1))
            guard let slice = try await store.resources.slice(name: record.name, version: record.version, chunk: chunk, offset: Int(offset), length: length),
                  slice.readableBytes == length
            else { throw ServerError.unavailable(detail: "resource \(record.name) \(record.version) lost chunk \(chunk)") }
            try await body(slice)
            position += Int64(length)
        }
    }
}
