import HTTPTypes
import Hummingbird
import HummingbirdAuth
import Logging
import NIOCore
import NIOHTTP1
import SignetAPI
import SignetBundle
import SignetCore
import SignetHTTP
import SignetHummingbird

/// The API's router: `/v1/health` unsigned; everything else under `/v1/` behind the RFC 9421
/// authenticator, whose keys are the enrolled apps and admins.
struct ServerRoutes: Sendable {
    let configuration: ServerConfiguration
    let store: ServerStore
    let directory: PrincipalDirectory
    /// Session lookups, remembered for ``ServerConfiguration/revocationLatency``.
    let sessions: SessionDirectory
    /// The in-memory replay cache of a node on SQLite (nil on PostgreSQL, where nonces are
    /// written in batches): prepared before the server listens.
    let localReplayCache: LocalReplayCache?
    /// What `/metrics` reports.
    let metrics: ServerMetrics
    let responder: ServerResponder
    let passwords: PasswordWork
    let verifier: HTTPMessageVerifier
    let publisher: ResourcePublisher

    /// Refuses requests addressed to another server; nil behind a proxy, where signatures are
    /// verified against ``ServerConfiguration/publicAuthority`` whatever `Host` says, and for a
    /// server that knows no name of its own (``SignetServer`` warns of that at start).
    let authorityCheck: AuthorityMiddleware?

    init(configuration: ServerConfiguration, store: ServerStore, responseSigner: (any Signer)?, authorities: ServerAuthorities?) throws {
        self.configuration = configuration
        if configuration.publicAuthority == nil, let authorities, !authorities.hosts.isEmpty {
            authorityCheck = AuthorityMiddleware(authorities: authorities, scheme: configuration.publicScheme ?? "https")
        } else {
            authorityCheck = nil
        }
        self.store = store
        let metrics = ServerMetrics()
        self.metrics = metrics
        directory = PrincipalDirectory(store: store, maximumAge: configuration.revocationLatency, trust: configuration.attestation)
        var responder = ServerResponder(
            signer: responseSigner, publicScheme: configuration.publicScheme, publicAuthority: configuration.publicAuthority,
            policy: configuration.signaturePolicy)
        responder.metrics = metrics
        self.responder = responder
        passwords = try PasswordWork(
            hasher: configuration.passwordHasher, workers: configuration.limits.passwordWorkers, queue: configuration.limits.passwordQueue)
        var limits = BundleLimits()
        limits.maximumTotalSize = configuration.maximumResourceSize
        publisher = ResourcePublisher(store: store, signer: responseSigner, limits: limits)
        sessions = SessionDirectory(store: store, maximumAge: configuration.revocationLatency)
        let nonceCache: any NonceCache
        if store.database.isSQLite {
            let local = LocalReplayCache(store: store, capacity: configuration.limits.replayCacheCapacity)
            (localReplayCache, nonceCache) = (local, local)
        } else {
            (localReplayCache, nonceCache) = (nil, SharedReplayCache(store: store, metrics: metrics))
        }
        let (gate, sessions, local) = (passwords.gate, sessions, localReplayCache)
        metrics.sample("signet_password_jobs_running") { Double(gate.load.running) }
        metrics.sample("signet_password_jobs_waiting") { Double(gate.load.waiting) }
        metrics.sample("signet_session_cache_entries") { Double(sessions.count) }
        if let local { metrics.sample("signet_replay_cache_nonces") { Double(local.count) } }
        store.database.observeConnectionWait { metrics.databaseWait.recordNanoseconds($0.nanoseconds) }
        verifier = HTTPMessageVerifier(keys: directory, policy: configuration.signaturePolicy, nonceCache: nonceCache, clock: store.clock)
    }

    func router() -> Router<ServerRequestContext> {
        let router = Router(context: ServerRequestContext.self)
        router.add(middleware: MetricsMiddleware(metrics: metrics))
        router.add(middleware: ProblemMiddleware(
            responder: responder, limit: configuration.maximumBodySize, bodyReadTimeout: configuration.limits.bodyReadTimeout))
        router.add(middleware: ClientAddressMiddleware(trusted: configuration.trustedProxies))
        router.get("/v1/health") { request, _ in
            try await responder.json(["status": "ok"], for: request)
        }
        var signed = router.group("/v1")
        if let authorityCheck { signed = signed.add(middleware: authorityCheck) }
        signed = signed.add(middleware: authenticator())
        addUserRoutes(to: signed)
        addDeviceRoutes(to: signed)
        addAdminRoutes(to: signed.group("admin"))
        addResourceRoutes(signed: signed, root: router)
        return router
    }

    /// Verifies the signature (401 with `Accept-Signature` when it fails) and then refuses a
    /// revoked key with 403.
    func authenticator() -> HTTPSignatureAuthenticator<ServerRequestContext> {
        let routes = self
        return HTTPSignatureAuthenticator(
            verifier: verifier, maximumBodySize: configuration.maximumBodySize,
            publicScheme: configuration.publicScheme, publicAuthority: configuration.publicAuthority
        ) { verified, _, _ in
            try await routes.principal(signing: verified)
        }
    }

