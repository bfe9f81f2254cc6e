import Foundation
import HTTPTypes
import SignetAPI
import SignetCore
import SignetHTTP
import SignetTLS

/// Speaks the admin API on the client's transport: every request signed by an admin key, every
/// answer's `server` signature verified under the server's response key (a tampered or replayed
/// answer is ``ClientError/responseSignatureInvalid(detail:)``), and every refusal turned into
/// the client's typed errors by its problem code.
public struct AdminClient: Sendable {
    /// `https://host:port`, without a path.
    public let server: String
    let authority: String
    /// Signs each request.
    public let signer: HTTPMessageSigner
    /// The server's response key, which signs every answer.
    public let serverKey: PublicKey
    /// Carries the requests: pinned TLS by default.
    public let transport: any ClientTransport

    /// A client of `server` (an `https` URL), signing with `signer`, verifying answers under
    /// `serverKey`, over `transport`.
    public init(server: String, signer: HTTPMessageSigner, serverKey: PublicKey, transport: any ClientTransport) throws {
        authority = try SignetClient.authority(of: server)
        self.server = server
        self.signer = signer
        self.serverKey = serverKey
        self.transport = transport
    }

    /// A client over pinned TLS: `client` verifies the server's chain or pinned key.
    public init(server: String, signer: HTTPMessageSigner, serverKey: PublicKey, transport client: PinnedHTTPSClient) throws {
        try self.init(server: server, signer: signer, serverKey: serverKey, transport: PinnedTransport(client: client) as any ClientTransport)
    }

    /// Enrols an app or an admin.
    public func enrol(_ enrolment: AdminAPI.Enrolment, role: AdminAPI.Role) async throws -> AdminAPI.Enrolled {
        try await send(.post, Self.collection(role), json: enrolment, as: AdminAPI.Enrolled.self)
    }

    /// Every app or every admin, revoked ones included.
    public func list(role: AdminAPI.Role) async throws -> [AdminAPI.Enrolled] {
        try await send(.get, Self.collection(role), as: AdminAPI.EnrolledList.self).items
    }

    /// Revokes an app or an admin.
    public func revoke(role: AdminAPI.Role, name: String) async throws {
        _ = try await exchange(.delete, Self.collection(role) + "/" + Self.escape(name), json: Optional<String>.none)
    }

    /// Replaces the app's platform identities and attestation policy; returns the app.
    public func setAttestation(app: String, _ settings: AdminAPI.AttestationSettings) async throws -> AdminAPI.Enrolled {
        try await send(.put, "/v1/admin/apps/\(Self.escape(app))/attestation", json: settings, as: AdminAPI.Enrolled.self)
    }

    /// Every enrolled device, of `app` or of every app, oldest first, revoked ones included
    /// (the pages followed to the end).
    public func devices(app: String? = nil) async throws -> [DeviceAPI.Device] {
        var items: [DeviceAPI.Device] = []
        var after: String?
        repeat {
            var query = [app.map { "app=" + Self.escape($0) }, after.map { "after=" + Self.escape($0) }].compactMap { $0 }.joined(separator: "&")
            if !query.isEmpty { query = "?" + query }
            let page = try await send(.get, APIOperation.listDevices.path + query, as: DeviceAPI.DeviceList.self)
            items += page.items
            // A page that names itself as the next would loop for ever.
            if let next = page.next, next == after { throw ClientError.malformedResponse(detail: "the device list's next page is the same page") }
            after = page.next
        } while after != nil
        return items
    }

    /// Revokes a device (by its id): its requests are refused and its sessions end.
    public func revokeDevice(id: String) async throws {
        _ = try await exchange(.delete, "/v1/admin/devices/" + Self.escape(id), json: Optional<String>.none)
    }

    /// Every user.
    public func users() async throws -> [UserAPI.Profile] {
        try await send(.get, APIOperation.listUsers.path, as: AdminAPI.UserList.self).users
    }

    /// Disables a user: their sessions end and they cannot sign in.
    public func disableUser(email: String) async throws {
        _ = try await exchange(.post, "/v1/admin/users/\(Self.escape(email))/disable", json: Optional<String>.none)
    }

    /// Ends every session of the user; returns how many there were.
    public func revokeSessions(email: String) async throws -> Int {
        try await send(.delete, "/v1/admin/users/\(Self.escape(email))/sessions", as: UserAPI.Revoked.self).revoked
    }

