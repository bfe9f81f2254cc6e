import Foundation
import HTTPTypes
import SignetBundle
import SignetClient
import SignetCore
import SignetServer
import SignetTLS
import SignetTestSupport
import Synchronization
import Testing

/// What the resource tests share: tars made by GNU tar, bundles and trust roots signed by the
/// keys a test chooses, snapshots of what a fetch must leave alone, clients of a test server,
/// and transports that stand between a client and the server (a proxy that rewrites answers,
/// a connection that breaks mid-download, a recorder).
enum ResourceFixtures {
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// A fresh Ed25519 key.
    static func signer() throws -> SoftwareSigner { try SoftwareSigner(key: PrivateKey.generate(.ed25519)) }

    /// SHA-256 in lowercase hex, as resource records and ETags carry it.
    static func sha256(_ bytes: [UInt8]) -> String { Hex.encode(DigestAlgorithm.sha256.hash(bytes).bytes) }

    /// The bytes of the file at `path`, nil when there is none.
    static func read(_ path: String) -> [UInt8]? { FileManager.default.contents(atPath: path).map { Array($0) } }

    static func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    /// Where `needle` first occurs in `haystack`.
    static func index(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard !needle.isEmpty, needle.count <= haystack.count else { return nil }
        return (0...(haystack.count - needle.count)).first { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }

    // MARK: Uploads

    /// A tar made by GNU tar (`tar -C folder/name -cf folder/name.tar .`) of `files` (path →
    /// content) and of symbolic links (path → target).
    static func tar(
        _ files: [String: [UInt8]], symlinks: [String: String] = [:], in folder: TemporaryFolder, name: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> [UInt8] {
        let source = folder.file(name)
        try FileManager.default.createDirectory(atPath: source, withIntermediateDirectories: true)
        for (path, content) in files { try folder.write("\(name)/\(path)", content) }
        for (path, target) in symlinks { try FileManager.default.createSymbolicLink(atPath: "\(source)/\(path)", withDestinationPath: target) }
        let result = try ProcessRunner.run("/usr/bin/env", ["tar", "-C", source, "-cf", folder.file("\(name).tar"), "."])
        try #require(result.status == 0, "tar failed: \(result)", sourceLocation: sourceLocation)
        return try folder.read("\(name).tar")
    }

    /// A bundle of `files` made by `BundleCreator`, signed by `signers`.
    static func bundle(
        _ name: String, version: Int64, files: [String: [UInt8]], signers: [any Signer], in folder: TemporaryFolder,
        expires: Date? = nil, created: Date = Date()
    ) async throws -> [UInt8] {
        let label = "bundle-\(UUID().uuidString)"
        for (path, content) in files { try folder.write("\(label)/\(path)", content) }
        _ = try await BundleCreator(name: name, version: version, expires: expires, created: created)
            .create(inputs: [folder.file(label)], signers: signers, output: folder.file("\(label).zip"))
        return try folder.read("\(label).zip")
    }

    /// A trust root of `keys` signed by `signers`, whoever they are (`TrustRoot.rotated` only
    /// lets the current root's keys sign; a forger is not so polite).
    static func root(version: Int64, threshold: Int, keys: [any Signer], signedBy signers: [any Signer]) async throws -> TrustRoot {
        let trusted = try keys.map { try TrustedKey(publicKey: $0.publicKey) }
        let unsigned = try TrustRoot(version: version, threshold: threshold, keys: trusted)
        var signatures: [BundleSignature] = []
        for signer in signers {
            let signature = try await signer.sign(message: unsigned.signedBytes)
            signatures.append(BundleSignature(keyID: signer.publicKey.fingerprint, algorithm: signer.algorithm, signature: signature))
        }
        return try TrustRoot(version: version, threshold: threshold, keys: trusted, signatures: signatures)
    }

    /// Runs `body`, which must fail with the server's refusal (`ClientError.refused`) of
    /// `status` and `code`, its detail mentioning `fragment`.
    static func expectRefusal(
        status: Int, code: String, mentioning fragment: String? = nil, sourceLocation: SourceLocation = #_sourceLocation,
        _ body: () async throws -> Void
    ) async throws {
        let error = try await thrownAsync(ClientError.self, sourceLocation: sourceLocation) { try await body() }
        guard case .refused(let gotStatus, let gotCode, let detail) = error else {
            Issue.record("not the server's refusal: \(error)", sourceLocation: sourceLocation)
            return
        }
        #expect(gotStatus == status && gotCode == code, "\(error)", sourceLocation: sourceLocation)
        if let fragment {
            #expect(detail.contains(fragment), "\"\(detail)\" does not mention \"\(fragment)\"", sourceLocation: sourceLocation)
        }
    }

    // MARK: Files on the client's side

    /// Every regular file under `folder` (relative path → content); nil when it does not exist.
    static func tree(_ folder: String) throws -> [String: [UInt8]]? {
        guard exists(folder) else { return nil }
        var files: [String: [UInt8]] = [:]
        let enumerator = FileManager.default.enumerator(atPath: folder)
        while let path = enumerator?.nextObject() as? String {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder + "/" + path, isDirectory: &isFolder), !isFolder.boolValue else { continue }
            files[path] = try Array(Data(contentsOf: URL(fileURLWithPath: folder + "/" + path)))
        }
        return files
    }

    /// The files of an extracted resource, without Signet's own `.signet/`.
    static func contents(_ folder: String) throws -> [String: [UInt8]]? {
        try tree(folder)?.filter { !$0.key.hasPrefix(".signet/") }
    }

    /// What a refused fetch must leave as it was: the destination (every file, `.signet/`
    /// included) and the state files of the name and of the trust root.
    struct Snapshot: Equatable {
        var destination: [String: [UInt8]]?
        var accepted: [UInt8]?
        var installedTag: [UInt8]?
        var trust: [UInt8]?

        init(destination: String, state: String, name: String) throws {
            self.destination = try ResourceFixtures.tree(destination)
            accepted = ResourceFixtures.read("\(state)/\(name).json")
            installedTag = ResourceFixtures.read("\(state)/.installed-tag/\(name)")
            trust = ResourceFixtures.read("\(state)/.trust.json")
        }
    }

    /// Checks that nothing changed since `before`, that no partial download is left in
    /// `state`, and no work folder beside `destination`.
    static func expectUnchanged(
        since before: Snapshot, destination: String, state: String, name: String, _ label: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let after = try Snapshot(destination: destination, state: state, name: name)
        #expect(after.destination == before.destination, "\(label): the destination changed", sourceLocation: sourceLocation)
        #expect(after.accepted == before.accepted, "\(label): \(name).json changed", sourceLocation: sourceLocation)
        #expect(after.installedTag == before.installedTag, "\(label): \(name).etag changed", sourceLocation: sourceLocation)
        #expect(after.trust == before.trust, "\(label): trust.json changed", sourceLocation: sourceLocation)
        #expect(!exists("\(state)/.partial/\(name)"), "\(label): a partial download is left", sourceLocation: sourceLocation)
        #expect(!exists("\(state)/.partial-tag/\(name)"), "\(label): a partial download's tag is left", sourceLocation: sourceLocation)
        let url = URL(fileURLWithPath: destination)
        let parent = url.deletingLastPathComponent().path
        let base = url.lastPathComponent
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: parent).filter { $0.hasPrefix(".\(base).signet") }
        #expect(leftovers.isEmpty, "\(label): work folders left: \(leftovers)", sourceLocation: sourceLocation)
    }

