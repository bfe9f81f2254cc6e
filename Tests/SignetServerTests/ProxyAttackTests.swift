import Foundation
import HTTPTypes
import SignetClient
import SignetCore
import SignetServer
import SignetTLS
import SignetTestSupport
import SignetX509
import Synchronization
import Testing

/// A live server behind a real TLS proxy on loopback (`TLSProxy`): a man in the middle with a
/// certificate of its own is refused by the pins before a single request is sent; a TLS
/// terminator holding the server's own certificate and key (compromised) can read and alter
/// what passes, and every answer it alters — a resource's bytes, a JSON body — is refused by the
/// response signature, the resource in place kept exactly. Without rewriting, the proxy is
/// transparent: everything works through it.
@Suite struct ProxyAttackTests {
    /// What the compromised terminator alters in the answers it passes on, and how many it altered.
    final class Tampering: Sendable {
        enum Target: Sendable { case nothing, bundles, json }
        private struct State { var target = Target.nothing; var altered = 0 }
        private let state = Mutex(State())

        func set(_ target: Target) { state.withLock { $0.target = target } }
        var altered: Int { state.withLock { $0.altered } }

        /// One byte of every resource body (200, `application/zip`), or one letter of every JSON
        /// body (still valid JSON, another e-mail or name): the headers, `Content-Digest` and the
        /// server's signature included, are left as they came.
        var rewrite: TLSProxy.Rewrite {
            { [self] _, head, body in
                var body = body
                var changed = false
                switch state.withLock({ $0.target }) {
                case .nothing:
                    break
                case .bundles:
                    if head.status.code == 200, head.headerFields[.contentType] == "application/zip", !body.isEmpty {
                        body[body.count / 2] ^= 0x01
                        changed = true
                    }
                case .json:
                    if head.headerFields[.contentType]?.hasPrefix("application/json") == true,
                       let index = body.lastIndex(where: { (UInt8(ascii: "a")...UInt8(ascii: "y")).contains($0) }) {
                        body[index] += 1
                        changed = true
                    }
                }
                if changed { state.withLock { $0.altered += 1 } }
                return (head, body)
            }
        }
    }

    /// Runs `body` with a fresh server behind a proxy holding the server's own certificate and
    /// key; the server takes the proxy's address as its public one (what clients sign).
    static func withServerBehindProxy(
        rewrite: @escaping TLSProxy.Rewrite = TLSProxy.passThrough, _ body: (TLSProxy, TestServer) async throws -> Void
    ) async throws {
        try await TLSProxy.with(identity: try await TLSProxy.selfSignedIdentity(), rewrite: rewrite) { proxy in
            try await TestServer.with(configure: { $0.publicAuthority = proxy.authority }) { server in
                try proxy.front(server)
                try await body(proxy, server)
            }
        }
    }

    /// A resource client of `port` trusting the server's pins (or `trust`), checking the
    /// server's response signatures, with the seeded trust root and `state` as its state folder.
    static func client(_ server: TestServer, port: Int, state: String, trust: TLSTrustPolicy? = nil) throws -> SignetClient {
        let configuration = ClientConfiguration(
            server: "https://127.0.0.1:\(port)", appSigner: server.app, serverKey: server.identity.responseSigner.publicKey,
            trustRoot: server.trustRoot, resourceState: state)
        return try SignetClient(
            configuration: configuration, transport: PinnedTransport(trust: trust ?? server.api.transport.trust, timeout: TestTimeouts.hangGuard), sessions: InMemorySessionStore())
    }

    /// The admin API through the proxy, trusting the server's pins.
    /// Through the proxy: version 1 of `maps` published; the admin client, the app's folder, the
    /// destination in it, the client's state folder and a client through the proxy.
    static func publishFirstVersion(_ server: TestServer, via proxy: TLSProxy) async throws
        -> (admin: AdminClient, app: String, destination: String, state: String, client: SignetClient)
    {
        let admin = try Self.admin(server, via: proxy)
        #expect(try await admin.publish(name: "maps", upload: TarBuilder.archive(files: [("readme.txt", "version one")])).created)
        let app = try Self.appFolder(server)
        let state = server.folder.file("state")
        return (admin, app, app + "/maps", state, try Self.client(server, port: proxy.port, state: state))
    }

    static func admin(_ server: TestServer, via proxy: TLSProxy) throws -> AdminClient {
        try AdminClient(server: proxy.url, signer: server.adminSigner, serverKey: server.identity.responseSigner.publicKey, transport: server.api.transport)
    }

    /// The folder the app installs resources in (`app/maps` is the destination), made empty.
    static func appFolder(_ server: TestServer) throws -> String {
        let app = server.folder.file("app")
        try FileManager.default.createDirectory(atPath: app, withIntermediateDirectories: true)
        return app
    }