    /// Publishes the next version of the resource `name` from `upload`: a tar of files for the
    /// server to bundle and sign, or a bundle signed offline (told apart by the zip signature
    /// at its start). Returns the stored version and whether it is new (false: the same bundle
    /// was already the newest).
    public func publish(name: String, upload: [UInt8], expires: Date? = nil) async throws -> (record: ResourceRecord, created: Bool) {
        let isBundle = upload.starts(with: [0x50, 0x4B, 0x03, 0x04])
        var path = "/v1/admin/resources/\(Self.escape(name))"
        if let expires { path += "?expires=" + ISO8601DateFormatter().string(from: expires) }
        var request = HTTPRequest(method: .post, scheme: "https", authority: authority, path: path)
        request.headerFields[.contentType] = isBundle ? ResourceAPI.bundleType : ResourceAPI.tarType
        // The server answers after it has stored the upload: allow for the size.
        let (head, body) = try await exchange(request, body: upload, timeout: .seconds(max(60, upload.count >> 20)))
        return (try Self.decode(ResourceRecord.self, body), head.status.code == 201)
    }

    /// Every published version of every resource.
    public func resources() async throws -> [ResourceRecord] {
        try await send(.get, APIOperation.listResources.path, as: ResourceAPI.List.self).items
    }

    /// Adds the next trust root (the bytes of its file), which a threshold of the current
    /// root's keys must have signed.
    public func rotateTrust(_ root: [UInt8]) async throws {
        var request = HTTPRequest(method: .post, scheme: "https", authority: authority, path: APIOperation.rotateTrust.path)
        request.headerFields[.contentType] = "application/json"
        _ = try await exchange(request, body: root)
    }

    static func collection(_ role: AdminAPI.Role) -> String {
        (role == .app ? APIOperation.listApps : APIOperation.listAdmins).path
    }

    static func escape(_ segment: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~@+")
        return segment.addingPercentEncoding(withAllowedCharacters: allowed) ?? segment
    }

    func send<Reply: Decodable>(
        _ method: HTTPRequest.Method, _ path: String, json: (some Encodable)? = Optional<String>.none, as type: Reply.Type
    ) async throws -> Reply {
        try Self.decode(Reply.self, try await exchange(method, path, json: json).1)
    }

    static func decode<Reply: Decodable>(_ type: Reply.Type, _ body: [UInt8]) throws -> Reply {
        do {
            return try JSONDecoder().decode(Reply.self, from: Data(body))
        } catch {
            throw ClientError.malformedResponse(detail: "the answer is not the JSON expected: \(error)")
        }
    }

    func exchange(_ method: HTTPRequest.Method, _ path: String, json: (some Encodable)?) async throws -> (HTTPResponse, [UInt8]) {
        var request = HTTPRequest(method: method, scheme: "https", authority: authority, path: path)
        var body: [UInt8]?
        if let json {
            do { body = Array(try JSONEncoder().encode(json)) } catch { throw ClientError.invalidConfiguration(detail: "the request cannot be encoded: \(error)") }
            request.headerFields[.contentType] = "application/json"
        }
        return try await exchange(request, body: body)
    }

    /// Signs `request`, asking for a signed answer; sends it; verifies the answer's signature
    /// (a refusal's too, so that a forged refusal is not believed); throws a refusal's error.
    func exchange(_ request: HTTPRequest, body: [UInt8]?, timeout: Duration? = nil) async throws -> (HTTPResponse, [UInt8]) {
        var request = request
        request.headerFields[.accept] = "application/json"
        request.headerFields[.acceptSignature] = SignetClient.acceptSignature
        do {
            try await signer.sign(&request, body: body)
        } catch {
            throw ClientError.invalidConfiguration(detail: "the admin key cannot sign: \(error)")
        }
        let carrier = timeout.map { transport.with(timeout: $0) } ?? transport
        let (head, responseBody) = try await carrier.send(request, body: body)
        try await SignetClient.verifyResponse(head, bodyDigests: ContentDigest.digests(of: responseBody), answering: request, key: serverKey)
        guard head.status.code < 300 else { throw SignetClient.refusal(head, responseBody) }
        return (head, responseBody)
    }
}
