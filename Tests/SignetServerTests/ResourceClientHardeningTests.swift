import Foundation
import HTTPTypes
import SignetBundle
import SignetClient
import SignetCore
import SignetServer
import SignetTLS
import SignetTestSupport
import Testing

/// What a man in the middle holding the TLS key (not the response key) or a hostile server can
/// try against `fetchResource` beyond a forged body: conditions the client never sent, a forged
/// ETag, a version in place that expired, an endless body, a resource name that meets the
/// client's own state files.
@Suite struct ResourceClientHardeningTests {
    typealias F = ResourceFixtures

    /// Adds `If-None-Match: *` to every resource request on its way (the request signature does
    /// not cover a field the client did not send).
    struct AddingConditionTransport: ClientTransport {
        let inner: any ClientTransport

        func send(_ request: HTTPRequest, body: [UInt8]?) async throws -> (HTTPResponse, [UInt8]) {
            try await inner.send(request, body: body)
        }

        func download(_ request: HTTPRequest, to sink: any HTTPSBodySink) async throws -> (HTTPResponse, [UInt8]) {
            var altered = request
            altered.headerFields[.ifNoneMatch] = "*"
            return try await inner.download(altered, to: sink)
        }
    }

    @Test func aNotModifiedToARequestThatNamedNoVersionIsRefused() async throws {
        try await TestServer.with { server in
            let folder = try TemporaryFolder(prefix: "signet-hardening-304")
            _ = try await server.adminClient.publish(name: "site", upload: try F.tar(["a.txt": F.bytes("one")], in: folder, name: "one"))
            let destination = server.folder.file("site")
            let client = try F.client(server, transport: AddingConditionTransport(inner: F.pinned(server)))
            let error = try await F.fetchError(client, "site", into: destination)
            guard case .malformedResponse(let detail) = error else { Issue.record("expected malformedResponse, got \(error)"); return }
            #expect(detail.contains("named no version"))
            #expect(!F.exists(destination))
            // The honest path installs it.
            #expect(try await F.client(server).fetchResource("site", into: destination).updated)
        }
    }

    @Test func aForgedETagIsRefusedAndNeverRecorded() async throws {
        try await TestServer.with { server in
            let folder = try TemporaryFolder(prefix: "signet-hardening-etag")
            let record = try await server.adminClient.publish(name: "site", upload: try F.tar(["a.txt": F.bytes("one")], in: folder, name: "one")).record
            let destination = server.folder.file("site")
            let starTag = F.RewritingTransport(inner: F.pinned(server)) { request, head, body in
                guard request.path == "/v1/resources/site", head.status.code == 200 else { return nil }
                var fields = head.headerFields
                fields[.eTag] = "*"
                return (HTTPResponse(status: head.status, headerFields: fields), body)
            }
            // With responses checked, the signature covers the ETag.
            let checked = try await F.fetchError(try F.client(server, transport: starTag), "site", into: destination)
            if case .responseSignatureInvalid = checked {} else { Issue.record("expected responseSignatureInvalid, got \(checked)") }
            // Without, the tag must still be the digest of the bytes that came.
            let unchecked = try await F.fetchError(try F.client(server, checkResponses: false, transport: starTag), "site", into: destination)
            if case .malformedResponse = unchecked {} else { Issue.record("expected malformedResponse, got \(unchecked)") }
            #expect(!F.exists(destination))
            #expect(!F.exists(server.folder.file("state/.installed-tag/site")))
            // The tag recorded after an honest fetch is the one the client computed.
            _ = try await F.client(server).fetchResource("site", into: destination)
            let installed = F.read(server.folder.file("state/.installed-tag/site")).map { String(decoding: $0, as: UTF8.self) }
            #expect(installed?.hasPrefix(record.etag + " ") == true, "\(installed ?? "none")")
        }
    }

