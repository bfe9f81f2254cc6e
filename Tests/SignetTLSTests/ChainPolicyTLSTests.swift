import Foundation
import SignetTestSupport
import SignetX509
import SignetX509TestSupport
import Testing

/// Issue 29 through a real TLS handshake: `signet request send --roots` against an
/// `openssl s_server` on loopback presenting chains from the differential corpus. A client
/// certificate, a CN outside its issuer's name constraints and a cross-signed mesh built to
/// make path building explode are each refused with exit 1 and the reason (the mesh by the
/// path building limit, not by the request's timeout). Waits are hang guards only.
@Suite("SignetTLS: chains openssl refuses are refused over TLS too")
struct ChainPolicyTLSTests {
    /// The corpus's extension file (a vector of SignetX509Tests, read from the source tree).
    static var extensions: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("SignetX509Tests/Vectors/differential/ext.cnf")
    }

    /// Serves `leaf` (its key from the corpus) with `chain` and runs `request send --roots roots`.
    static func send(
        leaf: String, chain: [String], roots: String, corpus: OpenSSLCorpus, folder: TemporaryFolder
    ) async throws -> RunResult {
        var bundle = Data()
        for name in chain { bundle.append(try Data(contentsOf: URL(fileURLWithPath: corpus.certificateFile(name)))) }
        try folder.write("chain.pem", bundle)
        let server = try await OpenSSLServer.start(
            certificate: corpus.certificateFile(leaf), key: corpus.keyFile(leaf), chain: chain.isEmpty ? nil : "chain.pem", in: folder)
        defer { server.stop() }
        try OpenSSLServerTests.writeClientKey(in: folder)
        try folder.write("roots.pem", try Data(contentsOf: URL(fileURLWithPath: corpus.certificateFile(roots))))
        return try await OpenSSLServerTests.send("https://127.0.0.1:\(server.port)/", ["--roots", "roots.pem"], in: folder)
    }

    @Test func clientCertificateNameConstraintsAndAMeshAreRefused() async throws {
        let folder = try TemporaryFolder(prefix: "signet-chain-tls")
        let corpusFolder = folder.url.appendingPathComponent("corpus")
        try FileManager.default.createDirectory(at: corpusFolder, withIntermediateDirectories: true)
        let corpus = try await OpenSSLCorpus.make(families: [.extendedKeyUsage, .nameConstraints, .mesh], extensions: Self.extensions, in: corpusFolder)

        let client = try await Self.send(
            leaf: "eku-leaf-client.ca-none.root-none", chain: ["eku-ca-none.root-none"], roots: "root", corpus: corpus, folder: folder)
        #expect(client.status == 1, "\(client)")
        #expect(client.stderr.contains("does not allow TLS server authentication"), "\(client)")
        #expect(!client.out.contains(OpenSSLServer.statusPage))

        let outside = try await Self.send(
            leaf: "nc-leaf-cn-out.permitted-on-ca", chain: ["nc-ca-permitted"], roots: "root", corpus: corpus, folder: folder)
        #expect(outside.status == 1, "\(outside)")
        #expect(outside.stderr.contains("victim.test is outside what issuer"), "\(outside)")

        var mesh: [String] = []
        for i in 1...7 { for j in 1...7 where i != j { mesh.append("mesh-aki-\(i)-\(j)") } }
        let exploding = try await Self.send(leaf: "mesh-aki-leaf", chain: mesh, roots: "mesh-unrelated-root", corpus: corpus, folder: folder)
        #expect(exploding.status == 1, "\(exploding)")
        #expect(exploding.stderr.contains("path building limit") || exploding.stderr.contains("no path to a trusted root"), "\(exploding)")
        #expect(!exploding.stderr.contains("timeout"), "the mesh was refused by the request's timeout, not by the search's limit: \(exploding)")
    }
}
