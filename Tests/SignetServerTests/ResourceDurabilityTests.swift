import Foundation
import HTTPTypes
import Logging
import SignetCore
import SignetHTTP
import SignetClient
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
        let payload = TestBytes.random(count: 48 << 20, seed: 18)
        var logger = Logger(label: "signet.test")
        logger.logLevel = .critical
        // Kill as soon as the publish's transaction has written 1 MiB of the write-ahead log (a
        // fresh database each try, so the log starts empty; SQLite spills a transaction's pages to
        // the log once its page cache, 8 MiB, is full, so with 48 MiB most of the transaction is
        // still to come). On a loaded machine the check may come only after the commit: that
        // publish must then be whole — and another try is made.
        var cut: (folder: TemporaryFolder, keys: ServerKeys, tar: [UInt8])?
        for attempt in 1...3 where cut == nil {
            let folder = try TemporaryFolder(prefix: "signet-publish-kill")
            let keys = try ServerKeys.initialise(in: folder)
            let tar = try ResourceFixtures.tar(["payload.bin": payload], in: folder, name: "site")
            let wal = folder.file("data/signet.sqlite-wal")
            let server = try await ServeProcess.start(in: folder)
            let admin = try server.adminClient(signer: keys.adminSigner)
            // A thread of its own polls the log every 0.2 ms and kills at once: the transaction
            // writes 48 MiB in about 150 ms, too short a window for a task's sleep.
            let killer = WALKiller(wal: wal, threshold: Self.size(wal) + (1 << 20), pid: server.process.process.processIdentifier)
            killer.start()
            let publish = Task { try await admin.publish(name: "big", upload: tar) }
            let acknowledgedOrFailed = await publish.result
            killer.stop()
            _ = server.process.stop(signal: SIGKILL)
            let acknowledged = (try? acknowledgedOrFailed.get()) != nil

            let store = ServerStore(database: try ServerDatabase(location: .sqlite(path: folder.file("data/signet.sqlite")), logger: logger))
            if let stored = try await store.resources.latest(name: "big") {
                // Committed before the kill: whole, whether or not its answer arrived.
                let chunks = try await store.resources.chunks(name: "big", version: stored.version, 0...1000)
                var hasher = DigestAlgorithm.sha256.makeHasher()
                for chunk in chunks { hasher.update(Array(chunk.readableBytesView)) }
                #expect(Hex.encode(hasher.finalize().bytes) == stored.sha256, "attempt \(attempt): a stored version is not whole")
            } else {
                #expect(!acknowledged, "attempt \(attempt): an acknowledged publish is missing")
                #expect(try await store.resources.chunks(name: "big", version: 1, 0...1000).isEmpty, "attempt \(attempt): chunks left behind")
                cut = (folder, keys, tar)
            }
            await store.database.shutdown()
        }
        let (folder, keys, tar) = try #require(cut, "every publish committed before it could be killed: the test proved nothing")
        let work = folder.file("data/work")
        let killedNode = try FileManager.default.contentsOfDirectory(atPath: work)
        #expect(killedNode.count == 1, "\(killedNode)")

        // After a restart nothing of the cut publish is served, and it can be published again.
        let server = try await ServeProcess.start(in: folder)
        defer { _ = server.process.stop() }
        try await keys.enrolApp(on: server)
        let api = try server.api
        let missing = try await api.send(.get, "/v1/resources/big", signer: keys.appSigner)
        #expect(missing.status == 404, "\(missing.text)")
        let admin = try server.adminClient(signer: keys.adminSigner, api: api)
        let (record, created) = try await admin.publish(name: "big", upload: tar)
        #expect(created && record.version == 1)
        var bigTransport = api.transport
        bigTransport.maximumResponseSize = 128 << 20
        let (request, _) = try await api.request(.get, "/v1/resources/big", signer: keys.appSigner)
        let served = try await bigTransport.send(request)
        #expect(served.status == 200)
        #expect(Hex.encode(DigestAlgorithm.sha256.hash(served.body).bytes) == record.sha256)
        // The killed server's work folder, upload and all, was removed at the restart; this
        // server's is emptied after every publish.
        let nodes = try FileManager.default.contentsOfDirectory(atPath: work)
        #expect(nodes.count == 1 && Set(nodes).isDisjoint(with: killedNode), "\(nodes)")
        if let node = nodes.first {
            #expect(try FileManager.default.contentsOfDirectory(atPath: work + "/" + node) == [".lock"])
        }
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

    /// Kills `pid` with SIGKILL as soon as the file `wal` grows past `threshold` bytes, from a
    /// thread of its own, until stopped.
    final class WALKiller: Sendable {
        let wal: String
        let threshold: Int64
        let pid: Int32
        private let stopped = Mutex(false)

        init(wal: String, threshold: Int64, pid: Int32) {
            self.wal = wal
            self.threshold = threshold
            self.pid = pid
        }

        func start() {
            Thread.detachNewThread { [self] in
                var info = stat()
                while !stopped.withLock({ $0 }) {
                    if stat(wal, &info) == 0, Int64(info.st_size) > threshold {
                        kill(pid, SIGKILL)
                        return
                    }
                    usleep(200)
                }
            }
        }

        func stop() { stopped.withLock { $0 = true } }
    }
}
