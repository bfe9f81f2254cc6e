import Foundation
import HTTPTypes
import SignetBundle
import SignetClient
import SignetCore
import SignetServer
import SignetTLS
import SignetTestSupport
import Testing

/// `SignetClient.fetchResource` against a live server: the story (install, current, update),
/// every bundle a client must refuse — with the previous version left exactly in place — the
/// walk through trust-root rotations, and a download resumed after the connection broke.
@Suite struct ResourceFetchTests {
    typealias F = ResourceFixtures

    @Test func fetchInstallsThenSaysCurrentThenUpdates() async throws {
        try await TestServer.with { server in
            let folder = try TemporaryFolder(prefix: "signet-fetch")
            let admin = try server.adminClient
            let client = try F.client(server)
            let destination = server.folder.file("site")
            let state = server.folder.file("state")
            let one = ["index.html": F.bytes("<h1>one</h1>"), "img/logo.svg": F.bytes("<svg/>")]
            _ = try await admin.publish(name: "site", upload: try F.tar(one, in: folder, name: "one"))

            let first = try await client.fetchResource("site", into: destination)
            #expect(first.name == "site" && first.version == 1 && first.updated && first.files == 2 && first.trustRootVersion == 1, "\(first)")
            #expect(try F.contents(destination) == one)
            #expect(try BundleState(folder: state).acceptedVersion(of: "site") == 1)
            #expect(!F.exists(state + "/.partial/site") && !F.exists(state + "/.partial-tag/site"))
            #expect(!F.exists(state + "/.trust.json"), "no rotation, nothing to keep")

            let again = try await client.fetchResource("site", into: destination)
            #expect(again.version == 1 && !again.updated && again.files == 0 && again.trustRootVersion == 1, "\(again)")
            #expect(try F.contents(destination) == one)

            let two = ["index.html": F.bytes("<h1>two</h1>"), "about.html": F.bytes("about")]
            _ = try await admin.publish(name: "site", upload: try F.tar(two, in: folder, name: "two"))
            let second = try await client.fetchResource("site", into: destination)
            #expect(second.version == 2 && second.updated && second.files == 2, "\(second)")
            #expect(try F.contents(destination) == two, "the old files are gone, the new ones exact")
            #expect(!F.exists(destination + "/img"))
            #expect(try BundleState(folder: state).acceptedVersion(of: "site") == 2)
            #expect(!F.exists(state + "/.partial/site"))
        }
    }

    /// Publishes version 1 of `site`, installs it with an honest client, publishes version 2.
    /// What most tests start from: a scratch folder, the admin client, the destination `site`
    /// and the client's state folder.
    static func scene(_ server: TestServer, _ prefix: String) throws -> (TemporaryFolder, AdminClient, String, String) {
        (try TemporaryFolder(prefix: prefix), try server.adminClient, server.folder.file("site"), server.folder.file("state"))
    }

    static func installOneThenPublishTwo(_ server: TestServer, admin: AdminClient, folder: TemporaryFolder, destination: String) async throws {
        _ = try await admin.publish(name: "site", upload: try F.tar(["index.html": F.bytes("one")], in: folder, name: "one"))
        _ = try await F.client(server).fetchResource("site", into: destination)
        _ = try await admin.publish(name: "site", upload: try F.tar(["index.html": F.bytes("two")], in: folder, name: "two"))
    }

    /// Installs version 1 then 2 of `site` with an honest client; returns both bundles as served.
    static func installTwoVersions(_ server: TestServer, folder: TemporaryFolder, destination: String) async throws -> (one: [UInt8], two: [UInt8]) {
        let admin = try server.adminClient
        let honest = try F.client(server)
        _ = try await admin.publish(name: "site", upload: try F.tar(["index.html": F.bytes("one")], in: folder, name: "one"))
        #expect(try await honest.fetchResource("site", into: destination).version == 1)
        _ = try await admin.publish(name: "site", upload: try F.tar(["index.html": F.bytes("two"), "b.txt": F.bytes("b")], in: folder, name: "two"))
        #expect(try await honest.fetchResource("site", into: destination).version == 2)
        let one = try await server.api.send(.get, "/v1/resources/site/1", signer: server.appSigner)
        let two = try await server.api.send(.get, "/v1/resources/site/2", signer: server.appSigner)
        try #require(one.status == 200 && two.status == 200)
        return (one.body, two.body)
    }

