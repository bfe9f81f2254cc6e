import HTTPTypes

/// Every operation of the API: its method, path, who may call it and what it can answer. The
/// server's router serves exactly these, the clients call them, and the suite holds
/// `docs/api/openapi.yaml` to this table (same operations, same statuses).
public enum APIOperation: String, CaseIterable, Sendable {
    case health, register, signIn, signOut, me, signOutEverywhere
    case enrolApp, listApps, revokeApp, enrolAdmin, listAdmins, revokeAdmin
    case listUsers, disableUser, revokeUserSessions
    case publishResource, listResources, getResource, getResourceVersion, trustChain, rotateTrust
    case createDeviceChallenge, enrolDevice, listDevices, revokeDevice, setAppAttestation

    /// Who may call an operation.
    public enum Caller: Sendable {
        /// Anyone; not signed (`/v1/health`).
        case anyone
        /// A request signed by an enrolled app, or by a device enrolled for it.
        case app
        /// Signed by an app, with a user's session (`Authorization: Bearer`).
        case appWithSession
        /// Signed by an enrolled app (no session needed) or an admin: resources and trust.
        case appOrAdmin
        /// Signed by an admin.
        case admin
    }

    /// The method.
    public var method: HTTPRequest.Method {
        switch self {
        case .health, .me, .listApps, .listAdmins, .listUsers, .listResources, .getResource, .getResourceVersion, .trustChain, .listDevices:
            return .get
        case .register, .signIn, .enrolApp, .enrolAdmin, .disableUser, .publishResource, .rotateTrust, .createDeviceChallenge, .enrolDevice:
            return .post
        case .signOut, .signOutEverywhere, .revokeApp, .revokeAdmin, .revokeUserSessions, .revokeDevice: return .delete
        case .setAppAttestation: return .put
        }
    }

    /// The path template, OpenAPI style (`/v1/admin/apps/{name}`).
    public var path: String {
        switch self {
        case .health: return "/v1/health"
        case .register: return "/v1/users"
        case .signIn: return "/v1/sessions"
        case .signOut: return "/v1/sessions/current"
        case .me: return "/v1/me"
        case .signOutEverywhere: return "/v1/me/sessions"
        case .enrolApp, .listApps: return "/v1/admin/apps"
        case .revokeApp: return "/v1/admin/apps/{name}"
        case .enrolAdmin, .listAdmins: return "/v1/admin/admins"
        case .revokeAdmin: return "/v1/admin/admins/{name}"
        case .listUsers: return "/v1/admin/users"
        case .disableUser: return "/v1/admin/users/{email}/disable"
        case .revokeUserSessions: return "/v1/admin/users/{email}/sessions"
        case .publishResource: return "/v1/admin/resources/{name}"
        case .listResources: return "/v1/admin/resources"
        case .getResource: return "/v1/resources/{name}"
        case .getResourceVersion: return "/v1/resources/{name}/{version}"
        case .trustChain: return "/v1/trust"
        case .rotateTrust: return "/v1/admin/trust"
        case .createDeviceChallenge: return "/v1/devices/challenges"
        case .enrolDevice: return "/v1/devices"
        case .listDevices: return "/v1/admin/devices"
        case .revokeDevice: return "/v1/admin/devices/{id}"
        case .setAppAttestation: return "/v1/admin/apps/{name}/attestation"
        }
    }

    /// Who may call it.
    public var caller: Caller {
        switch self {
        case .health: return .anyone
        case .register, .signIn, .createDeviceChallenge, .enrolDevice: return .app
        case .signOut, .me, .signOutEverywhere: return .appWithSession
        case .getResource, .getResourceVersion, .trustChain: return .appOrAdmin
        default: return .admin
        }
    }

    /// The statuses of its successful answers.
    public var successStatuses: [Int] {
        switch self {
        case .register, .signIn, .enrolApp, .enrolAdmin, .rotateTrust, .createDeviceChallenge, .enrolDevice: return [201]
        case .signOut, .revokeApp, .revokeAdmin, .disableUser, .revokeDevice: return [204]
        case .publishResource: return [200, 201]
        case .getResource, .getResourceVersion: return [200, 206, 304]
        default: return [200]
        }
    }

