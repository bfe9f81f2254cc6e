import Foundation
import HTTPTypes
import SignetAPI
import SignetAttestation
import SignetAttestationTestSupport
import SignetClient
import SignetCore
import SignetHTTP
import SignetServer
import SignetTLS
import SignetTestSupport
import Testing

/// Attacks on device enrolment: hostile bodies, challenges reused, raced, expired or another
/// app's, and a flood of challenges — each refused with its status, nothing stored, health
/// answering meanwhile.
@Suite("devices enrolled by attestation: attacks", .serialized)
struct DeviceAttackTests {
    /// A fresh challenge for the app `signer` signs for.
    static func challenge(_ server: TestServer, signer: HTTPMessageSigner? = nil) async throws -> DeviceAPI.Challenge {
        let answer = try await server.api.send(.post, "/v1/devices/challenges", signer: signer ?? server.appSigner)
        #expect(answer.status == 201, "\(answer.text)")
        #expect(answer.head.headerFields[.cacheControl] == "no-store")
        return try answer.decode(DeviceAPI.Challenge.self)
    }

    /// The enrolment of `device` over `challenge`.
    static func enrolment(_ device: any DeviceIdentity, challenge: DeviceAPI.Challenge) async throws -> DeviceAPI.Enrolment {
        switch try await device.attest(challenge: try #require(Base64.decode(challenge.challenge))) {
        case .apple(let keyID, let attestation):
            return DeviceAPI.Enrolment(platform: .apple, challenge: challenge.challenge, appleKeyId: Base64.encode(keyID), attestation: Base64.encode(attestation))
        case .android(let chain):
            return DeviceAPI.Enrolment(platform: .android, challenge: challenge.challenge, chain: chain.map { Base64.encode($0) })
        }
    }

    static func deviceRows(_ server: TestServer) async throws -> Int {
        try await server.store.database.withConnection { sql in try await sql.raw("SELECT id FROM devices").all().count }
    }