    @Test func aVersionInPlaceThatExpiredIsNotCurrent() async throws {
        try await TestServer.with { server in
            let folder = try TemporaryFolder(prefix: "signet-hardening-expired")
            let expires = Date().addingTimeInterval(86400)
            _ = try await server.adminClient.publish(
                name: "site", upload: try F.tar(["a.txt": F.bytes("one")], in: folder, name: "one"), expires: expires)
            let destination = server.folder.file("site")
            #expect(try await F.client(server).fetchResource("site", into: destination).updated)
            // Two days later (the client's clock), the server still has nothing newer: its 304 does not make the version current.
            var configuration = ClientConfiguration(
                server: "https://127.0.0.1:\(server.port)", appSigner: server.app, serverKey: server.identity.responseSigner.publicKey,
                trustRoot: server.trustRoot, resourceState: server.folder.file("state"))
            configuration.clock = WallClock { Date().addingTimeInterval(2 * 86400) }
            let client = try SignetClient(configuration: configuration, transport: F.pinned(server), sessions: InMemorySessionStore())
            let error = try await F.fetchError(client, "site", into: destination)
            guard case .resourceRefused(let code, _) = error else { Issue.record("expected resourceRefused, got \(error)"); return }
            #expect(code == "bundle.expired")
            #expect(F.read(destination + "/a.txt") == F.bytes("one"), "the expired version is left in place, reported")
        }
    }

    @Test func aBodyOverTheLimitIsCutAndDropped() async throws {
        try await TestServer.with { server in
            let folder = try TemporaryFolder(prefix: "signet-hardening-size")
            _ = try await server.adminClient.publish(name: "big", upload: try F.tar(["blob": RandomBytes.make(64 << 10)], in: folder, name: "big"))
            var configuration = ClientConfiguration(
                server: "https://127.0.0.1:\(server.port)", appSigner: server.app, serverKey: server.identity.responseSigner.publicKey,
                trustRoot: server.trustRoot, resourceState: server.folder.file("state"))
            configuration.maximumResourceSize = 16 << 10
            // A server that sends no length up front (the limit is then counted as bytes arrive).
            let noLength = F.RewritingTransport(inner: F.pinned(server)) { request, head, body in
                guard request.path == "/v1/resources/big" else { return nil }
                var fields = head.headerFields
                fields[.contentLength] = nil
                return (HTTPResponse(status: head.status, headerFields: fields), body)
            }
            for transport in [F.pinned(server) as any ClientTransport, noLength] {
                let client = try SignetClient(configuration: configuration, transport: transport, sessions: InMemorySessionStore())
                let error = try await F.fetchError(client, "big", into: server.folder.file("big"))
                guard case .resourceRefused(let code, _) = error else { Issue.record("expected resourceRefused, got \(error)"); continue }
                #expect(code == "client.tooLarge")
                #expect(!F.exists(server.folder.file("state/.partial/big")) && !F.exists(server.folder.file("big")))
            }
        }
    }

    @Test func aResourceNamedLikeTheClientsFilesKeepsItsOwnState() async throws {
        try await TestServer.with { server in
            let folder = try TemporaryFolder(prefix: "signet-hardening-names")
            let admin = try server.adminClient
            // A rotation the client walks (the server's key stays), so the state holds a root.
            let next = try await server.trustRoot.rotated(
                to: [TrustedKey(publicKey: server.identity.responseSigner.publicKey)], threshold: 1, signedBy: [server.identity.responseSigner])
            try await admin.rotateTrust(next.fileBytes)
            let client = try F.client(server)
            for name in ["trust", "trust.json", "site", "site.download", "site.etag"] {
                _ = try await admin.publish(name: name, upload: try F.tar(["name.txt": F.bytes(name)], in: folder, name: "tar-\(name)"))
                let fetched = try await client.fetchResource(name, into: server.folder.file("out-\(name)"))
                #expect(fetched.updated && fetched.trustRootVersion == 2, "\(name)")
            }
            for name in ["trust", "trust.json", "site", "site.download", "site.etag"] {
                #expect(try await client.fetchResource(name, into: server.folder.file("out-\(name)")).updated == false, "\(name)")
                #expect(F.read(server.folder.file("out-\(name)/name.txt")) == F.bytes(name))
            }
            #expect(try TrustRoot.load(path: server.folder.file("state/.trust.json")) == next)
        }
    }
}
