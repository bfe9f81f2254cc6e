import Foundation
import SignetAPI
import SignetAttestationTestSupport
import SignetCore
import SignetServer
import SignetTestSupport
import Testing

/// The operator's side from a shell, against a real `signet serve`: test roots by flag (with
/// the warning), an app enrolled with its platform identities and the requirement, devices
/// listed and revoked, and the exit codes scripts rely on.
@Suite struct DeviceCLITests {
    @Test func appAttestationAndDevicesFromTheShell() async throws {
        let folder = try TemporaryFolder(prefix: "signet-device-cli")
        let fixture = try DeviceFixture()
        let keys = try ServerKeys.initialise(in: folder)
        let rootPath = try folder.write("test-root.pem", Array(try fixture.ca.root.serializeAsPEM().pemString.utf8))
        let server = try await ServeProcess.start(
            in: folder, extra: ["--apple-attestation-roots", rootPath, "--android-attestation-roots", rootPath, "--device-challenges-per-address", "5"])
        defer { _ = server.process.stop() }
        #expect(server.process.output.contains("roots other than Apple's and Google's"), "\(server.process.output)")
        let admin = server.adminArguments + ["--admin-key", keys.adminPath]
        func signet(_ arguments: [String]) async throws -> RunResult { try await SignetBinary.runAsync(arguments, in: folder.url) }

        // Refused before anything is sent (usage, exit 2), each naming its flag.
        let noPlatform = try await signet(["server", "app", "add", "mobile", "--key", keys.appPath, "--require-attestation"] + admin)
        #expect(noPlatform.status == 2 && noPlatform.stderr.contains("--apple-app-id or --android-package"), "\(noPlatform)")
        let badSigner = try await signet(["server", "app", "add", "mobile", "--key", keys.appPath, "--android-package", "com.example.app",
                                          "--android-signer", "zz"] + admin)
        #expect(badSigner.status == 2 && badSigner.stderr.contains("--android-signer"), "\(badSigner)")
        let badAppID = try await signet(["server", "app", "add", "mobile", "--key", keys.appPath, "--apple-app-id", "com.example.app"] + admin)
        #expect(badAppID.status == 2 && badAppID.stderr.contains("--apple-app-id"), "\(badAppID)")

        let added = try await signet([
            "server", "app", "add", "mobile", "--key", keys.appPath, "--apple-app-id", DeviceFixture.appID,
            "--android-package", SyntheticAndroidChain.packageName, "--android-signer", SyntheticAndroidChain.signerDigest, "--require-attestation",
        ] + admin)
        #expect(added.status == 0 && added.out.contains("\tattestation required (\(DeviceFixture.appID),com.example.app)"), "\(added)")
        let listed = try await signet(["server", "app", "list", "--json"] + admin)
        let apps = try JSONDecoder().decode([AdminAPI.Enrolled].self, from: Data(listed.out.utf8))
        #expect(apps.first?.attestation == DeviceFixture.settings(required: true).normalizedForTest)

        // A device enrols over the API, signed by the app key.
        let api = try server.api
        let challenge = try await api.send(.post, "/v1/devices/challenges", signer: keys.appSigner).decode(DeviceAPI.Challenge.self)
        let body = try await DeviceAttackTests.enrolment(TestAndroidDevice(ca: fixture.ca), challenge: challenge)
        let enrolled = try await api.send(.post, "/v1/devices", json: body, signer: keys.appSigner)
        #expect(enrolled.status == 201, "\(enrolled.text)")
        let device = try enrolled.decode(DeviceAPI.Device.self)

        let text = try await signet(["server", "device", "list", "--app", "mobile"] + admin)
        #expect(text.status == 0 && text.out.hasPrefix("\(device.id)\tmobile\tandroid\t\(device.keyId)\tcounter=0\t"), "\(text)")
        #expect(text.out.contains("com.example.app,tee,verified"), "\(text.out)")
        #expect(try await signet(["server", "device", "revoke", device.id] + admin).status == 0)
        let json = try await signet(["server", "device", "list", "--json"] + admin)
        let devices = try JSONDecoder().decode([DeviceAPI.Device].self, from: Data(json.out.utf8))
        #expect(devices.count == 1 && devices[0].revokedAt != nil, "\(json)")
        let unknown = try await signet(["server", "device", "revoke", "no-such-device"] + admin)
        #expect(unknown.status == 1 && unknown.stderr.contains("does not exist"), "\(unknown)")

        // The requirement turned off from the shell: the app key signs users up again.
        let refused = try await api.send(.post, "/v1/users", json: UserAPI.Registration(email: "jo@example.com", password: "correct horse battery", displayName: "Jo"),
                                         signer: keys.appSigner)
        #expect(refused.status == 403 && refused.problemCode == "server.attestationRequired", "\(refused.text)")
        let off = try await signet(["server", "app", "attestation", "mobile", "--apple-app-id", DeviceFixture.appID] + admin)
        #expect(off.status == 0 && off.out.contains("attestation optional"), "\(off)")
        let registered = try await api.send(.post, "/v1/users", json: UserAPI.Registration(email: "jo@example.com", password: "correct horse battery", displayName: "Jo"),
                                            signer: keys.appSigner)
        #expect(registered.status == 201, "\(registered.text)")
        let missing = try await signet(["server", "app", "attestation", "nope", "--apple-app-id", DeviceFixture.appID] + admin)
        #expect(missing.status == 1 && missing.stderr.contains("does not exist"), "\(missing)")
    }

    @Test func serveRefusesUnreadableAttestationFiles() async throws {
        let folder = try TemporaryFolder(prefix: "signet-device-cli")
        let empty = try folder.write("empty.pem", Array("no certificate here\n".utf8))
        for arguments in [["--apple-attestation-roots", empty], ["--android-attestation-roots", folder.file("missing.pem")],
                          ["--android-revocations", empty], ["--device-challenges-per-address", "0"]] {
            let result = try await SignetBinary.runAsync(["serve", "--data", folder.file("data"), "--port", "0"] + arguments, in: folder.url)
            #expect(result.status != 0 && !result.stderr.isEmpty, "\(arguments): \(result)")
            #expect(!result.out.contains("url:"), "\(arguments): it must not start")
        }
    }
}

extension AdminAPI.AttestationSettings {
    /// The settings as the server stores and answers them.
    var normalizedForTest: Self? { try? normalized() }
}
