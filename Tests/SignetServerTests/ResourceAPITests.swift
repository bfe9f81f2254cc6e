import Foundation
import HTTPTypes
import SignetBundle
import SignetCore
import SignetHTTP
import SignetServer
import SignetTLS
import SignetTestSupport
import Testing

/// The resource and trust endpoints over the wire: who may publish and what a refused publish
/// leaves (nothing), tars the server signs and bundles signed offline (k of n), how a stored
/// bundle is served (whole, 304, ranges, older versions), and the trust root's rotations.
@Suite struct ResourceAPITests {
    typealias F = ResourceFixtures
    static let publishPath = "/v1/admin/resources/site"

    /// Publishes `body` as `contentType` with the raw API, signed by `signer`.
    static func post(_ server: TestServer, _ body: [UInt8], _ contentType: String, signer: HTTPMessageSigner?) async throws -> HTTPSResponse {
        try await server.api.sendRaw(.post, publishPath, body: body, contentType: contentType, signer: signer)
    }

    @Test func publishingTarsIsForAdminsAndARefusalStoresNothing() async throws {
        try await TestServer.with { server in
            let folder = try TemporaryFolder(prefix: "signet-resource-api")
            let files = ["index.html": F.bytes("<h1>one</h1>"), "css/site.css": F.bytes("body{}")]
            let tar = try F.tar(files, in: folder, name: "one")

            let unsigned = try await Self.post(server, tar, ResourceAPI.tarType, signer: nil)
            #expect(unsigned.status == 401, "\(unsigned.text)")
            let asApp = try await Self.post(server, tar, ResourceAPI.tarType, signer: server.appSigner)
            #expect(asApp.status == 403 && asApp.problemCode == "server.forbidden", "\(asApp.text)")
            let wrongType = try await Self.post(server, tar, "text/plain", signer: server.adminSigner)
            #expect(wrongType.status == 422 && wrongType.problemCode == "server.unprocessable", "\(wrongType.text)")
            #expect(wrongType.text.contains("Content-Type"))
            let withLink = try F.tar(["index.html": F.bytes("x")], symlinks: ["passwd": "/etc/passwd"], in: folder, name: "link")
            let linkRefused = try await Self.post(server, withLink, ResourceAPI.tarType, signer: server.adminSigner)
            #expect(linkRefused.status == 422 && linkRefused.problemCode == "server.unprocessable", "\(linkRefused.text)")
            #expect(linkRefused.text.contains("passwd"), "\(linkRefused.text)")
            let reserved = try F.tar([".signet/manifest.json": F.bytes("{}"), "a.txt": F.bytes("a")], in: folder, name: "reserved")
            let reservedRefused = try await Self.post(server, reserved, ResourceAPI.tarType, signer: server.adminSigner)
            #expect(reservedRefused.status == 422 && reservedRefused.problemCode == "server.unprocessable", "\(reservedRefused.text)")
            #expect(try await server.store.resources.all().isEmpty)
            #expect(try await server.store.resources.latest(name: "site") == nil)

            // Published: version 1, bundled and signed by the server.
            let first = try await Self.post(server, tar, ResourceAPI.tarType, signer: server.adminSigner)
            #expect(first.status == 201, "\(first.text)")
            let one = try first.decode(ResourceRecord.self)
            #expect(one.name == "site" && one.version == 1 && one.signedBy == "server" && one.publishedBy == "root", "\(one)")
            #expect(one.expiresAt == nil && one.sha256.count == 64 && one.manifestSHA256.count == 64)
            #expect(first.head.headerFields[.location] == "/v1/resources/site/1")

            // Again (through the admin client, with an expiry): version 2.
            let expires = Date(timeIntervalSince1970: 1_893_456_000)
            let (two, created) = try await server.adminClient.publish(name: "site", upload: tar, expires: expires)
            #expect(created && two.version == 2 && two.signedBy == "server" && two.expiresAt == 1_893_456_000, "\(two)")
            #expect(two.sha256 != one.sha256)

            let listed = try await server.api.send(.get, "/v1/admin/resources", signer: server.adminSigner)
            #expect(listed.status == 200, "\(listed.text)")
            #expect(try listed.decode(ResourceAPI.List.self).items == [one, two])
            #expect(try await server.adminClient.resources() == [one, two])
            let listedByApp = try await server.api.send(.get, "/v1/admin/resources", signer: server.appSigner)
            #expect(listedByApp.status == 403 && listedByApp.problemCode == "server.forbidden")
            #expect(try await server.store.resources.all() == [one, two])
        }
    }

