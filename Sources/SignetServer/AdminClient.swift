import Foundation
import HTTPTypes
import SignetCore
import SignetHTTP
import SignetTLS

/// Speaks the admin API over pinned TLS: every request signed by an admin key, every refusal
/// turned into ``ServerError/remote(status:code:detail:)`` with the server's problem detail.
public struct AdminClient: Sendable {
    /// `https://host:port`, without a path.
    public let server: String
    let scheme: String
    let authority: String
    /// Signs each request.
    public let signer: HTTPMessageSigner
    /// Verifies the server: chain or pinned self-signed key, hostname, pins.
    public let transport: PinnedHTTPSClient

    /// A client of `server` (an `https` URL), signing with `signer`, trusting per `transport`.
    public init(server: String, signer: HTTPMessageSigner, transport: PinnedHTTPSClient) throws(ServerError) {
        guard let url = URL(string: server), url.scheme?.lowercased() == "https", let host = url.host, !host.isEmpty,
              url.path.isEmpty || url.path == "/", url.query == nil
        else { throw .badRequest(detail: "\(server): the server must be an https URL with a host and no path, like https://127.0.0.1:8443") }
        self.server = server
        scheme = "https"
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        authority = url.port.map { "\(bracketed):\($0)" } ?? bracketed
        self.signer = signer
        self.transport = transport
    }

    public func enrol(_ enrolment: AdminAPI.Enrolment, role: Principal.Role) async throws -> AdminAPI.Enrolled {
        try await send(.post, "/v1/admin/\(Self.collection(role))", json: enrolment, as: AdminAPI.Enrolled.self)
    }

    public func list(role: Principal.Role) async throws -> [AdminAPI.Enrolled] {
        try await send(.get, "/v1/admin/\(Self.collection(role))", as: AdminAPI.EnrolledList.self).items
    }

    public func revoke(role: Principal.Role, name: String) async throws {
        try await sendExpectingNoContent(.delete, "/v1/admin/\(Self.collection(role))/\(Self.escape(name))")
    }

    public func users() async throws -> [UserAPI.Profile] {
        try await send(.get, "/v1/admin/users", as: AdminAPI.UserList.self).users
    }

    public func disableUser(email: String) async throws {
        try await sendExpectingNoContent(.post, "/v1/admin/users/\(Self.escape(email))/disable")
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
        var request = HTTPRequest(method: .post, scheme: scheme, authority: authority, path: path)
        request.headerFields[.contentType] = isBundle ? ResourceAPI.bundleType : ResourceAPI.tarType
        // The server answers after it has stored the upload: allow for the size.
        var transport = self.transport
        transport.timeout = .seconds(Int64(max(60, upload.count >> 20)))
        let response = try await exchange(request, body: upload, transport: transport)
        return (try Self.decode(ResourceRecord.self, response, from: server + path), response.head.status.code == 201)
    }

    /// Every published version of every resource.
    public func resources() async throws -> [ResourceRecord] {
        try await send(.get, "/v1/admin/resources", as: ResourceAPI.List.self).items
    }

    /// Adds the next trust root (the bytes of its file), which a threshold of the current
    /// root's keys must have signed.
    public func rotateTrust(_ root: [UInt8]) async throws {
        var request = HTTPRequest(method: .post, scheme: scheme, authority: authority, path: "/v1/admin/trust")
        request.headerFields[.contentType] = "application/json"
        _ = try await exchange(request, body: root)
    }

    static func collection(_ role: Principal.Role) -> String { role == .app ? "apps" : "admins" }

    static func escape(_ segment: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~@+")
        return segment.addingPercentEncoding(withAllowedCharacters: allowed) ?? segment
    }

    func send<Reply: Decodable>(_ method: HTTPRequest.Method, _ path: String, json: (some Encodable)? = Optional<String>.none, as type: Reply.Type) async throws -> Reply {
        try Self.decode(Reply.self, try await exchange(method, path, json: json), from: server + path)
    }

    static func decode<Reply: Decodable>(_ type: Reply.Type, _ response: HTTPSResponse, from url: String) throws -> Reply {
        do {
            return try JSONDecoder().decode(Reply.self, from: Data(response.body))
        } catch {
            throw ServerError.badRequest(detail: "\(url): the answer is not the JSON expected: \(error)")
        }
    }

    func sendExpectingNoContent(_ method: HTTPRequest.Method, _ path: String) async throws {
        _ = try await exchange(method, path, json: Optional<String>.none)
    }

    func exchange(_ method: HTTPRequest.Method, _ path: String, json: (some Encodable)?) async throws -> HTTPSResponse {
        var request = HTTPRequest(method: method, scheme: scheme, authority: authority, path: path)
        var body: [UInt8]?
        if let json {
            body = Array(try JSONEncoder().encode(json))
            request.headerFields[.contentType] = "application/json"
        }
        return try await exchange(request, body: body)
    }

    func exchange(_ request: HTTPRequest, body: [UInt8]?, transport: PinnedHTTPSClient? = nil) async throws -> HTTPSResponse {
        var request = request
        request.headerFields[.accept] = "application/json"
        try await signer.sign(&request, body: body)
        let response = try await (transport ?? self.transport).send(request, body: body)
        guard response.head.status.code < 300 else { throw Self.problem(response) }
        return response
    }

    /// The error a refusal stands for: the problem document's code and detail when there is one.
    static func problem(_ response: HTTPSResponse) -> ServerError {
        let status = response.head.status.code
        if let document = try? JSONDecoder().decode(ProblemDocument.self, from: Data(response.body)) {
            return .remote(status: status, code: document.code, detail: document.detail)
        }
        return .remote(status: status, code: "http.\(status)", detail: response.head.status.reasonPhrase)
    }
}
