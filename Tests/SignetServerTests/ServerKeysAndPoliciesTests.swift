import Foundation
import HTTPTypes
import SignetCore
import SignetHTTP
import SignetClient
import SignetServer
import SignetTestSupport
import Testing

/// Apps with every kind of key, passwords re-hashed under a stronger policy, and a server on a
/// certificate of the operator's own.
@Suite struct ServerKeysAndPoliciesTests {
    @Test(arguments: [KeyGenerationType.rsa2048, .p256, .p384, .ed25519])
    func appsSignWithEveryKeyKind(_ type: KeyGenerationType) async throws {
        try await TestServer.with { server in
            let key = try PrivateKey.generate(type)
            let enrolled = try await server.adminClient.enrol(
                AdminAPI.Enrolment(name: "app-\(type.rawValue)", publicKey: PEM.encode(label: "PUBLIC KEY", der: key.publicKey.spkiDER)), role: .app)
            let algorithm = try #require(SignatureAlgorithm(rawValue: enrolled.algorithm))
            #expect(algorithm == HTTPSignatureAlgorithms.default(for: key.publicKey.kind))
            let signer = HTTPMessageSigner(key: .signer(try SoftwareSigner(key: key, algorithm: algorithm)))
            let registered = try await server.api.send(
                .post, "/v1/users", json: UserAPI.Registration(email: "\(type.rawValue)@example.com", password: "0123456789", displayName: "K"),
                signer: signer)
            #expect(registered.status == 201, "\(type): \(registered.text)")
        }
    }

    @Test func aWeakerStoredHashIsReplacedAtSignIn() async throws {
        try await TestServer.with(configure: { $0.passwordHasher = PasswordHasher(algorithm: .scrypt(logN: 11, r: 8, p: 1)) }) { server in
            let weak = try PasswordHasher(algorithm: .scrypt(logN: 10, r: 8, p: 1)).hash(SecretBytes(Array("old but good pw".utf8)))
            try await server.store.users.add(UserRecord(id: "u1", email: "old@example.com", displayName: "Old", passwordHash: weak, createdAt: 0))
            let signIn = try await server.api.send(
                .post, "/v1/sessions", json: UserAPI.SignIn(email: "old@example.com", password: "old but good pw"), signer: server.appSigner)
            #expect(signIn.status == 201)
            let stored = try #require(try await server.store.users.find(email: "old@example.com")).passwordHash
            #expect(stored.hasPrefix("$scrypt$ln=11,"))
            #expect(stored != weak)
            // And the new hash still takes the password.
            let again = try await server.api.send(
                .post, "/v1/sessions", json: UserAPI.SignIn(email: "old@example.com", password: "old but good pw"), signer: server.appSigner)
            #expect(again.status == 201)
        }
    }

    @Test func serveOnTheOperatorsCertificate() async throws {
        let folder = try TemporaryFolder(prefix: "signet-serve")
        let keys = try ServerKeys.initialise(in: folder)
        let tlsKey = try PrivateKey.generate(.p256)
        let keyPath = try folder.write("tls.pem", try tlsKey.encoded(as: .pem))
        let made = try SignetBinary.run(
            ["cert", "self-signed", "--key", keyPath, "--subject", "CN=localhost", "--san", "IP:127.0.0.1", "-o", folder.file("tls-cert.pem")],
            in: folder.url)
        try #require(made.status == 0, "\(made)")
        let server = try await ServeProcess.start(in: folder, extra: ["--tls-cert", folder.file("tls-cert.pem"), "--tls-key", keyPath])
        defer { server.process.stop() }
        // It announces the pin of the operator's key; a client pinning it (and a backup) gets in.
        #expect(server.process.output.contains("pin: \(tlsKey.publicKey.fingerprint)"))
        let backup = try PrivateKey.generate(.p256).publicKey.fingerprint
        let api = try TestAPI(port: server.port, pins: [tlsKey.publicKey.fingerprint, backup])
        #expect(try await api.send(.get, "/v1/health", signer: nil).status == 200)
        let client = try server.adminClient(signer: keys.adminSigner, api: api)
        #expect(try await client.list(role: .app).isEmpty)
    }
}