    @Test func aStoredBundleIsServedWholeInPartOrNotModified() async throws {
        try await TestServer.with { server in
            let folder = try TemporaryFolder(prefix: "signet-resource-api")
            let admin = try server.adminClient
            let one = try await admin.publish(name: "site", upload: try F.tar(["a.txt": F.bytes("one")], in: folder, name: "one")).record
            let two = try await admin.publish(
                name: "site", upload: try F.tar(["a.txt": F.bytes("two"), "b/c.txt": F.bytes("sea")], in: folder, name: "two")).record
            func get(_ path: String, _ headers: HTTPFields = [:]) async throws -> HTTPSResponse {
                try await server.api.send(.get, path, signer: server.appSigner, headers: headers)
            }

            let whole = try await get("/v1/resources/site")
            #expect(whole.status == 200, "\(whole.text)")
            let fields = whole.head.headerFields
            #expect(F.sha256(whole.body) == two.sha256 && Int64(whole.body.count) == two.size)
            #expect(fields[.eTag] == two.etag && two.etag == "\"\(two.sha256)\"")
            #expect(fields[ResourceAPI.versionField] == "2")
            #expect(fields[.acceptRanges] == "bytes")
            #expect(fields[.contentType] == ResourceAPI.bundleType)
            #expect(fields[.cacheControl] == "no-cache")
            #expect(fields[.contentDigest] == ContentDigest.fieldValue([.sha256: DigestAlgorithm.sha256.hash(whole.body).bytes]))
            // The body is the bundle the server signed under its trust root.
            let path = try folder.write("latest.zip", whole.body)
            let verified = try await BundleVerifier(trust: server.trustRoot, expectedName: "site").verify(path: path)
            #expect(verified.manifest.version == 2 && verified.manifest.files.map(\.path) == ["a.txt", "b/c.txt"])
            #expect(Hex.encode(verified.manifestDigest) == two.manifestSHA256)
            #expect(verified.signedBy == [server.identity.responseSigner.publicKey.fingerprint])

            let cached = try await get("/v1/resources/site", [.ifNoneMatch: two.etag])
            #expect(cached.status == 304 && cached.body.isEmpty, "\(cached.status)")
            #expect(cached.head.headerFields[.eTag] == two.etag)
            let olderTag = try await get("/v1/resources/site", [.ifNoneMatch: one.etag])
            #expect(olderTag.status == 200 && olderTag.body == whole.body)

            let part = try await get("/v1/resources/site", [.range: "bytes=10-99"])
            #expect(part.status == 206, "\(part.text)")
            #expect(part.body == Array(whole.body[10...99]))
            #expect(part.head.headerFields[.contentRange] == "bytes 10-99/\(two.size)")
            // A part carries no digest of its own (it would be read twice); the ETag — the whole
            // bundle's SHA-256 — is what the assembled file is checked against.
            #expect(part.head.headerFields[.contentDigest] == nil)
            #expect(part.head.headerFields[.eTag] == two.etag)
            let tail = try await get("/v1/resources/site", [.range: "bytes=-16"])
            #expect(tail.status == 206 && tail.body == Array(whole.body.suffix(16)))
            let resumed = try await get("/v1/resources/site", [.range: "bytes=10-99", .ifRange: two.etag])
            #expect(resumed.status == 206 && resumed.body == Array(whole.body[10...99]))

            let pastTheEnd = try await get("/v1/resources/site", [.range: "bytes=\(two.size)-"])
            #expect(pastTheEnd.status == 416 && pastTheEnd.problemCode == "server.rangeNotSatisfiable", "\(pastTheEnd.text)")
            #expect(pastTheEnd.head.headerFields[.contentRange] == "bytes */\(two.size)")
            let staleIfRange = try await get("/v1/resources/site", [.range: "bytes=10-99", .ifRange: one.etag])
            #expect(staleIfRange.status == 200 && staleIfRange.body == whole.body)
            #expect(staleIfRange.head.headerFields[.contentRange] == nil)

            // An older version by number, byte for byte what was published.
            let older = try await get("/v1/resources/site/1")
            #expect(older.status == 200 && F.sha256(older.body) == one.sha256 && Int64(older.body.count) == one.size)
            #expect(older.head.headerFields[ResourceAPI.versionField] == "1" && older.head.headerFields[.eTag] == one.etag)

            let unknown = try await get("/v1/resources/nothing")
            #expect(unknown.status == 404 && unknown.problemCode == "server.notFound", "\(unknown.text)")
            let unknownVersion = try await get("/v1/resources/site/3")
            #expect(unknownVersion.status == 404 && unknownVersion.problemCode == "server.notFound")
            let notANumber = try await get("/v1/resources/site/abc")
            #expect(notANumber.status == 400 && notANumber.problemCode == "server.badRequest", "\(notANumber.text)")
            let unsigned = try await server.api.send(.get, "/v1/resources/site", signer: nil)
            #expect(unsigned.status == 401)
        }
    }