    @Test func aRefusedBundleLeavesThePreviousVersionInPlace() async throws {
        try await TestServer.with { server in
            let folder = try TemporaryFolder(prefix: "signet-fetch-refusals")
            let destination = server.folder.file("site")
            let state = server.folder.file("state")
            let (olderBundle, _) = try await Self.installTwoVersions(server, folder: folder, destination: destination)
            #expect(try F.contents(destination) == ["index.html": F.bytes("two"), "b.txt": F.bytes("b")])

            let rootKey = server.identity.responseSigner
            let files = ["index.html": F.bytes("PAYLOAD-0123456789-PAYLOAD")]
            let expired = try await F.bundle(
                "site", version: 3, files: files, signers: [rootKey], in: folder, expires: Date().addingTimeInterval(-3600),
                created: Date().addingTimeInterval(-7200))
            let unknownKey = try await F.bundle("site", version: 3, files: files, signers: [try F.signer()], in: folder)
            let valid = try await F.bundle("site", version: 3, files: files, signers: [rootKey], in: folder)
            let data = try #require(F.index(of: F.bytes("0123456789"), in: valid))
            let flipped = TestBytes.flipped(valid, at: data + 4)
            let otherName = try await F.bundle("blog", version: 3, files: files, signers: [rootKey], in: folder)

            let cases: [(label: String, bundle: [UInt8], matches: (ClientError) -> Bool)] = [
                ("version 1 after 2", olderBundle, { if case .rollback = $0 { return true } else { return false } }),
                ("expired", expired, { if case .resourceRefused("bundle.expired", _) = $0 { return true } else { return false } }),
                ("an unknown key", unknownKey, { if case .resourceRefused("bundle.verificationFailed", _) = $0 { return true } else { return false } }),
                ("a flipped byte", flipped, { if case .resourceRefused("bundle.verificationFailed", _) = $0 { return true } else { return false } }),
                ("another name", otherName, { if case .resourceRefused("bundle.wrongName", _) = $0 { return true } else { return false } }),
            ]
            for refusal in cases {
                let before = try F.Snapshot(destination: destination, state: state, name: "site")
                #expect(before.accepted != nil && before.installedTag != nil)
                // No server key: the response signature would catch the rewritten body first.
                let client = try F.client(server, checkResponses: false, transport: F.serving(refusal.bundle, through: F.pinned(server)))
                let error = try await F.fetchError(client, "site", into: destination)
                #expect(refusal.matches(error), "\(refusal.label): \(error)")
                try F.expectUnchanged(since: before, destination: destination, state: state, name: "site", refusal.label)
            }
            // The unflipped bundle passes the same way (so the flip alone was refused)…
            let control = try F.client(server, checkResponses: false, transport: F.serving(valid, through: F.pinned(server)))
            let accepted = try await control.fetchResource("site", into: destination)
            #expect(accepted.version == 3 && accepted.updated)
            #expect(try F.contents(destination) == files)
        }
    }

