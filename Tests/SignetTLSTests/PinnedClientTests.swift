import Foundation
import HTTPTypes
import SignetCore
import SignetTLS
import SignetTestSupport
import SignetX509
import SignetX509TestSupport
import Testing
import X509

/// The pin-enforcing client against a real SwiftNIO SSL server on loopback: every attack
/// refused with its reason, the legitimate cases accepted.
@Suite("SignetTLS: pinned client against a real TLS server")
struct PinnedClientTests {
    /// A test CA (root → intermediate), a server leaf for localhost/127.0.0.1, and the server.
    struct Setup {
        let pki: TestPKI
        let leaf: Certificate
        let server: TLSTestServer

        static func start(names: String = "DNS:localhost,IP:127.0.0.1", leafNow: Date = Date(), leafDays: Int = 30, pkiNow: Date = Date()) async throws -> Setup {
            let pki = try await TestPKI.make(now: pkiNow)
            let (leaf, signer) = try await pki.leaf(names, days: leafDays, now: leafNow)
            let server = try await TLSTestServer.start(chain: [leaf, pki.intermediate], key: signer.key)
            return Setup(pki: pki, leaf: leaf, server: server)
        }

        var request: HTTPRequest { HTTPRequest(method: .get, scheme: "https", authority: "127.0.0.1:\(server.port)", path: "/") }

        func policy(pins: [KeyFingerprint]?, roots: [Certificate]? = nil, reportOnly: Bool = false, expires: Date? = nil,
                    reporter: (any PinFailureReporter)? = nil) throws -> TLSTrustPolicy {
            let set = try pins.map { try PinSet(hosts: [HostPins(host: "127.0.0.1", pins: $0, expires: expires, reportOnly: reportOnly)]) }
            return TLSTrustPolicy(mode: .validatedChain(.certificates(roots ?? [pki.root])), pins: set, reporter: reporter)
        }
    }

    static func randomPin() throws -> KeyFingerprint { try PrivateKey.generate(.p256).publicKey.fingerprint }

    /// A client trusting by `trust`, whose timeout is a hang guard (the server runs in this
    /// process, which a loaded suite may starve).
    /// The certificate check's reason for refusing the server `body` connects to (the client
    /// throws ``TLSError/untrusted(host:reason:)`` with it).
    static func refusal<R>(sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> R) async throws -> X509Error {
        let error = try await thrownAsync(TLSError.self, sourceLocation: sourceLocation, body)
        guard case .untrusted(_, let reason) = error else {
            Issue.record("the server was not refused by a check: \(error)", sourceLocation: sourceLocation)
            throw error
        }
        #expect(error.category == reason.category, sourceLocation: sourceLocation)
        return reason
    }

    static func client(trust: TLSTrustPolicy) -> PinnedHTTPSClient {
        PinnedHTTPSClient(trust: trust, timeout: .seconds(TestTimeouts.hangGuardSeconds))
    }

    @Test("the leaf's pin with a backup is accepted, and the body arrives")
    func validPin() async throws {
        let setup = try await Setup.start()
        defer { Task { await setup.server.stop() } }
        let client = Self.client(trust: try setup.policy(pins: [setup.leaf.publicKey.fingerprint, try Self.randomPin()]))
        let response = try await client.send(setup.request)
        #expect(response.head.status.code == 200)
        #expect(response.body == Array("hello".utf8))
    }

    @Test("a backup pin on the intermediate or the root is accepted (pins are checked on the validated chain)")
    func backupPin() async throws {
        let setup = try await Setup.start()
        defer { Task { await setup.server.stop() } }
        for pinned in [setup.pki.intermediate, setup.pki.root] {
            let client = Self.client(trust: try setup.policy(pins: [try Self.randomPin(), pinned.publicKey.fingerprint]))
            #expect(try await client.send(setup.request).body == Array("hello".utf8))
        }
    }

