import SignetAPI
import Foundation
import HTTPTypes
import Hummingbird
import SignetCore

extension ServerRoutes {
    /// `POST /v1/users`, `POST /v1/sessions`, `DELETE /v1/sessions/current`, `GET /v1/me`,
    /// `DELETE /v1/me/sessions`: every one signed by an app.
    func addUserRoutes(to group: RouterGroup<ServerRequestContext>) {
        group.post("users") { request, context in
            _ = try context.userCaller()
            let body = try await ServerRequestBody.decode(
                UserAPI.Registration.self, from: request, limit: configuration.maximumBodySize)
            let email = try UserInput.normalizedEmail(body.email)
            try UserInput.checkPassword(body.password, allowed: configuration.passwordLength)
            let name = try UserInput.displayName(
                body.displayName, maximum: configuration.maximumDisplayNameLength, maximumBytes: configuration.maximumDisplayNameBytes)
            try await countRegistration(from: context.clientAddress)
            // Hashed before the address is looked up: a taken address costs what a new one
            // costs, so the answer's timing does not tell which addresses have accounts.
            let hash: String
            do {
                hash = try await passwords.hash(body.password)
            } catch {
                if case ServerError.overloaded = error { try await forgiveRegistration(from: context.clientAddress) }
                throw error
            }
            // Taken also by an account stored, before the current rules, in another form of it.
            if try await store.users.find(anyOf: UserInput.lookupForms(body.email)) != nil {
                throw ServerError.conflict(detail: "an account with this e-mail address already exists")
            }
            let user = UserRecord(id: UUID().uuidString.lowercased(), email: email, displayName: name, passwordHash: hash, createdAt: store.now)
            try await store.users.add(user)
            return try await responder.json(Self.profile(user), status: .created, for: request)
        }

        group.post("sessions") { request, context in
            let app = try context.userCaller()
            let body = try await ServerRequestBody.decode(UserAPI.SignIn.self, from: request, limit: configuration.maximumBodySize)
            let forms = try UserInput.lookupForms(body.email)
            guard body.password.utf8.count <= PasswordHasher.maximumPasswordLength else {
                throw ServerError.unprocessable(field: "password", detail: "is too long")
            }
            let attempt = try await countSignIn(email: forms[0], from: context.clientAddress)
            let user = try await store.users.find(anyOf: forms)
            // An unknown address is checked against a decoy hash: it costs what a wrong password
            // costs. An empty password is wrong for every account and needs no hashing.
            let matches: Bool
            do {
                matches = body.password.isEmpty ? false : try await passwords.verify(body.password, against: user?.passwordHash)
            } catch {
                if case ServerError.overloaded = error { try await attempt.notTried() }
                throw error
            }
            guard let user, matches else {
                try await attempt.failed()
                throw ServerError.invalidCredentials(email: forms[0])
            }
            try await attempt.succeeded()
            guard user.disabledAt == nil else { throw ServerError.forbidden(detail: "this account is disabled") }
            if (try? configuration.passwordHasher.needsRehash(user.passwordHash)) == true {
                try await store.users.updatePasswordHash(userID: user.id, to: try await passwords.hash(body.password))
            }
            let token = SessionToken.make()
            let now = store.now
            let session = SessionRecord(
                tokenHash: SessionToken.hash(token), userID: user.id, app: app.name, createdAt: now,
                expiresAt: now + configuration.sessionLifetime.wholeSeconds, device: app.device?.keyID)
            try await store.sessions.add(session, keepingAtMost: configuration.maximumSessionsPerAccount)
            // The oldest sessions past the limit may just have ended.
            sessions.forget(userID: user.id)
            let reply = UserAPI.Session(token: token, expiresAt: session.expiresAt, user: Self.profile(user))
            return try await responder.json(reply, status: .created, for: request, headers: [.cacheControl: "no-store"])
        }

        group.delete("sessions/current") { request, context in
            let app = try context.userCaller()
            let (session, _) = try await signedInUser(request, app: app)
            // Also when the call fails after its commit: this node must not answer from memory.
            defer { sessions.forget(tokenHash: session.tokenHash) }
            try await store.sessions.delete(tokenHash: session.tokenHash)
            return try await responder.empty(for: request)
        }

        group.get("me") { request, context in
            let app = try context.userCaller()
            let (_, user) = try await signedInUser(request, app: app)
            return try await responder.json(Self.profile(user), for: request, headers: [.cacheControl: "no-store"])
        }

        group.delete("me/sessions") { request, context in
            let app = try context.userCaller()
            let (_, user) = try await signedInUser(request, app: app)
            // Also when the call fails after its commit: this node must not answer from memory.
            defer { sessions.forget(userID: user.id) }
            let count = try await store.sessions.deleteAll(userID: user.id)
            return try await responder.json(UserAPI.Revoked(revoked: count), for: request)
        }
    }

    /// The session of the request's bearer token and its user: 401 (with
    /// `WWW-Authenticate: Bearer`) when there is no token, it is unknown, expired or revoked,
    /// or it was given to another app than the one signing (a token is bound to its app, so a
    /// revoked app's sessions cannot be carried on through another), or to another device.
    func signedInUser(_ request: Request, app: Principal) async throws -> (SessionRecord, UserRecord) {
        guard let token = SessionToken.bearer(in: request.headers) else {
            throw ServerError.sessionEnded(detail: "sign in first: the request has no session token (Authorization: Bearer)")
        }
        guard let (session, user) = try await sessions.session(tokenHash: SessionToken.hash(token)) else {
            throw ServerError.sessionEnded(detail: "the session has ended or does not exist; sign in again")
        }
        guard session.app == app.name else {
            throw ServerError.sessionEnded(detail: "the session was started by another app; sign in again from this one")
        }
        // A session started from a device is honoured only in that device's requests, one
        // started with the app key only in the app key's: a token lifted from one install is
        // worth nothing from another.
        guard session.device == app.device?.keyID else {
            throw ServerError.sessionEnded(detail: session.device == nil
                ? "the session was started with the app key, not from this device; sign in again from this device"
                : "the session was started from another device; sign in again from this one")
        }
        guard user.disabledAt == nil else { throw ServerError.sessionEnded(detail: "this account is disabled") }
        return (session, user)
    }

    static func profile(_ user: UserRecord) -> UserAPI.Profile {
        let gravatar = (try? Gravatar.url(email: user.email)) ?? "https://gravatar.com/avatar/" + Gravatar.hash(email: user.email)
        return UserAPI.Profile(
            id: user.id, email: user.email, displayName: user.displayName, gravatarURL: gravatar,
            createdAt: user.createdAt, disabled: user.disabledAt != nil)
    }
}
