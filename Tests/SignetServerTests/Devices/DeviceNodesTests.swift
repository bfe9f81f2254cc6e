import Foundation
import HTTPTypes
import SignetAPI
import SignetCore
import SignetHTTP
import SignetServer
import SignetTestSupport
import Testing

/// Devices on two `signet serve` nodes sharing one real PostgreSQL: an App Attest counter is
/// accepted once across both, and a device revoked on one is refused by the other.
@Suite(.serialized) struct DeviceNodesTests {
    @Test func oneCounterAcrossNodesAndRevocationEverywhere() async throws {
        let fixture = try DeviceFixture()
        let (_, _, keys, nodeA, nodeB) = try await ServerNodesTests.twoNodes { folder in
            let root = try folder.write("test-root.pem", Array(try fixture.ca.root.serializeAsPEM().pemString.utf8))
            return ["--apple-attestation-roots", root, "--android-attestation-roots", root]
        }
        defer {
            nodeA.process.stop()
            nodeB.process.stop()
        }
        let enrol = try await ServerNodesTests.signed(
            .post, "/v1/admin/apps",
            json: AdminAPI.Enrolment(name: "app", publicKey: Base64.encode(keys.app.publicKey.spkiDER), attestation: DeviceFixture.settings(required: true)),
            signer: keys.adminSigner)
        #expect(try await ServerNodesTests.send(enrol, to: nodeA).status == 201)

        // Enrolled through A: a challenge from A, the enrolment to B.
        let device = TestAppAttestDevice(ca: fixture.ca)
        let challenge = try await ServerNodesTests.send(
            try await ServerNodesTests.signed(.post, "/v1/devices/challenges", signer: keys.appSigner), to: nodeA).decode(DeviceAPI.Challenge.self)
        let body = try await DeviceAttackTests.enrolment(device, challenge: challenge)
        let answer = try await ServerNodesTests.send(try await ServerNodesTests.signed(.post, "/v1/devices", json: body, signer: keys.appSigner), to: nodeB)
        #expect(answer.status == 201, "\(answer.text)")
        let enrolled = try answer.decode(DeviceAPI.Device.self)
        let signer = HTTPMessageSigner(key: .custom(AssertionKey(device: device, name: DeviceAPI.appAttestAlgorithm)), keyID: enrolled.keyId)

        // One counter, two requests (fresh nonces), one to each node at once: exactly one passes.
        for round in 0..<3 {
            let first = try await ServerNodesTests.signed(.get, "/v1/trust", signer: signer)
            device.repeatCounterOnce()
            let second = try await ServerNodesTests.signed(.get, "/v1/trust", signer: signer)
            async let toA = ServerNodesTests.send(first, to: nodeA)
            async let toB = ServerNodesTests.send(second, to: nodeB)
            let statuses = [try await toA.status, try await toB.status].sorted()
            #expect(statuses == [200, 401], "round \(round): \(statuses)")
        }
        // The next counter passes on either.
        #expect(try await ServerNodesTests.send(try await ServerNodesTests.signed(.get, "/v1/trust", signer: signer), to: nodeB).status == 200)

        // Revoked on A: B refuses it (at once by its counter, with 403 once its cache has aged).
        let revoke = try await ServerNodesTests.signed(.delete, "/v1/admin/devices/\(enrolled.id)", signer: keys.adminSigner)
        #expect(try await ServerNodesTests.send(revoke, to: nodeA).status == 204)
        let atOnce = try await ServerNodesTests.send(try await ServerNodesTests.signed(.get, "/v1/trust", signer: signer), to: nodeB)
        #expect([401, 403].contains(atOnce.status), "\(atOnce.text)")
        try await Task.sleep(for: .milliseconds(1100))
        let later = try await ServerNodesTests.send(try await ServerNodesTests.signed(.get, "/v1/trust", signer: signer), to: nodeB)
        #expect(later.status == 403 && later.problemCode == "server.revoked", "\(later.text)")
    }
}