    @Test("hostile enrolment bodies: too large, bad base64, a short challenge, too many certificates, wrong fields or media type")
    func hostileBodies() async throws {
        let fixture = try DeviceFixture()
        try await DeviceStoryTests.withServer(fixture: fixture) { server in
            let (_, health) = try await whileHealthIsPolled(server) {
                let challenge = try await Self.challenge(server)
                let good = try await Self.enrolment(TestAndroidDevice(ca: fixture.ca), challenge: challenge)
                let huge = try await server.api.sendRaw(.post, "/v1/devices", body: [UInt8](repeating: 0x20, count: 65 << 10), signer: server.appSigner)
                #expect(huge.status == 413 && huge.problemCode == "server.payloadTooLarge")
                var cases: [(DeviceAPI.Enrolment, String)] = []
                var body = good
                body.challenge = "not base64!"
                cases.append((body, "challenge:"))
                body = good
                body.challenge = Base64.encode([UInt8](repeating: 1, count: 31))
                cases.append((body, "challenge:"))
                body = good
                body.chain = Array(repeating: good.chain![0], count: 11)
                cases.append((body, "chain:"))
                body = good
                body.chain = []
                cases.append((body, "chain:"))
                body = good
                body.chain![1] = Base64.encode(Array("not a certificate".utf8))
                cases.append((body, "chain[1]:"))
                body = good
                body.chain![0] = Base64.encode([UInt8](repeating: 0x30, count: 9000))
                cases.append((body, "chain[0]:"))
                body = good
                body.attestation = Base64.encode([1, 2, 3])
                cases.append((body, "attestation:"))
                body = good
                body.platform = .apple
                cases.append((body, "chain:"))
                for (enrolment, field) in cases {
                    let answer = try await server.api.send(.post, "/v1/devices", json: enrolment, signer: server.appSigner)
                    #expect(answer.status == 422 && answer.problemCode == "server.unprocessable", "\(field) \(answer.text)")
                    #expect((try? answer.decode(ProblemDocument.self))?.detail.hasPrefix(field) == true, "\(field) \(answer.text)")
                }
                let text = try await server.api.sendRaw(.post, "/v1/devices", body: Array("{}".utf8), contentType: "text/plain", signer: server.appSigner)
                #expect(text.status == 415)
                let shape = try await server.api.sendRaw(.post, "/v1/devices", body: Array(#"{"platform":"windows","challenge":"AA=="}"#.utf8), signer: server.appSigner)
                #expect(shape.status == 422, "\(shape.text)")
                // A field error does not burn the challenge: the good body still enrols with it.
                let enrolled = try await server.api.send(.post, "/v1/devices", json: good, signer: server.appSigner)
                #expect(enrolled.status == 201, "\(enrolled.text)")
            }
            expectHealthy(health)
            #expect(try await Self.deviceRows(server) == 1)
        }
    }

    @Test("a challenge serves one verification: reused, raced, burnt by a failure, or another app's, it is refused")
    func challengeReuse() async throws {
        let fixture = try DeviceFixture()
        try await DeviceStoryTests.withServer(fixture: fixture) { server in
            let challenge = try await Self.challenge(server)
            let first = try await Self.enrolment(TestAndroidDevice(ca: fixture.ca), challenge: challenge)
            #expect(try await server.api.send(.post, "/v1/devices", json: first, signer: server.appSigner).status == 201)
            let again = try await Self.enrolment(TestAndroidDevice(ca: fixture.ca), challenge: challenge)
            let reused = try await server.api.send(.post, "/v1/devices", json: again, signer: server.appSigner)
            #expect(reused.status == 403 && reused.problemCode == "server.challengeExpired", "\(reused.text)")

            // Two enrolments racing on one challenge: exactly one is enrolled.
            let raced = try await Self.challenge(server)
            let bodies = [try await Self.enrolment(TestAndroidDevice(ca: fixture.ca), challenge: raced),
                          try await Self.enrolment(TestAppAttestDevice(ca: fixture.ca), challenge: raced)]
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for body in bodies { group.addTask { try await server.api.send(.post, "/v1/devices", json: body, signer: server.appSigner).status } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.sorted() == [201, 403], "\(statuses)")

            // A refused attestation burns its challenge.
            let burnt = try await Self.challenge(server)
            let wrong = try await Self.enrolment(TestAppAttestDevice(ca: fixture.ca, appID: "ZZZZZ99999.com.other.app"), challenge: burnt)
            let refused = try await server.api.send(.post, "/v1/devices", json: wrong, signer: server.appSigner)
            #expect(refused.status == 403 && refused.problemCode == "server.attestationRefused", "\(refused.text)")
            let retried = try await server.api.send(
                .post, "/v1/devices", json: try await Self.enrolment(TestAppAttestDevice(ca: fixture.ca), challenge: burnt), signer: server.appSigner)
            #expect(retried.problemCode == "server.challengeExpired", "\(retried.text)")

            // Another app's challenge.
            let other = try SoftwareSigner(key: PrivateKey.generate(.p256))
            _ = try await server.adminClient.enrol(
                AdminAPI.Enrolment(name: "other-app", publicKey: Base64.encode(other.publicKey.spkiDER), attestation: DeviceFixture.settings(required: false)), role: .app)
            let foreign = try await Self.challenge(server, signer: HTTPMessageSigner(key: .signer(other)))
            let stolen = try await server.api.send(
                .post, "/v1/devices", json: try await Self.enrolment(TestAndroidDevice(ca: fixture.ca), challenge: foreign), signer: server.appSigner)
            #expect(stolen.problemCode == "server.challengeExpired", "\(stolen.text)")
            #expect(try await Self.deviceRows(server) == 2)
        }
    }

    @Test("an expired challenge is refused, and the sweep removes it")
    func expiredChallenge() async throws {
        let fixture = try DeviceFixture()
        try await DeviceStoryTests.withServer(fixture: fixture, configure: { $0.deviceChallengeLifetime = .seconds(1) }) { server in
            let challenge = try await Self.challenge(server)
            let body = try await Self.enrolment(TestAndroidDevice(ca: fixture.ca), challenge: challenge)
            try await Task.sleep(for: .milliseconds(2100))
            let late = try await server.api.send(.post, "/v1/devices", json: body, signer: server.appSigner)
            #expect(late.status == 403 && late.problemCode == "server.challengeExpired", "\(late.text)")
            _ = try await server.store.purgeExpired(rateLimitWindow: 900)
            let rows = try await server.store.database.withConnection { sql in try await sql.raw("SELECT app FROM device_challenges").all().count }
            #expect(rows == 0)
        }
    }

    @Test("a flood of challenges from one address gets 429 with Retry-After past its budget; rows stay within it; health answers")
    func challengeFlood() async throws {
        let fixture = try DeviceFixture()
        try await DeviceStoryTests.withServer(fixture: fixture, configure: { $0.deviceChallengesPerAddress = 30 }) { server in
            let (statuses, health) = try await whileHealthIsPolled(server) {
                try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                    var results: [(Int, String?)] = []
                    for index in 0..<120 {
                        if index >= 8, let result = try await group.next() { results.append(result) }
                        group.addTask {
                            let answer = try await server.api.send(.post, "/v1/devices/challenges", signer: server.appSigner)
                            return (answer.status, answer.head.headerFields[.retryAfter])
                        }
                    }
                    for try await result in group { results.append(result) }
                    return results
                }
            }
            expectHealthy(health)
            #expect(statuses.filter { $0.0 == 201 }.count == 30)
            let limited = statuses.filter { $0.0 == 429 }
            #expect(limited.count == 90)
            #expect(limited.allSatisfy { $0.1.flatMap(Int.init).map { $0 > 0 && $0 <= 900 } == true })
            let rows = try await server.store.database.withConnection { sql in try await sql.raw("SELECT app FROM device_challenges").all().count }
            #expect(rows == 30)
        }
    }

    @Test("many addresses spending the app's challenges slow each address to two; a clean address is still answered (attack round)")
    func challengeAlarm() async throws {
        let fixture = try DeviceFixture()
        let configure = { (configuration: inout ServerConfiguration) in
            configuration.deviceChallengesPerApp = 40
            configuration.deviceChallengesPerAddress = 30
            configuration.trustedProxies = [try! IPAddressRange("127.0.0.0/8")]
        }
        try await DeviceStoryTests.withServer(fixture: fixture, configure: configure) { server in
            func ask(from address: String) async throws -> HTTPSResponse {
                try await server.api.send(.post, "/v1/devices/challenges", signer: server.appSigner, headers: [.init("X-Forwarded-For")!: address])
            }
            // 40 from two addresses: the app's tally reaches its mark, nobody is refused yet.
            for index in 0..<40 { #expect(try await ask(from: "2001:db8:\(index % 2)::1").status == 201) }
            // Now each address gets two: the busy ones are over it, a clean one gets its two.
            let busy = try await ask(from: "2001:db8:0::1")
            #expect(busy.status == 429 && busy.problemCode == "server.rateLimited", "\(busy.text)")
            #expect(try await ask(from: "2001:db8:7::1").status == 201)
            #expect(try await ask(from: "2001:db8:7::2").status == 201, "the same /64")
            #expect(try await ask(from: "2001:db8:7::3").status == 429)
            // And what it got still enrols a device.
            let clean = try await ask(from: "2001:db8:8::1").decode(DeviceAPI.Challenge.self)
            let enrolled = try await server.api.send(
                .post, "/v1/devices", json: try await Self.enrolment(TestAndroidDevice(ca: fixture.ca), challenge: clean), signer: server.appSigner,
                headers: [.init("X-Forwarded-For")!: "2001:db8:8::1"])
            #expect(enrolled.status == 201, "\(enrolled.text)")
        }
    }

    @Test("an app with no platform identity is given no challenge (403)")
    func noIdentityNoChallenge() async throws {
        try await TestServer.with { server in
            let answer = try await server.api.send(.post, "/v1/devices/challenges", signer: server.appSigner)
            #expect(answer.status == 403 && answer.problemCode == "server.forbidden", "\(answer.text)")
            #expect((try? answer.decode(ProblemDocument.self))?.detail.contains("takes no devices") == true)
        }
    }

    @Test("a key enrolled twice is a conflict (409); so is an app's own key")
    func keyEnrolledTwice() async throws {
        let fixture = try DeviceFixture()
        try await DeviceStoryTests.withServer(fixture: fixture) { server in
            let device = TestAndroidDevice(ca: fixture.ca)
            let client = try DeviceStoryTests.client(server, device: device)
            try await client.enrolDevice()
            try await device.setEnrolledKeyID(nil)
            let error = try await thrownAsync(ClientError.self) { try await client.enrolDevice() }
            guard case .refused(409, "server.conflict", _) = error else { Issue.record("\(error)"); return }
            #expect(try await Self.deviceRows(server) == 1)
        }
    }
}