    @Test func aRewrittenBodyFailsTheResponseSignatureFirst() async throws {
        try await TestServer.with { server in
            let (folder, admin, destination, state) = try Self.scene(server, "signet-fetch-signature")
            try await Self.installOneThenPublishTwo(server, admin: admin, folder: folder, destination: destination)
            let served = try await server.api.send(.get, "/v1/resources/site/2", signer: server.appSigner)
            try #require(served.status == 200)

            let before = try F.Snapshot(destination: destination, state: state, name: "site")
            let tampered = TestBytes.flipped(served.body, at: served.body.count / 2)
            let client = try F.client(server, transport: F.serving(tampered, through: F.pinned(server)))
            let error = try await F.fetchError(client, "site", into: destination)
            if case .responseSignatureInvalid = error {} else { Issue.record("expected responseSignatureInvalid, got \(error)") }
            try F.expectUnchanged(since: before, destination: destination, state: state, name: "site", "a rewritten body")
            #expect(try F.contents(destination) == ["index.html": F.bytes("one")])

            // The same proxy passing the server's bytes unchanged is accepted.
            let faithful = try F.client(server, transport: F.serving(served.body, through: F.pinned(server)))
            #expect(try await faithful.fetchResource("site", into: destination).version == 2)
            #expect(try F.contents(destination) == ["index.html": F.bytes("two")])
        }
    }

    @Test func aClientWalksTheRotationsToTheNewKey() async throws {
        try await TestServer.with { server in
            let (folder, admin, destination, state) = try Self.scene(server, "signet-fetch-rotation")
            let newKey = try F.signer()
            let next = try await server.trustRoot.rotated(
                to: [TrustedKey(publicKey: newKey.publicKey)], threshold: 1, signedBy: [server.identity.responseSigner])
            try await admin.rotateTrust(next.fileBytes)
            let files = ["config.json": F.bytes("{\"mode\":2}")]
            let bundle = try await F.bundle("site", version: 1, files: files, signers: [newKey], in: folder)
            let published = try await admin.publish(name: "site", upload: bundle)
            #expect(published.created && published.record.signedBy == "offline")

            // The client ships version 1 (the server's key only) and learns version 2 on the way.
            let client = try F.client(server)
            let fetched = try await client.fetchResource("site", into: destination)
            #expect(fetched.version == 1 && fetched.updated && fetched.trustRootVersion == 2, "\(fetched)")
            #expect(try F.contents(destination) == files)
            #expect(F.read(state + "/.trust.json") == next.fileBytes)
            #expect(try TrustRoot.load(path: state + "/.trust.json") == next)

            // A client that kept version 2 needs no walk, and finds the resource current.
            let again = try await client.fetchResource("site", into: destination)
            #expect(!again.updated && again.trustRootVersion == 2)
        }
    }

    @Test func aRotationTheCurrentRootDidNotSignIsRefused() async throws {
        try await TestServer.with { server in
            let (folder, admin, destination, state) = try Self.scene(server, "signet-fetch-forged-root")
            try await Self.installOneThenPublishTwo(server, admin: admin, folder: folder, destination: destination)

            let stranger = try F.signer()
            let forged = try await F.root(version: 2, threshold: 1, keys: [stranger], signedBy: [stranger])
            let chain = Array(try JSONEncoder().encode(["roots": [String(decoding: forged.fileBytes, as: UTF8.self)]]))
            let transport = F.RewritingTransport(inner: F.pinned(server)) { request, head, _ in
                request.path?.hasPrefix("/v1/trust") == true ? (head, chain) : nil
            }
            let before = try F.Snapshot(destination: destination, state: state, name: "site")
            #expect(before.trust == nil)
            let error = try await F.fetchError(try F.client(server, checkResponses: false, transport: transport), "site", into: destination)
            if case .trustRotationRefused = error {} else { Issue.record("expected trustRotationRefused, got \(error)") }
            try F.expectUnchanged(since: before, destination: destination, state: state, name: "site", "a forged rotation")
            #expect(!F.exists(state + "/.trust.json"))
            #expect(try F.contents(destination) == ["index.html": F.bytes("one")])
        }
    }

