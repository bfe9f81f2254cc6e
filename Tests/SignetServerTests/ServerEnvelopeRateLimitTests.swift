import Foundation
import HTTPTypes
import SignetCore
import SignetHTTP
import SignetServer
import SignetTLS
import SignetTestSupport
import Testing

/// The envelope's budgets on expensive and abusable work (issue 28) against a live server over
/// TLS: lockouts that cannot be aimed at the owner, forwarded fields that count only from a
/// trusted proxy, registrations limited per address, password hashing bounded by a queue that
/// answers 503 when full, and client mistakes that stay 4xx.
///
/// Clients are told apart by the address a trusted proxy names: the tests make loopback the
/// proxy and put each client's address in `X-Forwarded-For` (or `Forwarded`). Those addresses are
/// header values only; nothing is sent to them. Filter with `Envelope`.
@Suite("Envelope: rate limits", .serialized)
struct ServerEnvelopeRateLimitTests {
    static let forwardedFor = HTTPField.Name("X-Forwarded-For")!
    static let forwarded = HTTPField.Name("Forwarded")!
    static let password = "correct horse battery"

    /// A sign-in to `email` with `password`, "from" `address` when given (else from the peer, 127.0.0.1).
    static func signIn(
        _ server: TestServer, _ email: String, _ password: String, from address: String?, headers: HTTPFields = [:]
    ) async throws -> HTTPSResponse {
        var fields = headers
        if let address { fields[forwardedFor] = address }
        return try await server.api.send(
            .post, "/v1/sessions", json: UserAPI.SignIn(email: email, password: password), signer: server.appSigner, headers: fields)
    }

    /// A registration of `email`, "from" `address` when given.
    static func register(_ server: TestServer, _ email: String, from address: String?) async throws -> HTTPSResponse {
        var fields = HTTPFields()
        if let address { fields[forwardedFor] = address }
        return try await server.api.send(
            .post, "/v1/users", json: UserAPI.Registration(email: email, password: password, displayName: "R"), signer: server.appSigner,
            headers: fields)
    }

