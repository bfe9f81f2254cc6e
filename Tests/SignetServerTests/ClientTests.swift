import Foundation
import HTTPTypes
import SignetClient
import SignetCore
import SignetServer
import SignetTLS
import SignetTestSupport
import SignetVault
import SignetX509
import Synchronization
import Testing

/// `SignetClient` against a live server over pinned TLS: the story, the sign-in state, the
/// session in the vault, and what an attacker or the server's refusals look like to an app.
@Suite struct ClientTests {
    static func client(
        _ server: TestServer, signer: (any Signer)? = nil, serverKey: PublicKey?? = nil, sessions: any SessionStore = InMemorySessionStore(),
        transport: (any ClientTransport)? = nil
    ) throws -> SignetClient {
        let configuration = ClientConfiguration(
            server: "https://127.0.0.1:\(server.port)", appSigner: signer ?? server.app,
            serverKey: serverKey ?? server.identity.responseSigner.publicKey)
        return try SignetClient(configuration: configuration, transport: transport ?? PinnedTransport(trust: server.api.transport.trust, timeout: TestTimeouts.hangGuard), sessions: sessions)
    }

    /// Collects what a state stream yields, in a task.
    final class StateLog: Sendable {
        let states = Mutex<[AuthState]>([])
        func append(_ state: AuthState) { states.withLock { $0.append(state) } }
        var all: [AuthState] { states.withLock { $0 } }
    }

    /// Waits until `log` holds `count` states (or the hang guard runs out; the test's checks then fail).
    static func waitFor(_ log: StateLog, count: Int) async throws {
        let deadline = TestTimeouts.deadline
        while log.all.count < count, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
    }

    @Test func registerSignInMeSignOutWithStates() async throws {
        try await TestServer.with { server in
            let client = try Self.client(server)
            let log = StateLog()
            let stream = await client.authStates()
            let watcher = Task { for await state in stream { log.append(state) } }
            defer { watcher.cancel() }
            let registered = try await client.register(email: "Ann@Example.com", password: "correct horse battery", displayName: "Ann")
            #expect(registered.email == "ann@example.com")
            try await client.signIn(email: "ann@example.com", password: "correct horse battery")
            #expect(try await client.me().displayName == "Ann")
            try await client.signOut()
            await #expect(throws: ClientError.notSignedIn(request: "GET /v1/me")) { _ = try await client.me() }
            try await Self.waitFor(log, count: 3)
            #expect(log.all == [.signedOut(reason: .none), .signedIn(email: "ann@example.com"), .signedOut(reason: .signedOut)])
            await #expect(throws: ClientError.wrongCredentials(detail: "wrong e-mail address or password")) { try await client.signIn(email: "ann@example.com", password: "not the password") }
        }
    }

