import Foundation
import HTTPTypes
import Logging
import SignetCore
import SignetHTTP
import SignetServer
import SignetTLS
import SignetTestSupport
import Synchronization
import Testing

/// Publishing is atomic and durable on real processes: a publish cut by `kill -9` is never
/// served (nor leaves rows behind), and two nodes on PostgreSQL serve every version either one
/// stored.
@Suite(.serialized) struct ResourceDurabilityTests {
    @Test func aPublishKilledMidwayIsNeverServed() async throws {
        let folder = try TemporaryFolder(prefix: "signet-publish-kill")
        let keys = try ServerKeys.initialise(in: folder)
        let work = folder.file("work")
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        let payload = TestBytes.random(count: 48 << 20, seed: 18)
        let tar = try ResourceFixtures.tar(["payload.bin": payload], in: folder, name: "site")
        let wal = folder.file("data/signet.sqlite-wal")

        // Kill while the publish's transaction is being written: the write-ahead log has grown by
        // several MiB and no answer has come. A machine fast enough to answer first gets another try.
        var killedMidway = false
        for _ in 0..<3 where !killedMidway {
            let server = try await ServeProcess.start(in: folder, environment: ["TMPDIR": work])
            let admin = try AdminClient(server: server.url, signer: keys.adminSigner, transport: try server.api.transport)
            let before = Self.size(wal)
            let done = Flag()
            let publish = Task {
                defer { done.set() }
                return try await admin.publish(name: "big", upload: tar)
            }
            var answered = false
            for _ in 0..<6000 {
                if Self.size(wal) > before + (8 << 20) { break }
                if done.isSet { answered = true; break }
                try await Task.sleep(for: .milliseconds(5))
            }
            _ = server.process.stop(signal: SIGKILL)
            let outcome = await publish.result
            if case .failure = outcome, !answered { killedMidway = true }
            if case .success = outcome {
                // Acknowledged before the kill: it must then be served whole (checked below) — try again with a new name.
                break
            }
        }
        #expect(killedMidway, "the publish finished before it could be killed: the test proved nothing")

        // After a restart nothing of the cut publish is served, no chunk of it is left, and it can be published again.
        var logger = Logger(label: "signet.test")
        logger.logLevel = .critical
        let store = ServerStore(database: try ServerDatabase(location: .sqlite(path: folder.file("data/signet.sqlite")), logger: logger))
        if killedMidway {
            #expect(try await store.latestResource(name: "big") == nil)
            #expect(try await store.resourceChunks(name: "big", version: 1, 0...1000).isEmpty)
        }
        await store.database.shutdown()
        let server = try await ServeProcess.start(in: folder, environment: ["TMPDIR": work])
        defer { _ = server.process.stop() }
        try await keys.enrolApp(on: server)
        let api = try server.api
        if killedMidway {
            let missing = try await api.send(.get, "/v1/resources/big", signer: keys.appSigner)
            #expect(missing.status == 404, "\(missing.text)")
        }
        let admin = try AdminClient(server: server.url, signer: keys.adminSigner, transport: api.transport)
        let (record, created) = try await admin.publish(name: "big", upload: tar)
        #expect(created)
        var bigTransport = api.transport
        bigTransport.maximumResponseSize = 128 << 20
        let (request, _) = try await api.request(.get, "/v1/resources/big", signer: keys.appSigner)
        let served = try await bigTransport.send(request)
        #expect(served.status == 200)
        #expect(Hex.encode(DigestAlgorithm.sha256.hash(served.body).bytes) == record.sha256)
        // The work folder is emptied after every publish, the killed one's aside.
        #expect(try FileManager.default.contentsOfDirectory(atPath: work).count <= 1)
    }

    @Test func twoNodesOnPostgreSQLServeTheSameVersions() async throws {
        let (_, _, keys, nodeA, nodeB) = try await ServerNodesTests.twoNodes()
        defer {
            _ = nodeA.process.stop()
            _ = nodeB.process.stop()
        }
        let enrol = try await ServerNodesTests.signed(
            .post, "/v1/admin/apps", json: AdminAPI.Enrolment(name: "app", publicKey: Base64.encode(keys.app.publicKey.spkiDER)),
            signer: keys.adminSigner)
        #expect(try await ServerNodesTests.send(enrol, to: nodeA).status == 201)
        let folder = try TemporaryFolder(prefix: "signet-nodes-resources")

        func publish(_ text: String, to node: ServeProcess) async throws -> ResourceRecord {
            let tar = try ResourceFixtures.tar(["config.json": Array(text.utf8)], in: folder, name: "v\(text.count)-\(node.port)")
            var request = HTTPRequest(method: .post, scheme: "https", authority: ServerNodesTests.publicAuthority, path: "/v1/admin/resources/config")
            request.headerFields[.contentType] = ResourceAPI.tarType
            try await keys.adminSigner.sign(&request, body: tar)
            let answer = try await ServerNodesTests.send((request, tar), to: node)
            #expect(answer.status == 201, "\(answer.text)")
            return try answer.decode(ResourceRecord.self)
        }
        func fetch(_ path: String, from node: ServeProcess) async throws -> HTTPSResponse {
            try await ServerNodesTests.send(try await ServerNodesTests.signed(.get, path, signer: keys.appSigner), to: node)
        }

        let first = try await publish(#"{"v":1}"#, to: nodeA)
        let servedByB = try await fetch("/v1/resources/config", from: nodeB)
        #expect(servedByB.status == 200)
        #expect(servedByB.head.headerFields[.eTag] == first.etag)
        #expect(Hex.encode(DigestAlgorithm.sha256.hash(servedByB.body).bytes) == first.sha256)

        let second = try await publish(#"{"v":22}"#, to: nodeB)
        #expect(second.version == 2)
        let latestOnA = try await fetch("/v1/resources/config", from: nodeA)
        #expect(latestOnA.head.headerFields[.eTag] == second.etag)
        #expect(latestOnA.head.headerFields[ResourceAPI.versionField] == "2")
        let firstOnB = try await fetch("/v1/resources/config/1", from: nodeB)
        #expect(firstOnB.body == servedByB.body)
        // Both nodes serve the same trust root: the one their shared signing key made on first start.
        let trustA = try await fetch("/v1/trust", from: nodeA)
        let trustB = try await fetch("/v1/trust", from: nodeB)
        #expect(trustA.status == 200 && trustA.body == trustB.body)
    }

    static func size(_ path: String) -> Int64 {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.int64Value ?? 0
    }

    /// A flag one task sets and another reads.
    final class Flag: Sendable {
        private let value = Mutex(false)
        func set() { value.withLock { $0 = true } }
        var isSet: Bool { value.withLock { $0 } }
    }
}