    /// A 429 with a `Retry-After` of a positive number of seconds.
    static func expectRateLimited(_ response: HTTPSResponse, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == 429, "\(what): \(response.status) \(response.text)", sourceLocation: sourceLocation)
        #expect(response.problemCode == "server.rateLimited", "\(what)", sourceLocation: sourceLocation)
        let retryAfter = response.head.headerFields[.retryAfter]
        #expect((retryAfter.flatMap { Int($0) } ?? 0) > 0, "\(what): Retry-After \(retryAfter ?? "missing")", sourceLocation: sourceLocation)
    }

    @Test func failuresFromOneAddressDoNotLockTheOwnerOut() async throws {
        let loopback = try IPAddressRange("127.0.0.0/8")
        try await TestServer.with(configure: { $0.trustedProxies = [loopback] }) { server in
            let owner = "owner@example.com"
            #expect(try await Self.register(server, owner, from: "10.0.0.7").status == 201)
            // Anyone with the app can try the owner's account: five failures from one address…
            for attempt in 1...5 {
                let wrong = try await Self.signIn(server, owner, "wrong password \(attempt)", from: "10.0.0.66")
                #expect(wrong.status == 401, "attempt \(attempt): \(wrong.text)")
                #expect(wrong.problemCode == "server.invalidCredentials")
            }
            // …and that address waits, whatever the password it tries next…
            for password in ["wrong password 6", Self.password] {
                Self.expectRateLimited(try await Self.signIn(server, owner, password, from: "10.0.0.66"), "a sixth try from 10.0.0.66")
            }
            // …but the owner, from their own address, with the right password, is let in.
            let owned = try await Self.signIn(server, owner, Self.password, from: "10.0.0.7")
            #expect(owned.status == 201, "\(owned.text)")
        }
    }

    @Test func distributedGuessingTightensEachAddressButNotTheOwner() async throws {
        let loopback = try IPAddressRange("127.0.0.0/8")
        try await TestServer.with(configure: { $0.trustedProxies = [loopback] }) { server in
            let owner = "owner@example.com"
            #expect(try await Self.register(server, owner, from: "10.0.0.7").status == 201)
            // 25 addresses, one wrong password each: past the alarm (20 failures of the account).
            for index in 1...25 {
                let wrong = try await Self.signIn(server, owner, "guess number \(index)", from: "10.1.0.\(index)")
                #expect(wrong.status == 401, "guess \(index): \(wrong.text)")
            }
            // Now each address gets two failures at the account: a second guess from any of them
            // is heard, a third waits.
            for address in ["10.1.0.1", "10.1.0.25"] {
                let second = try await Self.signIn(server, owner, "a second guess", from: address)
                #expect(second.status == 401, "a second guess from \(address): \(second.text)")
                Self.expectRateLimited(try await Self.signIn(server, owner, "a third guess", from: address), "a third guess from \(address)")
            }
            // The owner, from an address that has not failed, is not refused — not even after a typo.
            let typo = try await Self.signIn(server, owner, "correct horse batterx", from: "10.0.0.7")
            #expect(typo.status == 401, "\(typo.text)")
            let owned = try await Self.signIn(server, owner, Self.password, from: "10.0.0.7")
            #expect(owned.status == 201, "\(owned.text)")
            // An IPv6 guesser counts by its /64: another address of the same block is the same client.
            for host in ["2001:db8:1:2::1", "2001:db8:1:2::2"] {
                let wrong = try await Self.signIn(server, owner, "ipv6 guess \(host)", from: host)
                #expect(wrong.status == 401, "\(host): \(wrong.text)")
            }
            Self.expectRateLimited(try await Self.signIn(server, owner, "ipv6 guess 3", from: "2001:db8:1:2::ffff"), "a third guess from the same /64")
        }
    }

    @Test func forwardedFieldsFromAnUntrustedPeerAreIgnored() async throws {
        // No trusted proxy: every request below comes from 127.0.0.1, whatever its fields claim.
        try await TestServer.with(configure: { $0.failedSignInsPerAddress = 3 }) { server in
            for index in 1...3 {
                let wrong = try await Self.signIn(
                    server, "user\(index)@example.com", "wrong password!", from: "10.2.0.\(index)", headers: [Self.forwarded: "for=10.2.1.\(index)"])
                #expect(wrong.status == 401, "\(wrong.text)")
            }
            let limited = try await Self.signIn(
                server, "fresh@example.com", "wrong password!", from: "10.2.0.99", headers: [Self.forwarded: "for=10.2.1.99"])
            Self.expectRateLimited(limited, "a fourth failure from 127.0.0.1 under a new forwarded address")
        }
    }

    @Test func aTrustedProxyNamesTheClientByTheRightMostHopItDidNotWrite() async throws {
        let loopback = try IPAddressRange("127.0.0.0/8")
        try await TestServer.with(configure: {
            $0.trustedProxies = [loopback]
            $0.failedSignInsPerAddress = 2
        }) { server in
            // The client writes what it likes on the left; the proxy appends the address it saw.
            for index in 1...2 {
                let wrong = try await Self.signIn(server, "a\(index)@example.com", "wrong password!", from: "198.51.100.\(index), 10.0.0.66")
                #expect(wrong.status == 401, "\(wrong.text)")
            }
            Self.expectRateLimited(
                try await Self.signIn(server, "a3@example.com", "wrong password!", from: "198.51.100.3, 10.0.0.66"),
                "10.0.0.66 under a new client-written hop")
            // Another client behind the same proxy is another address.
            #expect(try await Self.signIn(server, "a4@example.com", "wrong password!", from: "10.0.0.67").status == 401)
            // RFC 7239 Forwarded, when present, names the client rather than X-Forwarded-For.
            Self.expectRateLimited(
                try await Self.signIn(server, "a5@example.com", "wrong password!", from: "10.0.0.68", headers: [Self.forwarded: "for=10.0.0.66"]),
                "10.0.0.66 named by Forwarded")
        }
    }

    @Test func registrationsAreLimitedPerAddressAndATakenAddressIsAConflict() async throws {
        let loopback = try IPAddressRange("127.0.0.0/8")
        try await TestServer.with(configure: {
            $0.trustedProxies = [loopback]
            $0.registrationsPerAddress = 3
        }) { server in
            for index in 1...3 {
                let registered = try await Self.register(server, "r\(index)@example.com", from: "10.3.0.1")
                #expect(registered.status == 201, "\(registered.text)")
            }
            Self.expectRateLimited(try await Self.register(server, "r4@example.com", from: "10.3.0.1"), "a fourth registration from 10.3.0.1")
            // From elsewhere: a taken address is a conflict, never a second account.
            let taken = try await Self.register(server, "r1@example.com", from: "10.3.0.2")
            #expect(taken.status == 409, "\(taken.text)")
            #expect(taken.problemCode == "server.conflict")
            #expect(try await Self.register(server, "r4@example.com", from: "10.3.0.2").status == 201)
            #expect(try await server.store.users.all().count == 4)
        }
    }

    /// What one registration of a flood got.
    struct Answer: Sendable {
        var status: Int
        var retryAfter: Int?
        var code: String?
    }

    @Test func aRegistrationFloodIsQueuedThenRefusedWith503() async throws {
        let loopback = try IPAddressRange("127.0.0.0/8")
        try await TestServer.with(configure: {
            $0.trustedProxies = [loopback]
            $0.limits.passwordWorkers = 1
            $0.limits.passwordQueue = 1
            // A real cost (16 MiB per hash), so that the work queues up.
            $0.passwordHasher = PasswordHasher(algorithm: .scrypt(logN: 14, r: 8, p: 1))
        }) { server in
            let (answers, health) = try await whileHealthIsPolled(server) { () async throws -> [Answer] in
                var answers: [Answer] = []
                // Twelve at once, each from its own address; again (a few rounds at most) if a
                // round happened not to overlap enough to fill the queue.
                for round in 0..<5 where !answers.contains(where: { $0.status == 503 }) {
                    let burst = try await withThrowingTaskGroup(of: Answer.self) { group in
                        for index in 1...12 {
                            group.addTask {
                                let response = try await Self.register(server, "flood-\(round)-\(index)@example.com", from: "10.4.\(round).\(index)")
                                return Answer(
                                    status: response.status, retryAfter: response.head.headerFields[.retryAfter].flatMap { Int($0) },
                                    code: response.problemCode)
                            }
                        }
                        return try await group.reduce(into: [Answer]()) { $0.append($1) }
                    }
                    answers += burst
                }
                return answers
            }
            expectHealthy(health)
            #expect(answers.allSatisfy { [201, 503].contains($0.status) }, "\(answers.map(\.status))")
            let refused = answers.filter { $0.status == 503 }
            #expect(!refused.isEmpty, "registrations at once never filled a password queue of one: \(answers.map(\.status))")
            for answer in refused {
                #expect(answer.code == "server.overloaded")
                #expect((answer.retryAfter ?? 0) > 0, "a 503 without a Retry-After")
            }
            // Every acknowledged registration is stored, and no refused one.
            #expect(try await server.store.users.all().count == answers.filter { $0.status == 201 }.count)
        }
    }

    @Test func anEmptyPasswordIsAWrongPasswordNotAServerFailure() async throws {
        try await TestServer.with { server in
            _ = try await registerAndSignIn(server)
            for email in ["alice@example.com", "nobody@example.com"] {
                let empty = try await Self.signIn(server, email, "", from: nil)
                #expect(empty.status == 401, "\(email): \(empty.status) \(empty.text)")
                #expect(empty.problemCode == "server.invalidCredentials", "\(email)")
            }
        }
    }

    /// Someone who knows the password (an attacker's own account, say) cannot make the server
    /// hash without end, nor pile up sessions: successful sign-ins are limited per account and
    /// the oldest sessions end past the cap.
    @Test func successfulSignInsAreLimitedPerAccountAndSessionsCapped() async throws {
        let loopback = try IPAddressRange("127.0.0.0/8")
        try await TestServer.with(configure: {
            $0.trustedProxies = [loopback]
            $0.signInsPerAccount = 4
            $0.maximumSessionsPerAccount = 2
        }) { server in
            let owner = "owner@example.com"
            #expect(try await Self.register(server, owner, from: "10.0.0.7").status == 201)
            var tokens: [String] = []
            for index in 1...4 {
                let session = try await Self.signIn(server, owner, Self.password, from: "10.3.0.\(index)")
                #expect(session.status == 201, "sign-in \(index): \(session.text)")
                tokens.append(try session.decode(UserAPI.Session.self).token)
            }
            // The fifth, from yet another address, waits: the account's budget is spent.
            Self.expectRateLimited(try await Self.signIn(server, owner, Self.password, from: "10.3.0.5"), "a fifth sign-in")
            // Two sessions live on, the newest among them (the others began in the same second,
            // so which of them stays is not asserted).
            var live: [Int] = []
            for (index, token) in tokens.enumerated() {
                let me = try await server.api.send(.get, "/v1/me", signer: server.appSigner, bearer: token)
                #expect([200, 401].contains(me.status), "session \(index + 1): \(me.status) \(me.text)")
                if me.status == 200 { live.append(index) }
            }
            #expect(live.count == 2 && live.contains(3), "live sessions: \(live)")
        }
    }
}