    @Test func anInterruptedDownloadResumesWithRangeAndIfRange() async throws {
        try await TestServer.with { server in
            let folder = try TemporaryFolder(prefix: "signet-fetch-resume")
            let destination = server.folder.file("big")
            let state = server.folder.file("state")
            let partial = state + "/.partial/big"
            let partialTag = state + "/.partial-tag/big"
            // Over one stored chunk (1 MiB), so the resumed range crosses a chunk boundary.
            let files = ["payload.bin": RandomBytes.make(1280 << 10), "readme.txt": F.bytes("random bytes")]
            let record = try await server.adminClient.publish(name: "big", upload: try F.tar(files, in: folder, name: "big")).record
            let served = try await server.api.send(.get, "/v1/resources/big", signer: server.appSigner)
            try #require(served.status == 200 && F.sha256(served.body) == record.sha256)

            // The connection breaks after 64 KiB: the bytes so far stay, with the tag they belong to.
            let cut = try F.client(server, transport: F.CuttingTransport(inner: F.pinned(server), limit: 64 << 10))
            let error = try await F.fetchError(cut, "big", into: destination)
            if case .unreachable = error {} else { Issue.record("expected unreachable, got \(error)") }
            let kept = try #require(F.read(partial))
            #expect(kept.count >= 64 << 10 && Int64(kept.count) < record.size, "\(kept.count) bytes kept")
            #expect(kept == Array(served.body.prefix(kept.count)))
            #expect(F.read(partialTag) == F.bytes(record.etag))
            #expect(!F.exists(destination))
            #expect(try BundleState(folder: state).acceptedVersion(of: "big") == nil)

            // The next fetch asks for the rest only, and gets it.
            let recorder = F.RecordingTransport(inner: F.pinned(server))
            let fetched = try await F.client(server, transport: recorder).fetchResource("big", into: destination)
            #expect(fetched.version == 1 && fetched.updated && fetched.files == 2, "\(fetched)")
            #expect(try F.contents(destination) == files)
            let downloads = recorder.exchanges.filter { $0.request.path == "/v1/resources/big" }
            #expect(downloads.count == 1)
            let resumed = try #require(downloads.first)
            #expect(resumed.request.headerFields[.range] == "bytes=\(kept.count)-")
            #expect(resumed.request.headerFields[.ifRange] == record.etag)
            #expect(resumed.request.headerFields[.ifNoneMatch] == nil)
            #expect(resumed.status == 206)
            #expect(!F.exists(partial) && !F.exists(partialTag))
            #expect(F.read(state + "/.installed-tag/big").map { String(decoding: $0, as: UTF8.self).hasPrefix(record.etag + " ") } == true)
        }
    }

    @Test func fetchingNeedsATrustRootAndAStateFolder() async throws {
        let folder = try TemporaryFolder(prefix: "signet-fetch-configuration")
        let signer = try F.signer()
        let root = try TrustRoot(threshold: 1, keys: [TrustedKey(publicKey: signer.publicKey)])
        let server = "https://127.0.0.1:9"
        let incomplete = [
            ClientConfiguration(server: server, appSigner: signer),
            ClientConfiguration(server: server, appSigner: signer, trustRoot: root),
            ClientConfiguration(server: server, appSigner: signer, resourceState: folder.file("state")),
        ]
        for configuration in incomplete {
            let client = try SignetClient(configuration: configuration, transport: F.UnusedTransport(), sessions: InMemorySessionStore())
            let error = try await F.fetchError(client, "site", into: folder.file("site"))
            if case .invalidConfiguration = error {} else { Issue.record("expected invalidConfiguration, got \(error)") }
        }
        // A name that is not a bundle name is refused before anything is sent or written, too.
        let complete = ClientConfiguration(server: server, appSigner: signer, trustRoot: root, resourceState: folder.file("state"))
        let client = try SignetClient(configuration: complete, transport: F.UnusedTransport(), sessions: InMemorySessionStore())
        let error = try await F.fetchError(client, "../site", into: folder.file("site"))
        if case .invalidConfiguration = error {} else { Issue.record("expected invalidConfiguration, got \(error)") }
        #expect(try folder.contents().isEmpty)
    }
}
