import Foundation
import HTTPTypes
import Hummingbird
import SignetAPI
import SignetCore

extension ServerRoutes {
    /// `POST /v1/devices/challenges` and `POST /v1/devices`: signed by the app (or one of its
    /// devices); the attestation requirement does not apply, since devices enrol through them.
    func addDeviceRoutes(to group: RouterGroup<ServerRequestContext>) {
        group.post("devices/challenges") { request, context in
            let app = try context.principal(role: .app)
            guard app.attestation != nil else {
                throw ServerError.forbidden(
                    detail: "the app \(app.name) has no Apple App ID or Android package, so it takes no devices (signet server app attestation)")
            }
            try await countDeviceChallenge(from: context.clientAddress, app: app.name)
            let challenge = RandomBytes.make(DeviceAPI.challengeBytes)
            let expiresAt = store.now + configuration.deviceChallengeLifetime.wholeSeconds
            try await store.deviceChallenges.issue(hash: DeviceEnroller.challengeHash(challenge), app: app.name, until: expiresAt)
            let reply = DeviceAPI.Challenge(challenge: Base64.encode(challenge), expiresAt: expiresAt)
            return try await responder.json(reply, status: .created, for: request, headers: [.cacheControl: "no-store"])
        }

        group.post("devices") { request, context in
            let app = try context.principal(role: .app)
            let body = try await ServerRequestBody.decode(DeviceAPI.Enrolment.self, from: request, limit: configuration.maximumBodySize)
            let device = try await DeviceEnroller(store: store, trust: configuration.attestation).enrol(body, app: app)
            // A request signed by the new key before the enrolment may have left "unknown" here.
            directory.forget(keyID: device.keyID)
            context.logger.notice("device enrolled", metadata: [
                "app": "\(app.name)", "device": "\(device.id)", "platform": "\(device.platform.rawValue)",
            ])
            return try await responder.json(device.api, status: .created, for: request, headers: [.cacheControl: "no-store"])
        }
    }

    /// `GET /v1/admin/devices`, `DELETE /v1/admin/devices/{id}` and
    /// `PUT /v1/admin/apps/{name}/attestation`: signed by an admin.
    func addDeviceAdminRoutes(to group: RouterGroup<ServerRequestContext>) {
        group.get("devices") { request, context in
            _ = try context.principal(role: .admin)
            let query = request.uri.queryParameters
            let app = query["app"].map(String.init)
            if let app { try AdminAPI.checkName(app) }
            let after = query["after"].map(String.init)
            let page = try await store.devices.list(app: app, after: after, limit: Self.devicePage + 1)
            let items = page.prefix(Self.devicePage).map(\.api)
            let next = page.count > Self.devicePage ? items.last?.id : nil
            return try await responder.json(DeviceAPI.DeviceList(items: Array(items), next: next), for: request, headers: [.cacheControl: "no-store"])
        }
        group.delete("devices/:id") { request, context in
            let admin = try context.principal(role: .admin)
            let id = try Self.pathParameter("id", context)
            let ended = try await store.devices.revoke(id: id)
            // Also on this node's memory: the device's key and its sessions.
            directory.invalidate()
            for tokenHash in ended { sessions.forget(tokenHash: tokenHash) }
            context.logger.notice("device revoked", metadata: ["device": "\(id)", "sessions": "\(ended.count)", "by": "\(admin.name)"])
            return try await responder.empty(for: request)
        }
        group.put("apps/:name/attestation") { request, context in
            let admin = try context.principal(role: .admin)
            let name = try Self.pathParameter("name", context)
            let body = try await ServerRequestBody.decode(AdminAPI.AttestationSettings.self, from: request, limit: configuration.maximumBodySize)
            let settings = try Self.checked(body)
            try await store.principals.setAttestation(app: name, settings)
            directory.invalidate()
            guard let app = try await store.principals.all(role: .app).first(where: { $0.name == name }) else {
                throw ServerError.notFound(what: "the app \(name)")
            }
            context.logger.notice("attestation settings", metadata: ["app": "\(name)", "required": "\(settings.required == true)", "by": "\(admin.name)"])
            return try await responder.json(Self.enrolled(app, secret: nil), for: request, headers: [.cacheControl: "no-store"])
        }
    }

    /// Devices per page of the admins' list.
    static let devicePage = 500

    /// The settings, checked and normalised; 422 naming the field that breaks a rule.
    static func checked(_ settings: AdminAPI.AttestationSettings) throws -> AdminAPI.AttestationSettings {
        do {
            return try settings.normalized()
        } catch {
            throw ServerError.unprocessable(field: error.field, detail: error.rule)
        }
    }
}