    @Test func anUploadOverTheConfiguredLimitIsRefused() async throws {
        try await TestServer.with(configure: { $0.maximumResourceSize = 4096 }) { server in
            let folder = try TemporaryFolder(prefix: "signet-resource-api")
            let tar = try F.tar(["big.bin": RandomBytes.make(8192)], in: folder, name: "big")
            #expect(tar.count > 4096)
            let response = try await Self.post(server, tar, ResourceAPI.tarType, signer: server.adminSigner)
            #expect(response.status == 413 && response.problemCode == "server.payloadTooLarge", "\(response.text)")
            #expect(try await server.store.resources.all().isEmpty)
        }
    }

    @Test func offlineBundlesNeedTheThresholdOfTheTrustRoot() async throws {
        let keys = try (0..<3).map { _ in try F.signer() }
        let root = try TrustRoot(threshold: 2, keys: keys.map { try TrustedKey(publicKey: $0.publicKey) })
        try await TestServer.with(trustRoot: root) { server in
            #expect(server.trustRoot == root)
            let folder = try TemporaryFolder(prefix: "signet-resource-offline")
            let admin = try server.adminClient
            let files = ["app.cfg": F.bytes("mode=1\n")]

            // The server's one key cannot sign for a 2-of-3 root (nor is it one of the three).
            try await F.expectRefusal(status: 409, code: "server.conflict", mentioning: "signed offline") {
                _ = try await admin.publish(name: "site", upload: try F.tar(files, in: folder, name: "tree"))
            }
            let oneKey = try await F.bundle("site", version: 1, files: files, signers: [keys[0]], in: folder)
            try await F.expectRefusal(status: 422, code: "server.unprocessable", mentioning: "found 1") {
                _ = try await admin.publish(name: "site", upload: oneKey)
            }
            let strangers = try await F.bundle("site", version: 1, files: files, signers: [try F.signer(), try F.signer()], in: folder)
            try await F.expectRefusal(status: 422, code: "server.unprocessable", mentioning: "found 0") {
                _ = try await admin.publish(name: "site", upload: strangers)
            }
            let expired = try await F.bundle(
                "site", version: 1, files: files, signers: [keys[0], keys[1]], in: folder, expires: Date().addingTimeInterval(-3600),
                created: Date().addingTimeInterval(-7200))
            try await F.expectRefusal(status: 422, code: "server.unprocessable", mentioning: "expired") {
                _ = try await admin.publish(name: "site", upload: expired)
            }
            let otherName = try await F.bundle("blog", version: 1, files: files, signers: [keys[0], keys[1]], in: folder)
            try await F.expectRefusal(status: 422, code: "server.unprocessable", mentioning: "wrong bundle") {
                _ = try await admin.publish(name: "site", upload: otherName)
            }
            #expect(try await server.store.resources.all().isEmpty)

            // Two of the three: stored as uploaded.
            let good = try await F.bundle("site", version: 1, files: files, signers: [keys[0], keys[2]], in: folder)
            let published = try await admin.publish(name: "site", upload: good)
            #expect(published.created && published.record.version == 1 && published.record.signedBy == "offline", "\(published.record)")
            #expect(published.record.sha256 == F.sha256(good) && published.record.size == Int64(good.count))
            let served = try await server.api.send(.get, "/v1/resources/site", signer: server.appSigner)
            #expect(served.status == 200 && served.body == good)

            // The same bundle again is a retry: 200, not a new version.
            let retried = try await admin.publish(name: "site", upload: good)
            #expect(!retried.created && retried.record == published.record)
            let retriedRaw = try await Self.post(server, good, ResourceAPI.bundleType, signer: server.adminSigner)
            #expect(retriedRaw.status == 200, "\(retriedRaw.text)")

            // Version 1 with other content: a version is published once.
            let reused = try await F.bundle("site", version: 1, files: ["app.cfg": F.bytes("mode=2\n")], signers: [keys[1], keys[2]], in: folder)
            try await F.expectRefusal(status: 409, code: "server.conflict", mentioning: "already at version 1") {
                _ = try await admin.publish(name: "site", upload: reused)
            }
            #expect(try await server.store.resources.all() == [published.record])
        }
    }