    /// The problem codes it can answer with: those of any signed request (a broken request, a
    /// refused or revoked signature, a body too large or too slow, a database down), a key of
    /// the wrong role or a disabled account where roles apply, and the ones its own work adds.
    public var problemCodes: Set<ProblemCode> {
        // The two-Host refusal and a server shutting down reach every route.
        if self == .health { return [.badRequest, .unavailable] }
        var codes: Set<ProblemCode> = [.badRequest, .unauthorized, .wrongAuthority, .revoked, .payloadTooLarge, .requestTimeout, .unavailable]
        if caller != .appOrAdmin { codes.insert(.forbidden) }
        // An app that requires attestation takes its user routes only from enrolled devices.
        if [.register, .signIn, .signOut, .me, .signOutEverywhere].contains(self) { codes.insert(.attestationRequired) }
        switch self {
        case .register: codes.formUnion([.unsupportedMediaType, .unprocessable, .conflict, .rateLimited, .overloaded])
        case .signIn: codes.formUnion([.unsupportedMediaType, .unprocessable, .invalidCredentials, .rateLimited, .overloaded])
        case .signOut, .me, .signOutEverywhere: codes.insert(.sessionEnded)
        case .createDeviceChallenge: codes.insert(.rateLimited)
        case .enrolDevice: codes.formUnion([.unsupportedMediaType, .unprocessable, .conflict, .attestationRefused, .challengeExpired])
        case .revokeDevice: codes.insert(.notFound)
        case .listDevices: codes.insert(.unprocessable)
        case .setAppAttestation: codes.formUnion([.notFound, .unprocessable, .unsupportedMediaType])
        case .enrolApp, .enrolAdmin: codes.formUnion([.unsupportedMediaType, .unprocessable, .conflict])
        case .revokeApp: codes.insert(.notFound)
        case .revokeAdmin: codes.formUnion([.notFound, .conflict])
        case .disableUser, .revokeUserSessions: codes.formUnion([.notFound, .unprocessable])
        case .publishResource, .rotateTrust: codes.formUnion([.unprocessable, .conflict])
        case .getResource, .getResourceVersion: codes.formUnion([.notFound, .rangeNotSatisfiable])
        case .health, .listApps, .listAdmins, .listUsers, .listResources, .trustChain: break
        }
        return codes
    }

    /// Every status it can answer with.
    public var statuses: Set<Int> { Set(successStatuses).union(problemCodes.map(\.status)) }

    /// The operation serving `method` on `path` (a concrete path, without its query), nil for
    /// none.
    public static func matching(method: HTTPRequest.Method, path: String) -> APIOperation? {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        return allCases.first { operation in
            guard operation.method == method else { return false }
            let template = operation.path.split(separator: "/", omittingEmptySubsequences: false)
            guard template.count == segments.count else { return false }
            return zip(template, segments).allSatisfy { pattern, segment in
                pattern.hasPrefix("{") ? !segment.isEmpty : pattern == segment
            }
        }
    }
}

/// What every signed request must carry (RFC 9421): the server's verifier demands it and the
/// clients' signers give it.
public enum APISignatureRules {
    /// Components every request signature covers.
    public static let requiredComponents = ["@method", "@target-uri"]
    /// Fields a signature must cover whenever the request carries them: a bearer token swapped
    /// under a valid signature would otherwise be answered for.
    public static let fieldsCoveredWhenPresent = ["authorization"]
    /// A request with a body covers `content-digest`, checked against the body.
    public static let contentDigestWithBody = true
    /// A nonce is required (replays are refused on every node) and so is `created`.
    public static let requiresNonce = true
    /// The label of the server's response signature, which a client asks for with
    /// `Accept-Signature`.
    public static let responseLabel = "server"
}