    /// The enrolled, unrevoked principal whose key made `verified`. A signature with a counter
    /// (an App Attest device's) is accepted only if the counter rises above the stored one, by a
    /// compare-and-set on the database: of two requests with one counter, on any nodes, one passes.
    func principal(signing verified: VerifiedHTTPSignature) async throws -> Principal {
        guard let principal = try await directory.principal(for: verified.keyID) else {
            throw ServerError.unauthorized(detail: "unknown keyid \"\(verified.keyID.prefix(80))\"")
        }
        if let device = principal.device {
            if let revoked = device.revokedAt ?? principal.revokedAt {
                throw ServerError.revoked(detail: device.revokedAt != nil
                    ? "the device \(device.id) of the app \(principal.name) has been revoked (at \(revoked)); enrol it again"
                    : "the app \(principal.name) has been revoked")
            }
            // Settings tightened after the enrolment apply to it: a device they no longer admit
            // is refused until it enrols again (attack round).
            if let unmet = device.unmet(by: principal.attestation) {
                throw ServerError.revoked(detail: "the device \(device.id) no longer meets the app \(principal.name)'s attestation settings (\(unmet)); enrol it again")
            }
            if let counter = verified.counter {
                guard try await store.devices.advanceCounter(keyID: device.keyID, to: Int64(counter)) else {
                    throw ServerError.unauthorized(detail: "the assertion's counter \(counter) is not above the last one accepted: a replay, or the device was revoked")
                }
            }
            return principal
        }
        guard !principal.isRevoked else {
            throw ServerError.revoked(detail: "the \(principal.role.rawValue) \(principal.name) has been revoked")
        }
        return principal
    }
}

/// Turns every error into an RFC 9457 problem document with the right status — a
/// ``ServerError`` (a missing or ended session with `WWW-Authenticate: Bearer`), Hummingbird's
/// `HTTPError` (the authenticator's 401/413/503, a 404 for an unknown path) — and logs the unexpected ones.
struct ProblemMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext
    let responder: ServerResponder
    let limit: Int
    let bodyReadTimeout: Duration

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            // RFC 9112 §3.2: a request with more than one Host is refused (the conversion to
            // HTTPRequest keeps the first as the authority and leaves the others as fields).
            if request.headers[Self.host] != nil {
                throw ServerError.badRequest(detail: "the request has more than one Host field")
            }
            response = try await next(request, context)
        } catch let error as ServerError {
            if case .unavailable(let detail) = error {
                context.logger.error("unavailable", metadata: ["detail": "\(detail)"])
            }
            // RFC 6750: a missing or ended session is a Bearer challenge.
            let headers: HTTPFields = error.problemCode == .sessionEnded ? [.wwwAuthenticate: "Bearer"] : [:]
            response = await responder.problem(error, for: request, headers: headers)
        } catch is NIOTooManyBytesError {
            response = await responder.problem(.payloadTooLarge(limit: limit), for: request)
        } catch is RequestBodyTimeout {
            response = await responder.problem(.requestTimeout(limit: bodyReadTimeout), for: request)
        } catch let error as HTTPParserError {
            // The client's framing is broken (a malformed chunk, a bad header): its mistake, and
            // the connection cannot carry another request.
            response = await responder.problem(.badRequest(detail: "the request is not valid HTTP/1.1 (\(error))"), for: request, headers: [.connection: "close"])
        } catch let error as HTTPError {
            let code = Self.code(for: error.status)
            if code == .unavailable { context.logger.error("unavailable", metadata: ["detail": "\(error)"]) }
            response = await responder.problem(
                code: code, detail: code == .unavailable ? ServerError.unavailable(detail: "").description : error.body ?? error.status.reasonPhrase,
                for: request, headers: error.headers)
        } catch is CancellationError {
            // The server is stopping and this request's task was cancelled: nothing failed.
            response = await responder.problem(.unavailable(detail: "the server is shutting down"), for: request, headers: [.connection: "close"])
        } catch {
            context.logger.error("unexpected failure", metadata: ["error": "\(String(reflecting: error))"])
            response = await responder.problem(.unavailable(detail: "\(error)"), for: request)
        }
        response.headers[.requestID] = context.id
        // A refused request's body, or one sent to a route that takes none, is not worth
        // reading: unless it is small (then the connection is kept, its rest read and dropped,
        // which costs less than the reconnect), the connection ends after the answer instead of
        // draining what may be a gigabyte sent to nobody.
        if response.status.code >= 400 || [.get, .head, .delete, .options].contains(request.method),
            !Self.drainsCheaply(request.headers)
        {
            response.headers[.connection] = "close"
        }
        return response
    }

    static let host = HTTPField.Name("Host")!

    /// The largest unread body kept on a connection after its answer (read and dropped), as
    /// Go's `net/http` does with 256 KiB: less than a TLS reconnect costs client and server.
    static let drainedBodyLimit = 256 << 10

    /// Whether a request with these fields carries no body, or one with a stated length within
    /// ``drainedBodyLimit`` (a chunked body's size is unknown, so it never is).
    static func drainsCheaply(_ fields: HTTPFields) -> Bool {
        guard let length = fields[.contentLength] else { return fields[.transferEncoding] == nil }
        return Int(length).map { (0...drainedBodyLimit).contains($0) } ?? false
    }

    /// The code of a status Hummingbird answered with (Hummingbird never answers 405); a 5xx
    /// is answered as ``ProblemCode/unavailable`` (503), never as a 500.
    static func code(for status: HTTPResponse.Status) -> ProblemCode {
        switch status.code {
        case 401: return .unauthorized
        case 403: return .forbidden
        case 404: return .notFound
        case 408: return .requestTimeout
        case 413: return .payloadTooLarge
        case 415: return .unsupportedMediaType
        case 429: return .rateLimited
        case 500...: return .unavailable
        default: return .badRequest
        }
    }
}

extension HTTPField.Name {
    /// `Request-Id`: the id the server's logs carry for the request.
    static let requestID = HTTPField.Name("Request-Id")!
}
