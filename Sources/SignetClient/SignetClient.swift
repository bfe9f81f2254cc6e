import Foundation
import HTTPTypes
@_exported import SignetAPI
import SignetCore
import SignetHTTP

/// What an app links to talk to a Signet server: every request signed with the app's key over a
/// pinned transport, responses checked against the server's key, the session kept in a
/// ``SessionStore`` (the vault) and restored on start, and the sign-in state as a stream.
///
/// ```swift
/// let client = try SignetClient(configuration: configuration, transport: PinnedTransport(trust: trust),
///                               sessions: VaultSessionStore(vault: vault))
/// for await state in await client.authStates() { … }      // in a task: signed in / signed out
/// try await client.register(email: "ann@example.com", password: password, displayName: "Ann")
/// try await client.signIn(email: "ann@example.com", password: password)
/// let me = try await client.me()
/// try await client.signOut()
/// ```
public actor SignetClient {
    let configuration: ClientConfiguration
    let transport: any ClientTransport
    let sessions: any SessionStore
    let scheme = "https"
    let authority: String
    /// The session store's key: the server's host and port.
    public nonisolated let serverID: String
    private var session: SavedSession?
    /// The one restore of the saved session, which every call awaits first (so no call runs
    /// before it, and a sign-in during it is not overwritten by it).
    private var restoring: Task<Void, Never>?
    private var state: AuthState = .signedOut(reason: .none)
    private var observers: [UUID: AsyncStream<AuthState>.Continuation] = [:]
    /// The resources being fetched now (one fetch per name at a time).
    var fetching: Set<String> = []
    /// Device-signed exchanges go one at a time, so that App Attest counters reach the server
    /// in the order they were made: whether one is under way, and those waiting, in order.
    private var deviceBusy = false
    private var deviceWaiters: [CheckedContinuation<Void, Never>] = []

    /// A client of `configuration.server` over `transport`, keeping sessions in `sessions`.
    public init(configuration: ClientConfiguration, transport: any ClientTransport, sessions: any SessionStore) throws {
        authority = try Self.authority(of: configuration.server)
        serverID = authority
        self.configuration = configuration
        self.transport = transport
        self.sessions = sessions
    }

    /// The authority (`host:port`) of `server`, which must be an https URL with a host and no
    /// path.
    static func authority(of server: String) throws -> String {
        guard let url = URL(string: server), url.scheme?.lowercased() == "https", let host = url.host, !host.isEmpty,
              url.path.isEmpty || url.path == "/", url.query == nil
        else { throw ClientError.invalidConfiguration(detail: "\(server): the server must be an https URL with a host and no path, like https://127.0.0.1:8443") }
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return url.port.map { "\(bracketed):\($0)" } ?? bracketed
    }

    // MARK: The sign-in state

    /// A stream of the sign-in state: the current one first, then every change — from this
    /// client's calls, and from the server answering that a session ended.
    public func authStates() async -> AsyncStream<AuthState> {
        await restoreIfNeeded()
        let (stream, continuation) = AsyncStream.makeStream(of: AuthState.self)
        let id = UUID()
        observers[id] = continuation
        continuation.yield(state)
        continuation.onTermination = { [weak self] _ in Task { await self?.removeObserver(id) } }
        return stream
    }

    /// The current state (the saved session restored first).
    public var authState: AuthState {
        get async {
            await restoreIfNeeded()
            return state
        }
    }

    private func removeObserver(_ id: UUID) { observers[id] = nil }

    private func publish(_ new: AuthState) {
        guard new != state else { return }
        state = new
        for continuation in observers.values { continuation.yield(new) }
    }

    deinit {
        for continuation in observers.values { continuation.finish() }
    }

    private func restoreIfNeeded() async {
        if restoring == nil {
            restoring = Task { await self.restore() }
        }
        await restoring?.value
    }

    /// Loads the saved session (a store that cannot be read counts as none, and is read again
    /// at the next sign-in, which replaces it).
    private func restore() async {
        guard session == nil, let saved = try? await sessions.load(server: serverID) else { return }
        session = saved
        publish(.signedIn(email: saved.email))
    }

    // MARK: The API

    /// Registers a user; returns the profile.
    @discardableResult
    public func register(email: String, password: String, displayName: String) async throws -> UserProfile {
        let registration = UserAPI.Registration(email: email, password: password, displayName: displayName)
        let (head, body) = try await send(.post, APIOperation.register.path, json: registration)
        try check(head, body, expecting: 201)
        return try decode(UserProfile.self, body)
    }

    /// Signs in: the token goes to the session store and the state to signed-in.
    @discardableResult
    public func signIn(email: String, password: String) async throws -> UserProfile {
        await restoreIfNeeded()
        let (head, body) = try await send(.post, APIOperation.signIn.path, json: UserAPI.SignIn(email: email, password: password))
        if let problem = Self.problem(body, head), problem.problemCode == .invalidCredentials { throw ClientError.wrongCredentials(detail: problem.detail) }
        try check(head, body, expecting: 201)
        let reply = try decode(UserAPI.Session.self, body)
        let saved = SavedSession(email: reply.user.email, token: reply.token)
        try await sessions.save(saved, server: serverID)
        session = saved
        publish(.signedIn(email: saved.email))
        return reply.user
    }

    /// The signed-in user's profile; ``ClientError/notSignedIn(request:)`` without a session,
    /// ``ClientError/sessionEnded(detail:)`` (and the state signed-out) when the server no
    /// longer knows it.
    public func me() async throws -> UserProfile {
        let (head, body) = try await sendWithSession(.get, APIOperation.me.path)
        try check(head, body, expecting: 200)
        return try decode(UserProfile.self, body)
    }

    /// Signs out: the server ends the session, the store forgets it, the state goes to
    /// signed-out. A session the server had already ended is signed out all the same.
    ///
    /// The client forgets the session whatever the server answers (a revoked app, a server out
    /// of reach): the error is reported after.
    public func signOut() async throws {
        await restoreIfNeeded()
        guard let token = session?.token else { throw ClientError.notSignedIn(request: "sign-out") }
        do {
            let (head, body) = try await sendWithSession(.delete, APIOperation.signOut.path)
            try check(head, body, expecting: 204)
        } catch ClientError.sessionEnded {
            return
        } catch {
            try await endSession(reason: .signedOut, token: token)
            throw error
        }
        try await endSession(reason: .signedOut, token: token)
    }

    // MARK: Requests

    private func sendWithSession(_ method: HTTPRequest.Method, _ path: String) async throws -> (HTTPResponse, [UInt8]) {
        await restoreIfNeeded()
        guard let session else { throw ClientError.notSignedIn(request: "\(method) \(path)") }
        let answer = try await send(method, path, json: Optional<String>.none, bearer: session.token)
        // Decided on the problem's code, which the server's signature covers, not on the
        // (unsigned) WWW-Authenticate header.
        if let problem = Self.problem(answer.1, answer.0), problem.problemCode == .sessionEnded {
            try await endSession(reason: .sessionEnded, token: session.token)
            throw ClientError.sessionEnded(detail: problem.detail)
        }
        return answer
    }

    /// Forgets the session that used `token` — not a newer one a sign-in made meanwhile — and
    /// reports the change before touching the store, so the state is right even when the
    /// store fails.
    private func endSession(reason: AuthState.SignOutReason, token: String) async throws {
        guard session?.token == token else { return }
        session = nil
        publish(.signedOut(reason: reason))
        try await sessions.delete(server: serverID)
    }

    /// Which key signs a request: the device's once enrolled (else the app's), or the app's.
    enum RequestSigner {
        case device, app
    }

    func send(
        _ method: HTTPRequest.Method, _ path: String, json: (some Encodable)?, bearer: String? = nil, signer: RequestSigner = .device
    ) async throws -> (HTTPResponse, [UInt8]) {
        var request = HTTPRequest(method: method, scheme: scheme, authority: authority, path: path)
        var body: [UInt8]?
        do {
            if let json {
                body = Array(try JSONEncoder().encode(json))
                request.headerFields[.contentType] = "application/json"
            }
        } catch {
            throw ClientError.invalidConfiguration(detail: "the request cannot be encoded: \(error)")
        }
        request.headerFields[.accept] = "application/json"
        if let bearer { request.headerFields[.authorization] = "Bearer \(bearer)" }
        let deviceKey = signer == .device ? try await enrolledDevice() : nil
        if deviceKey != nil { await acquireDevice() }
        defer { if deviceKey != nil { releaseDevice() } }
        try await sign(&request, body: body, device: deviceKey)
        let (head, responseBody) = try await transport.send(request, body: body)
        if let serverKey = configuration.serverKey {
            try await Self.verifyResponse(head, bodyDigests: ContentDigest.digests(of: responseBody), answering: request, key: serverKey)
        }
        if let deviceKey, let problem = Self.problem(responseBody, head), problem.problemCode == .revoked {
            // The device's key is worth nothing now: forget it, so that the app enrols again.
            try? await configuration.device?.setEnrolledKeyID(nil)
            throw ClientError.revokedDevice(detail: "\(deviceKey.keyID): \(problem.detail)")
        }
        return (head, responseBody)
    }

    /// The enrolled device and its key id, nil without a device or before its enrolment.
    func enrolledDevice() async throws -> (identity: any DeviceIdentity, keyID: String)? {
        guard let device = configuration.device else { return nil }
        let keyID: String?
        do {
            keyID = try await device.enrolledKeyID()
        } catch {
            throw ClientError.storage(detail: "the device's key id cannot be read: \(error)")
        }
        return keyID.map { (device, $0) }
    }

    private func acquireDevice() async {
        guard deviceBusy else {
            deviceBusy = true
            return
        }
        await withCheckedContinuation { deviceWaiters.append($0) }
    }

    private func releaseDevice() {
        if deviceWaiters.isEmpty {
            deviceBusy = false
        } else {
            deviceWaiters.removeFirst().resume()
        }
    }

    /// Signs `request` with the app's key, or `device`'s when given, covering `components` (else
    /// the defaults: method, target URI, body digest), and asks for a response signature when
    /// responses are checked.
    func sign(
        _ request: inout HTTPRequest, body: [UInt8]?, components: [SignatureComponent]? = nil,
        device: (identity: any DeviceIdentity, keyID: String)? = nil
    ) async throws {
        if configuration.serverKey != nil {
            request.headerFields[.acceptSignature] = Self.acceptSignature
        }
        var components = components
        // The session token is covered whatever else is: a token swapped under the signature
        // would otherwise be answered for as if this client had sent it.
        let authorization = SignatureComponent("authorization")
        if request.headerFields[.authorization] != nil, let chosen = components, !chosen.contains(authorization) {
            components = chosen + [authorization]
        }
        do {
            var signer = device.map { HTTPMessageSigner(key: .custom(DeviceSigningKey(device: $0.identity)), keyID: $0.keyID) }
                ?? HTTPMessageSigner(key: .signer(configuration.appSigner))
            signer.components = components
            try await signer.sign(&request, body: body)
        } catch {
            throw ClientError.invalidConfiguration(detail: "the \(device == nil ? "app's" : "device's") key cannot sign: \(error)")
        }
    }

    /// What a client asks the server to sign in its answers (`Accept-Signature`).
    static let acceptSignature = APISignatureRules.responseLabel + #"=("@status" "@method";req "@target-uri";req "signature";req;key="sig1")"#

    /// Checks the response's `server` signature: the status, the body's digest when there is
    /// a body, and the request it answers — its method, URL and its own signature, so an
    /// answer to another request (even to the same URL) is refused.
    static func verifyResponse(
        _ head: HTTPResponse, bodyDigests: [ContentDigest.Algorithm: [UInt8]]?, answering request: HTTPRequest, key: PublicKey,
        requiring extra: [SignatureComponent] = []
    ) async throws {
        var policy = HTTPSignaturePolicy()
        var method = SignatureComponent.method
        method.fromRequest = true
        var target = SignatureComponent.targetURI
        target.fromRequest = true
        var requestSignature = SignatureComponent("signature")
        requestSignature.key = "sig1"
        requestSignature.fromRequest = true
        // A Retry-After the client would act on must be the server's.
        let retryAfter = SignatureComponent("retry-after")
        let fields = head.headerFields[.retryAfter] != nil && !extra.contains(retryAfter) ? [retryAfter] : []
        policy.requiredComponents = [.status, method, target, requestSignature] + extra + fields
        policy.requireNonce = false
        let verifier = HTTPMessageVerifier(keys: StaticHTTPSignatureKeys(publicKeys: [key]), policy: policy)
        do {
            _ = try await verifier.verify(
                .response(head, answering: request), bodyDigests: bodyDigests, label: APISignatureRules.responseLabel)
        } catch {
            throw ClientError.responseSignatureInvalid(detail: String(describing: error))
        }
    }

    /// Throws the error a refusal stands for, unless `head` has `status`.
    func check(_ head: HTTPResponse, _ body: [UInt8], expecting status: Int) throws {
        guard head.status.code != status else { return }
        throw Self.refusal(head, body)
    }

    /// The error a refusal stands for, decided on the problem document's code alone (never on
    /// its detail, which is for people and may change).
    static func refusal(_ head: HTTPResponse, _ body: [UInt8]) -> ClientError {
        let problem = problem(body, head)
        let detail = problem?.detail ?? head.status.reasonPhrase
        switch problem?.problemCode {
        case .unauthorized?, .wrongAuthority?: return .signatureRefused(detail: detail)
        case .revoked?: return .revokedApp(detail: detail)
        case .attestationRequired?: return .attestationRequired(detail: detail)
        case .attestationRefused?, .challengeExpired?: return .attestationRefused(detail: detail)
        case .sessionEnded?: return .sessionEnded(detail: detail)
        case .invalidCredentials?: return .wrongCredentials(detail: detail)
        // Retry-After is covered by the answer's signature when responses are checked; a value
        // is taken only within reason (1 s to a day) all the same, else 60 s.
        case .rateLimited?: return .rateLimited(retryAfter: head.headerFields[.retryAfter].flatMap { Int($0) }.flatMap { (1...86_400).contains($0) ? $0 : nil } ?? 60)
        case nil where head.status.code == 401: return .signatureRefused(detail: detail)
        default: return .refused(status: head.status.code, code: problem?.code ?? "http.\(head.status.code)", detail: detail)
        }
    }

    /// The problem document of a refusal (`head` is not a success), nil when the body is none.
    static func problem(_ body: [UInt8], _ head: HTTPResponse) -> ProblemDocument? {
        guard head.status.code >= 400 else { return nil }
        return try? JSONDecoder().decode(ProblemDocument.self, from: Data(body))
    }

    func decode<T: Decodable>(_ type: T.Type, _ body: [UInt8]) throws -> T {
        do {
            return try JSONDecoder().decode(T.self, from: Data(body))
        } catch {
            throw ClientError.malformedResponse(detail: "\(error)")
        }
    }
}