    @Test func theTrustRootRotatesOnlyWhenTheCurrentOneSignedTheNext() async throws {
        try await TestServer.with { server in
            let rootKey = server.identity.responseSigner
            func chain(since: String) async throws -> [String] {
                let response = try await server.api.send(.get, "/v1/trust?since=\(since)", signer: server.appSigner)
                #expect(response.status == 200, "\(response.text)")
                return try response.decode(ResourceAPI.TrustChain.self).roots
            }
            let first = String(decoding: server.trustRoot.fileBytes, as: UTF8.self)
            #expect(try await chain(since: "0") == [first])
            #expect(try await chain(since: "1") == [])
            let badSince = try await server.api.send(.get, "/v1/trust?since=-1", signer: server.appSigner)
            #expect(badSince.status == 400 && badSince.problemCode == "server.badRequest")

            let newKey = try F.signer()
            let stranger = try F.signer()
            let byStranger = try await F.root(version: 2, threshold: 1, keys: [newKey], signedBy: [stranger])
            let skipping = try await F.root(version: 3, threshold: 1, keys: [newKey], signedBy: [rootKey])
            for (label, refused) in [("signed by a stranger", byStranger), ("version 3 after 1", skipping)] {
                let response = try await server.api.sendRaw(.post, "/v1/admin/trust", body: refused.fileBytes, signer: server.adminSigner)
                #expect(response.status == 422 && response.problemCode == "server.unprocessable", "\(label): \(response.text)")
            }
            let garbage = try await server.api.sendRaw(.post, "/v1/admin/trust", body: F.bytes("{\"root\":1}"), signer: server.adminSigner)
            #expect(garbage.status == 422 && garbage.problemCode == "server.unprocessable", "\(garbage.text)")
            #expect(try await chain(since: "0") == [first])

            let next = try await server.trustRoot.rotated(
                to: [TrustedKey(publicKey: rootKey.publicKey), TrustedKey(publicKey: newKey.publicKey)], threshold: 1, signedBy: [rootKey])
            let byApp = try await server.api.sendRaw(.post, "/v1/admin/trust", body: next.fileBytes, signer: server.appSigner)
            #expect(byApp.status == 403 && byApp.problemCode == "server.forbidden")
            let rotated = try await server.api.sendRaw(.post, "/v1/admin/trust", body: next.fileBytes, signer: server.adminSigner)
            #expect(rotated.status == 201, "\(rotated.text)")
            #expect(try rotated.decode([String: Int64].self) == ["version": 2])

            let second = String(decoding: next.fileBytes, as: UTF8.self)
            #expect(try await chain(since: "1") == [second])
            #expect(try await chain(since: "0") == [first, second])
            #expect(try await chain(since: "2") == [])
            #expect(try await server.store.trustRoots.current() == next)
            // The stranger's root stays refused against the new one too (wrong version, wrong signer).
            let again = try await server.api.sendRaw(.post, "/v1/admin/trust", body: byStranger.fileBytes, signer: server.adminSigner)
            #expect(again.status == 422, "\(again.text)")
        }
    }
}
