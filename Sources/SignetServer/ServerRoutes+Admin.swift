import SignetAPI
import Foundation
import HTTPTypes
import Hummingbird
import SignetCore

extension ServerRoutes {
    /// The admin API under `/v1/admin/`: every request signed by an enrolled admin key.
    func addAdminRoutes(to group: RouterGroup<ServerRequestContext>) {
        addDeviceAdminRoutes(to: group)
        for role in Principal.Role.allCases {
            let collection = role == .app ? "apps" : "admins"
            group.post(RouterPath(collection)) { request, context in
                _ = try context.principal(role: .admin)
                let body = try await ServerRequestBody.decode(AdminAPI.Enrolment.self, from: request, limit: configuration.maximumBodySize)
                let enrolled = try await enrol(body, role: role)
                return try await responder.json(enrolled, status: .created, for: request, headers: [.cacheControl: "no-store"])
            }
            group.get(RouterPath(collection)) { request, context in
                _ = try context.principal(role: .admin)
                let items = try await store.principals.all(role: role).map { Self.enrolled($0, secret: nil) }
                return try await responder.json(AdminAPI.EnrolledList(items: items), for: request, headers: [.cacheControl: "no-store"])
            }
            group.delete(RouterPath(collection + "/:name")) { request, context in
                let admin = try context.principal(role: .admin)
                let name = try Self.pathParameter("name", context)
                if role == .admin {
                    try await store.principals.revokeAdmin(name: name)
                } else {
                    try await store.principals.revoke(role: role, name: name)
                }
                directory.invalidate()
                context.logger.notice("revoked", metadata: ["role": "\(role.rawValue)", "name": "\(name)", "by": "\(admin.name)"])
                return try await responder.empty(for: request)
            }
        }

        group.get("users") { request, context in
            _ = try context.principal(role: .admin)
            let users = try await store.users.all().map(Self.profile)
            return try await responder.json(AdminAPI.UserList(users: users), for: request, headers: [.cacheControl: "no-store"])
        }
        group.post("users/:email/disable") { request, context in
            _ = try context.principal(role: .admin)
            let forms = try UserInput.lookupForms(try Self.pathParameter("email", context))
            guard let user = try await store.users.find(anyOf: forms) else { throw ServerError.notFound(what: "the user \(forms[0])") }
            // Also when the call fails after its commit: this node must not answer from memory.
            defer { sessions.forget(userID: user.id) }
            try await store.users.disable(email: user.email)
            return try await responder.empty(for: request)
        }
        group.delete("users/:email/sessions") { request, context in
            _ = try context.principal(role: .admin)
            let forms = try UserInput.lookupForms(try Self.pathParameter("email", context))
            guard let user = try await store.users.find(anyOf: forms) else { throw ServerError.notFound(what: "the user \(forms[0])") }
            // Also when the call fails after its commit: this node must not answer from memory.
            defer { sessions.forget(userID: user.id) }
            let count = try await store.sessions.deleteAll(userID: user.id)
            return try await responder.json(UserAPI.Revoked(revoked: count), for: request)
        }
    }

    /// Enrols an app or admin from an enrolment body.
    func enrol(_ body: AdminAPI.Enrolment, role: Principal.Role) async throws -> AdminAPI.Enrolled {
        try AdminAPI.checkName(body.name)
        let now = store.now
        if body.attestation != nil, role != .app {
            throw ServerError.unprocessable(field: "attestation", detail: "only apps have devices; admins sign with their own key")
        }
        let attestation = try body.attestation.map(Self.checked)
        if body.hmac == true {
            guard role == .app else { throw ServerError.unprocessable(field: "hmac", detail: "admins sign with a public key") }
            guard body.publicKey == nil else { throw ServerError.unprocessable(field: "publicKey", detail: "an HMAC app has no public key") }
            let secret = SecretBytes(RandomBytes.make(32))
            let principal = Principal(keyID: body.name, role: role, name: body.name, algorithm: .hmacSHA256, createdAt: now, attestation: attestation)
            try await store.principals.add(principal, secret: secret)
            return Self.enrolled(principal, secret: secret.withUnsafeBytes { Base64.encode(Array($0)) })
        }
        guard let text = body.publicKey else { throw ServerError.unprocessable(field: "publicKey", detail: "is required (or hmac: true for an app)") }
        let key = try AdminAPI.publicKey(text)
        let algorithm = try AdminAPI.algorithm(body.algorithm, for: key)
        let principal = Principal(
            keyID: key.fingerprint.description, role: role, name: body.name, algorithm: algorithm, publicKeyDER: key.spkiDER,
            createdAt: now, attestation: attestation)
        try await store.principals.add(principal)
        return Self.enrolled(principal, secret: nil)
    }

    /// A path parameter, percent-decoded (a client may escape `@` in an e-mail address).
    static func pathParameter(_ name: String, _ context: ServerRequestContext) throws -> String {
        guard let raw = context.parameters.get(name), let value = raw.removingPercentEncoding, !value.isEmpty else {
            throw ServerError.badRequest(detail: "the path's \(name) is missing or not valid percent-encoding")
        }
        // A NUL or another control character is no name, and PostgreSQL cannot even compare one.
        guard !value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw ServerError.badRequest(detail: "the path's \(name) contains a control character")
        }
        return value
    }

    static func enrolled(_ principal: Principal, secret: String?) -> AdminAPI.Enrolled {
        AdminAPI.Enrolled(
            name: principal.name, role: principal.role.rawValue, keyId: principal.keyID, algorithm: principal.algorithm.rawValue,
            createdAt: principal.createdAt, revokedAt: principal.revokedAt, secret: secret, attestation: principal.attestation)
    }
}