    /// Every file (path → bytes) and folder (path → nil) under `folder`.
    static func snapshot(_ folder: String) throws -> [String: [UInt8]?] {
        var entries: [String: [UInt8]?] = [:]
        for path in try FileManager.default.subpathsOfDirectory(atPath: folder) {
            var isFolder: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: folder + "/" + path, isDirectory: &isFolder)
            var bytes: [UInt8]?
            if !isFolder.boolValue { bytes = Array(try Data(contentsOf: URL(fileURLWithPath: folder + "/" + path))) }
            entries.updateValue(bytes, forKey: path)
        }
        return entries
    }

    static func text(_ path: String) throws -> String { try String(contentsOfFile: path, encoding: .utf8) }

    static func isResponseSignatureInvalid(_ error: any Error) -> Bool {
        guard let error = error as? ClientError, case .responseSignatureInvalid = error else { return false }
        return true
    }

    @Test func throughTheProxyWithoutRewritingEverythingWorks() async throws {
        try await Self.withServerBehindProxy { proxy, server in
            let published = try await Self.admin(server, via: proxy).publish(name: "maps", upload: TarBuilder.archive(files: [("readme.txt", "version one")]))
            #expect(published.created && published.record.version == 1)
            let listed = try await Self.admin(server, via: proxy).resources()
            #expect(listed == [published.record])
            #expect(try await server.store.resources.all() == listed)
            // A range of the bundle, signed by the app, comes back as the server sent it.
            let api = try TestAPI(port: proxy.port, pins: [server.identity.pin, server.identity.backupPin])
            let range = try await api.send(.get, "/v1/resources/maps", signer: server.appSigner, headers: [.range: "bytes=0-9"])
            #expect(range.status == 206)
            #expect(range.body.count == 10)
            #expect(range.head.headerFields[.contentRange] == "bytes 0-9/\(published.record.size)")
            #expect(range.head.headerFields[.eTag] == published.record.etag)
            let app = try Self.appFolder(server)
            let client = try Self.client(server, port: proxy.port, state: server.folder.file("state"))
            let fetched = try await client.fetchResource("maps", into: app + "/maps")
            #expect(fetched.name == "maps" && fetched.version == 1 && fetched.updated && fetched.files == 1)
            #expect(fetched.trustRootVersion == server.trustRoot.version)
            #expect(try Self.text(app + "/maps/readme.txt") == "version one")
            // 304 through the proxy: the version in place is the newest.
            let again = try await client.fetchResource("maps", into: app + "/maps")
            #expect(again.version == 1 && !again.updated)
            // The user API, its answers checked against the server's key.
            try await client.register(email: "ann@example.com", password: "correct horse battery", displayName: "Ann")
            try await client.signIn(email: "ann@example.com", password: "correct horse battery")
            #expect(try await client.me().displayName == "Ann")
            #expect(proxy.requestCount >= 9)
        }
    }

    @Test func aManInTheMiddleIsRefusedByThePinsBeforeAnythingIsSent() async throws {
        let mallory = try await TLSProxy.selfSignedIdentity()
        try await Self.withServerBehindProxy { proxy, server in
            // Through the genuine terminator: version 1 published and installed, version 2 published.
            let (admin, app, destination, state, client) = try await Self.publishFirstVersion(server, via: proxy)
            #expect(try await client.fetchResource("maps", into: destination).version == 1)
            #expect(try await admin.publish(name: "maps", upload: TarBuilder.archive(files: [("readme.txt", "version two")])).record.version == 2)
            let records = try await server.store.resources.all()
            let installed = try Self.snapshot(app)
            let kept = try Self.snapshot(state)
            let forwarded = proxy.requestCount

            // Mallory takes the address over with a certificate of her own, valid for 127.0.0.1.
            try proxy.present(mallory)
            await #expect(throws: ClientError.pinMismatch(host: "127.0.0.1")) {
                _ = try await client.fetchResource("maps", into: destination)
            }
            await #expect(throws: ClientError.pinMismatch(host: "127.0.0.1")) {
                _ = try await client.register(email: "bob@example.com", password: "correct horse battery", displayName: "Bob")
            }
            await #expect(throws: ClientError.pinMismatch(host: "127.0.0.1")) {
                _ = try await client.signIn(email: "bob@example.com", password: "correct horse battery")
            }
            await #expect(throws: ClientError.pinMismatch(host: "127.0.0.1")) {
                _ = try await admin.publish(name: "maps", upload: TarBuilder.archive(files: [("readme.txt", "mallory was here")]))
            }
            // Not one request reached her proxy: every client hung up in the handshake.
            #expect(proxy.requestCount == forwarded)
            #expect(try await server.store.resources.all() == records)
            #expect(try Self.snapshot(app) == installed)
            #expect(try Self.snapshot(state) == kept)
            #expect(try Self.text(destination + "/readme.txt") == "version one")

            // The pins are what stopped her: a client that pinned her key is served through her proxy.
            let herPins = try PinSet(hosts: [HostPins(host: "127.0.0.1", pins: [mallory.key.publicKey.fingerprint, server.identity.backupPin])])
            let fooled = try Self.client(
                server, port: proxy.port, state: server.folder.file("fooled"), trust: TLSTrustPolicy(mode: .pinnedSelfSigned, pins: herPins))
            #expect(try await fooled.register(email: "carl@example.com", password: "correct horse battery", displayName: "Carl").email == "carl@example.com")
            #expect(proxy.requestCount > forwarded)

            // The genuine terminator back: the client goes on from where it was.
            try proxy.front(server)
            let fetched = try await client.fetchResource("maps", into: destination)
            #expect(fetched.version == 2 && fetched.updated)
            #expect(try Self.text(destination + "/readme.txt") == "version two")
        }
    }

    @Test func aTerminatorWithTheServersKeyCannotAlterAResource() async throws {
        let tampering = Tampering()
        try await Self.withServerBehindProxy(rewrite: tampering.rewrite) { proxy, server in
            let (admin, app, destination, state, client) = try await Self.publishFirstVersion(server, via: proxy)
            let first = try await client.fetchResource("maps", into: destination)
            #expect(first.version == 1 && first.updated && first.files == 1)
            let second = try await admin.publish(name: "maps", upload: TarBuilder.archive(files: [("readme.txt", "version two"), ("extra.txt", "more")]))
            #expect(second.created && second.record.version == 2)
            let installed = try Self.snapshot(app)
            let kept = try Self.snapshot(state)

            // One byte of version 2 flipped on its way: the response signature (its Content-Digest)
            // refuses it, and version 1 stays exactly; no partial download is kept to resume from.
            tampering.set(.bundles)
            // Refused every time, the same way (a second try resumes nothing).
            for attempt in 1...2 {
                await #expect {
                    _ = try await client.fetchResource("maps", into: destination)
                } throws: { error in
                    Self.isResponseSignatureInvalid(error)
                }
                #expect(tampering.altered == attempt)
                #expect(try Self.snapshot(app) == installed)
                #expect(try Self.snapshot(state) == kept)
                #expect(!FileManager.default.fileExists(atPath: state + "/.partial/maps"))
                #expect(try Self.text(destination + "/readme.txt") == "version one")
            }

            // The terminator stops altering: version 2 arrives whole, then is current (304).
            tampering.set(.nothing)
            let updated = try await client.fetchResource("maps", into: destination)
            #expect(updated.version == 2 && updated.updated && updated.files == 2)
            #expect(try Self.text(destination + "/readme.txt") == "version two")
            #expect(try Self.text(destination + "/extra.txt") == "more")
            let current = try await client.fetchResource("maps", into: destination)
            #expect(current.version == 2 && !current.updated)
            #expect(tampering.altered == 2)
        }
    }

    @Test func aTerminatorWithTheServersKeyCannotAlterAnAnswer() async throws {
        let tampering = Tampering()
        try await Self.withServerBehindProxy(rewrite: tampering.rewrite) { proxy, server in
            let client = try Self.client(server, port: proxy.port, state: server.folder.file("state"))
            // The register answer with one letter changed: refused, though the request was genuine.
            tampering.set(.json)
            await #expect {
                _ = try await client.register(email: "ann@example.com", password: "correct horse battery", displayName: "Ann")
            } throws: { error in
                Self.isResponseSignatureInvalid(error)
            }
            #expect(tampering.altered == 1)
            // She can sign in: the server did register her.
            tampering.set(.nothing)
            try await client.signIn(email: "ann@example.com", password: "correct horse battery")
            #expect(try await client.me().displayName == "Ann")
            // `GET /v1/me` with one letter changed: refused.
            tampering.set(.json)
            await #expect {
                _ = try await client.me()
            } throws: { error in
                Self.isResponseSignatureInvalid(error)
            }
            #expect(tampering.altered == 2)
            #expect(await client.authState == .signedIn(email: "ann@example.com"))
            // The session survives an altered answer; the genuine one is accepted.
            tampering.set(.nothing)
            #expect(try await client.me().email == "ann@example.com")
        }
    }
}

extension TLSProxy {
    /// Terminates TLS for `server` with the server's own certificate and key (a genuine — or
    /// compromised — TLS terminator), forwarding to it and trusting it by its pins.
    func front(_ server: TestServer) throws {
        forward(to: server.port, trust: server.api.transport.trust)
        try present(Identity(chain: [server.identity.certificate], key: server.identity.tlsKey))
    }
}