    @Test("wrong pins are refused, naming the presented and the expected pins; the reporter hears of it")
    func wrongPin() async throws {
        let setup = try await Setup.start()
        defer { Task { await setup.server.stop() } }
        let expected = [try Self.randomPin(), try Self.randomPin()]
        let reporter = CollectingReporter()
        let client = Self.client(trust: try setup.policy(pins: expected, reporter: reporter))
        let error = try await Self.refusal { try await client.send(setup.request) }
        expectError(error, is: "pinMismatch", mentioning: [
            "127.0.0.1", setup.leaf.publicKey.fingerprint.description, expected[0].description, expected[1].description,
        ])
        #expect(error.category == .checkFailed)
        let reports = await reporter.reports
        #expect(reports.count == 1)
        #expect(reports.first?.enforced == true)
    }

    @Test("the right pin on a certificate for another name is refused: hostname verification is never skipped")
    func wrongHostname() async throws {
        let setup = try await Setup.start(names: "DNS:other.example")
        defer { Task { await setup.server.stop() } }
        let client = Self.client(trust: try setup.policy(pins: [setup.leaf.publicKey.fingerprint, try Self.randomPin()]))
        let error = try await Self.refusal { try await client.send(setup.request) }
        expectError(error, is: "hostnameMismatch", mentioning: ["127.0.0.1", "DNS:other.example"])
    }

    @Test("the right pin on an expired leaf is refused")
    func expiredLeaf() async throws {
        let past = Date().addingTimeInterval(-10 * 86_400)
        let setup = try await Setup.start(leafNow: past, leafDays: 2, pkiNow: past)
        defer { Task { await setup.server.stop() } }
        let client = Self.client(trust: try setup.policy(pins: [setup.leaf.publicKey.fingerprint, try Self.randomPin()]))
        let error = try await Self.refusal { try await client.send(setup.request) }
        expectError(error, is: "chainInvalid", mentioning: ["localhost"])
    }

    @Test("the right intermediate pin on a chain to an untrusted root is refused: the pin never replaces validation")
    func untrustedChain() async throws {
        let setup = try await Setup.start()
        defer { Task { await setup.server.stop() } }
        let otherRoot = try await TestPKI.make().root
        let client = Self.client(trust: try setup.policy(
            pins: [setup.pki.intermediate.publicKey.fingerprint, setup.leaf.publicKey.fingerprint], roots: [otherRoot]))
        let error = try await Self.refusal { try await client.send(setup.request) }
        expectError(error, is: "chainInvalid", mentioning: ["no path to a trusted root"])
    }

    @Test("a pinned self-signed server is accepted only in that mode, and its hostname is still checked")
    func pinnedSelfSigned() async throws {
        let signer = try SoftwareSigner(key: try PrivateKey.generate(.p256))
        let certificate = try await CertificateFactory.selfSigned(
            signer: signer, subject: try SubjectParsing.distinguishedName("CN=localhost"),
            alternativeNames: try SubjectParsing.alternativeNames("DNS:localhost,IP:127.0.0.1"), days: 5)
        let server = try await TLSTestServer.start(chain: [certificate], key: signer.key)
        defer { Task { await server.stop() } }
        let pins = try PinSet(hosts: [
            HostPins(host: "127.0.0.1", pins: [certificate.publicKey.fingerprint, try Self.randomPin()]),
            HostPins(host: "localhost", pins: [certificate.publicKey.fingerprint, try Self.randomPin()]),
        ])
        let request = HTTPRequest(method: .get, scheme: "https", authority: "127.0.0.1:\(server.port)", path: "/")
        // In chain mode the pin does not make a self-signed certificate trusted.
        let chainMode = Self.client(trust: TLSTrustPolicy(mode: .validatedChain(.certificates([])), pins: pins))
        let refused = try await Self.refusal { try await chainMode.send(request) }
        expectError(refused, is: "chainInvalid", mentioning: ["self-signed"])
        // In pinned-self-signed mode it is.
        let pinnedMode = Self.client(trust: TLSTrustPolicy(mode: .pinnedSelfSigned, pins: pins))
        #expect(try await pinnedMode.send(request).body == Array("hello".utf8))
        // With an unpinned key it is not.
        let otherPins = try PinSet(hosts: [HostPins(host: "127.0.0.1", pins: [try Self.randomPin(), try Self.randomPin()])])
        let wrongPin = try await Self.refusal {
            try await Self.client(trust: TLSTrustPolicy(mode: .pinnedSelfSigned, pins: otherPins)).send(request)
        }
        expectError(wrongPin, is: "pinMismatch", mentioning: [certificate.publicKey.fingerprint.description])
    }