    @Test func aSessionEndedOnTheServerSignsTheClientOut() async throws {
        try await TestServer.with { server in
            let client = try Self.client(server)
            try await client.register(email: "bob@example.com", password: "correct horse battery", displayName: "Bob")
            try await client.signIn(email: "bob@example.com", password: "correct horse battery")
            let log = StateLog()
            let stream = await client.authStates()
            let watcher = Task { for await state in stream { log.append(state) } }
            defer { watcher.cancel() }
            #expect(try await server.adminClient.revokeSessions(email: "bob@example.com") == 1)
            await #expect {
                _ = try await client.me()
            } throws: { error in
                guard let error = error as? ClientError, case .sessionEnded = error else { return false }
                return true
            }
            try await Self.waitFor(log, count: 2)
            #expect(log.all == [.signedIn(email: "bob@example.com"), .signedOut(reason: .sessionEnded)])
            #expect(await client.authState == .signedOut(reason: .sessionEnded))
        }
    }

    @Test func theSessionLivesInTheVaultAndIsRestored() async throws {
        try await TestServer.with { server in
            let vault = try await Vault.create(
                at: server.folder.file("client.vault"), credentials: VaultCredentials(keyFile: SecretBytes(RandomBytes.make(32))),
                kdf: VaultKDFParameters(logN: 10))
            let first = try Self.client(server, sessions: VaultSessionStore(vault: vault))
            try await first.register(email: "cy@example.com", password: "correct horse battery", displayName: "Cy")
            try await first.signIn(email: "cy@example.com", password: "correct horse battery")
            let items = try await vault.accounts(service: "signet-session/127.0.0.1:\(server.port)")
            #expect(items.map(\.account) == ["cy@example.com"])
            // A new client (the app launched again) restores the session from the vault.
            let second = try Self.client(server, sessions: VaultSessionStore(vault: vault))
            #expect(await second.authState == .signedIn(email: "cy@example.com"))
            #expect(try await second.me().email == "cy@example.com")
            try await second.signOut()
            #expect(try await vault.accounts(service: "signet-session/127.0.0.1:\(server.port)").isEmpty)
        }
    }

    /// A transport that changes one byte of every response body on its way (a proxy that
    /// rewrites answers).
    struct TamperingTransport: ClientTransport {
        let inner: any ClientTransport
        func send(_ request: HTTPRequest, body: [UInt8]?) async throws -> (HTTPResponse, [UInt8]) {
            var (head, responseBody) = try await inner.send(request, body: body)
            if let index = responseBody.firstIndex(of: UInt8(ascii: "A")) { responseBody[index] = UInt8(ascii: "B") }
            return (head, responseBody)
        }
    }

    @Test func responsesThatDidNotComeFromTheServerAreRefused() async throws {
        try await TestServer.with { server in
            let tampered = try Self.client(server, transport: TamperingTransport(inner: PinnedTransport(trust: server.api.transport.trust, timeout: TestTimeouts.hangGuard)))
            await #expect {
                try await tampered.register(email: "dee@example.com", password: "correct horse battery", displayName: "Ann")
            } throws: { error in
                guard let error = error as? ClientError, case .responseSignatureInvalid = error else { return false }
                return true
            }
            // A client expecting another server key refuses the real server's answers.
            let otherKey = try PrivateKey.generate(.ed25519).publicKey
            let wrongKey = try Self.client(server, serverKey: otherKey)
            await #expect {
                try await wrongKey.register(email: "e@example.com", password: "0123456789", displayName: "E")
            } throws: { error in
                guard let error = error as? ClientError, case .responseSignatureInvalid = error else { return false }
                return true
            }
        }
    }

    @Test func refusalsAreTyped() async throws {
        try await TestServer.with(configure: { $0.failedSignInsPerAccount = 1 }) { server in
            // A pin that is not the server's: a man in the middle.
            let pins = try PinSet(hosts: [HostPins(host: "127.0.0.1", pins: [
                try PrivateKey.generate(.p256).publicKey.fingerprint, try PrivateKey.generate(.p256).publicKey.fingerprint,
            ])])
            let mitm = try Self.client(server, transport: PinnedTransport(trust: TLSTrustPolicy(mode: .pinnedSelfSigned, pins: pins), timeout: TestTimeouts.hangGuard))
            await #expect(throws: ClientError.pinMismatch(host: "127.0.0.1")) { try await mitm.register(email: "f@example.com", password: "0123456789", displayName: "F") }
            // An unenrolled app key.
            let stranger = try Self.client(server, signer: try SoftwareSigner(key: PrivateKey.generate(.ed25519)))
            await #expect {
                try await stranger.register(email: "g@example.com", password: "0123456789", displayName: "G")
            } throws: { error in
                guard let error = error as? ClientError, case .signatureRefused = error else { return false }
                return true
            }
            // Rate limited, with the wait.
            let client = try Self.client(server)
            await #expect(throws: ClientError.wrongCredentials(detail: "wrong e-mail address or password")) { try await client.signIn(email: "h@example.com", password: "wrong wrong") }
            await #expect {
                try await client.signIn(email: "h@example.com", password: "wrong wrong")
            } throws: { error in
                guard let error = error as? ClientError, case .rateLimited(let wait) = error else { return false }
                return wait > 0
            }
            // A revoked app.
            try await server.adminClient.revoke(role: .app, name: "test-app")
            await #expect {
                try await client.register(email: "i@example.com", password: "0123456789", displayName: "I")
            } throws: { error in
                guard let error = error as? ClientError, case .revokedApp = error else { return false }
                return true
            }
        }
    }
}

/// An answer replayed to another request for the same URL — what a compromised path could do
/// with a signed 204 or 201 — is refused: the server's signature covers the request's own.
@Suite struct ClientResponseBindingTests {
    /// Returns, for every request after the first, the first response it saw.
    actor ReplayingTransport: ClientTransport {
        let inner: any ClientTransport
        var first: (HTTPResponse, [UInt8])?
        init(inner: any ClientTransport) { self.inner = inner }
        func send(_ request: HTTPRequest, body: [UInt8]?) async throws -> (HTTPResponse, [UInt8]) {
            if let first { return first }
            let answer = try await inner.send(request, body: body)
            first = answer
            return answer
        }
    }

    @Test func anAnswerToAnotherRequestIsRefused() async throws {
        try await TestServer.with { server in
            let token = try await registerAndSignIn(server)
            let replaying = ReplayingTransport(inner: PinnedTransport(trust: server.api.transport.trust, timeout: TestTimeouts.hangGuard))
            let sessions = InMemorySessionStore()
            try await sessions.save(SavedSession(email: "alice@example.com", token: token), server: "127.0.0.1:\(server.port)")
            let client = try ClientTests.client(server, sessions: sessions, transport: replaying)
            #expect(try await client.me().email == "alice@example.com")
            await #expect {
                _ = try await client.me()
            } throws: { error in
                guard let error = error as? ClientError, case .responseSignatureInvalid = error else { return false }
                return true
            }
        }
    }
}