    // MARK: Clients

    /// Pinned TLS to `server`, every answer held to the wire contract (``ResponseContract``).
    static func pinned(_ server: TestServer) -> any ClientTransport {
        ContractCheckingTransport(inner: PinnedTransport(trust: server.api.transport.trust, timeout: TestTimeouts.hangGuard))
    }

    /// A client of `server` that can fetch resources: it ships `trustRoot` (the server's seeded
    /// root by default), keeps its state in `server.folder/state`, and checks response
    /// signatures unless `checkResponses` is false.
    static func client(
        _ server: TestServer, checkResponses: Bool = true, transport: (any ClientTransport)? = nil, trustRoot: TrustRoot? = nil
    ) throws -> SignetClient {
        let configuration = ClientConfiguration(
            server: "https://127.0.0.1:\(server.port)", appSigner: server.app,
            serverKey: checkResponses ? server.identity.responseSigner.publicKey : nil, trustRoot: trustRoot ?? server.trustRoot,
            resourceState: server.folder.file("state"))
        return try SignetClient(configuration: configuration, transport: transport ?? pinned(server), sessions: InMemorySessionStore())
    }

    /// The error a fetch must throw.
    static func fetchError(
        _ client: SignetClient, _ name: String, into destination: String, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> ClientError {
        try await thrownAsync(ClientError.self, sourceLocation: sourceLocation) { try await client.fetchResource(name, into: destination) }
    }

    // MARK: Transports

    /// A proxy on the path: forwards every request, then lets `rewrite` replace the answer
    /// (nil keeps it). Downloads are read whole and handed to the client's sink, so a
    /// rewritten body is what the client writes.
    struct RewritingTransport: ClientTransport {
        let inner: any ClientTransport
        let rewrite: @Sendable (HTTPRequest, HTTPResponse, [UInt8]) -> (HTTPResponse, [UInt8])?

        func send(_ request: HTTPRequest, body: [UInt8]?) async throws -> (HTTPResponse, [UInt8]) {
            let (head, responseBody) = try await inner.send(request, body: body)
            return rewrite(request, head, responseBody) ?? (head, responseBody)
        }

        func download(_ request: HTTPRequest, to sink: any HTTPSBodySink) async throws -> (HTTPResponse, [UInt8]) {
            let (head, body) = try await send(request, body: nil)
            do {
                guard try sink.accepts(head) else { return (head, body) }
                try body.withUnsafeBytes { try sink.write($0) }
            } catch let error as ClientError {
                throw error
            } catch {
                throw ClientError.storage(detail: "\(error)")
            }
            return (head, [])
        }
    }

    /// Answers every GET of `/v1/resources/…` with `bundle`, whole, as a 200 with its own ETag
    /// (whatever the server said: a 304, another version); everything else passes unchanged.
    static func serving(_ bundle: [UInt8], through inner: any ClientTransport) -> RewritingTransport {
        let tag = "\"\(sha256(bundle))\""
        return RewritingTransport(inner: inner) { request, head, _ in
            guard request.path?.hasPrefix("/v1/resources/") == true else { return nil }
            var fields = head.headerFields
            fields[.contentRange] = nil
            fields[.eTag] = tag
            fields[.contentType] = ResourceAPI.bundleType
            return (HTTPResponse(status: .ok, headerFields: fields), bundle)
        }
    }

    /// The connection breaking mid-download: the sink it wraps gets bytes until `limit` went
    /// through, then every write throws (which aborts the response).
    final class CuttingSink: HTTPSBodySink {
        struct Cut: Error {}
        let inner: any HTTPSBodySink
        let limit: Int
        let written = Mutex(0)

        init(inner: any HTTPSBodySink, limit: Int) {
            self.inner = inner
            self.limit = limit
        }

        func accepts(_ head: HTTPResponse) throws -> Bool { try inner.accepts(head) }

        func write(_ bytes: UnsafeRawBufferPointer) throws {
            guard written.withLock({ $0 }) < limit else { throw Cut() }
            try inner.write(bytes)
            written.withLock { $0 += bytes.count }
        }
    }

    /// Streams downloads over pinned TLS through a ``CuttingSink``.
    struct CuttingTransport: ClientTransport {
        let inner: any ClientTransport
        let limit: Int

        func send(_ request: HTTPRequest, body: [UInt8]?) async throws -> (HTTPResponse, [UInt8]) {
            try await inner.send(request, body: body)
        }

        func download(_ request: HTTPRequest, to sink: any HTTPSBodySink) async throws -> (HTTPResponse, [UInt8]) {
            try await inner.download(request, to: CuttingSink(inner: sink, limit: limit))
        }
    }

    /// Pinned TLS, streaming, with every request and the status it got recorded.
    final class RecordingTransport: ClientTransport {
        let inner: any ClientTransport
        let log = Mutex<[(request: HTTPRequest, status: Int)]>([])

        init(inner: any ClientTransport) { self.inner = inner }

        var exchanges: [(request: HTTPRequest, status: Int)] { log.withLock { $0 } }

        func send(_ request: HTTPRequest, body: [UInt8]?) async throws -> (HTTPResponse, [UInt8]) {
            let answer = try await inner.send(request, body: body)
            log.withLock { $0.append((request, answer.0.status.code)) }
            return answer
        }

        func download(_ request: HTTPRequest, to sink: any HTTPSBodySink) async throws -> (HTTPResponse, [UInt8]) {
            let answer = try await inner.download(request, to: sink)
            log.withLock { $0.append((request, answer.0.status.code)) }
            return answer
        }
    }

    /// A transport no request may reach.
    struct UnusedTransport: ClientTransport {
        func send(_ request: HTTPRequest, body: [UInt8]?) async throws -> (HTTPResponse, [UInt8]) {
            Issue.record("a request was sent: \(request.method) \(request.path ?? "")")
            throw ClientError.unreachable(detail: "no server in this test")
        }
    }
}