    @Test("a pinned self-signed certificate for another name is refused even in that mode")
    func pinnedSelfSignedWrongName() async throws {
        let signer = try SoftwareSigner(key: try PrivateKey.generate(.p256))
        let certificate = try await CertificateFactory.selfSigned(
            signer: signer, subject: try SubjectParsing.distinguishedName("CN=elsewhere"),
            alternativeNames: try SubjectParsing.alternativeNames("DNS:elsewhere.example"), days: 5)
        let server = try await TLSTestServer.start(chain: [certificate], key: signer.key)
        defer { Task { await server.stop() } }
        let pins = try PinSet(hosts: [HostPins(host: "127.0.0.1", pins: [certificate.publicKey.fingerprint, try Self.randomPin()])])
        let request = HTTPRequest(method: .get, scheme: "https", authority: "127.0.0.1:\(server.port)", path: "/")
        let error = try await Self.refusal {
            try await Self.client(trust: TLSTrustPolicy(mode: .pinnedSelfSigned, pins: pins)).send(request)
        }
        expectError(error, is: "hostnameMismatch", mentioning: ["127.0.0.1"])
    }

    @Test("report-only: a pin failure connects, and the report is emitted")
    func reportOnly() async throws {
        let setup = try await Setup.start()
        defer { Task { await setup.server.stop() } }
        let reporter = CollectingReporter()
        let client = Self.client(trust: try setup.policy(
            pins: [try Self.randomPin(), try Self.randomPin()], reportOnly: true, reporter: reporter))
        #expect(try await client.send(setup.request).body == Array("hello".utf8))
        let reports = await reporter.reports
        #expect(reports.count == 1)
        #expect(reports.first?.enforced == false)
        #expect(reports.first?.hostname == "127.0.0.1")
        #expect(reports.first?.port == setup.server.port)
    }

    @Test("an expired pin set is not enforced, but the chain still is")
    func expiredPinSet() async throws {
        let setup = try await Setup.start()
        defer { Task { await setup.server.stop() } }
        let yesterday = Date().addingTimeInterval(-86_400)
        let expired = Self.client(trust: try setup.policy(pins: [try Self.randomPin(), try Self.randomPin()], expires: yesterday))
        #expect(try await expired.send(setup.request).body == Array("hello".utf8))
        let otherRoot = try await TestPKI.make().root
        let untrusted = Self.client(trust: try setup.policy(
            pins: [try Self.randomPin(), try Self.randomPin()], roots: [otherRoot], expires: yesterday))
        let error = try await Self.refusal { try await untrusted.send(setup.request) }
        expectError(error, is: "chainInvalid", mentioning: [])
    }

    @Test("the probe reads every certificate the server presents, leaf first, without trusting any")
    func probe() async throws {
        let setup = try await Setup.start()
        defer { Task { await setup.server.stop() } }
        let presented = try await TLSProbe.presentedCertificates(
            host: "127.0.0.1", port: setup.server.port, timeout: .seconds(TestTimeouts.hangGuardSeconds))
        #expect(presented.map(\.publicKey.fingerprint) == [setup.leaf.publicKey.fingerprint, setup.pki.intermediate.publicKey.fingerprint])
    }

    @Test("a closed port is a connection failure (environment), not a verification failure")
    func closedPort() async throws {
        let setup = try await Setup.start()
        let port = setup.server.port
        await setup.server.stop()
        let client = Self.client(trust: try setup.policy(pins: nil))
        let error = try await thrownAsync(TLSError.self) {
            try await client.send(HTTPRequest(method: .get, scheme: "https", authority: "127.0.0.1:\(port)", path: "/"))
        }
        expectError(error, is: "connectionFailed", mentioning: ["127.0.0.1:\(port)"])
        #expect(error.category == .environment)
    }
}
