import Foundation
import SignetAttestation
import SignetCore
import SignetTestSupport
import Testing
import X509

/// `signet attest verify` run as a program on the genuine samples.
@Suite("signet attest verify: the operator's offline tool")
struct AttestCLITests {
    static func run(_ arguments: [String], in folder: TemporaryFolder) throws -> RunResult {
        try SignetBinary.run(arguments, in: folder.url)
    }

    static func vector(_ relative: String) throws -> String { try TestVectors.path(relative, in: .module) }

    @Test("apple: a genuine attestation verifies (raw CBOR and base64), and each wrong input fails with its exit code")
    func apple() throws {
        let folder = try TemporaryFolder(prefix: "signet-attest-cli")
        defer { folder.remove() }
        let sample = try #require(AppAttestSample.all("attestation").first { $0.name == "veehaitch-ios-14.4" })
        let object = try Self.vector("apple/" + sample.file)
        try Data("wurzelpfropf".utf8).write(to: URL(fileURLWithPath: folder.file("client-data")))
        let base = ["attest", "verify", "apple", "--app-id", sample.appId, "--client-data", folder.file("client-data"), "--environment", "development"]
        let ok = try Self.run(base + ["--at", "2021-01-23T12:13:33Z", object], in: folder)
        #expect(ok.status == 0, "\(ok)")
        let text = String(decoding: ok.stdout, as: UTF8.self)
        #expect(text.contains("keyID: \(try #require(sample.keyId_b64_as_given))"))
        #expect(text.contains("environment: development"))
        #expect(text.contains("-----BEGIN PUBLIC KEY-----\n"))

        let base64 = folder.file("attestation.b64")
        try Data(Base64.encode(Array(try Data(contentsOf: URL(fileURLWithPath: object)))).utf8).write(to: URL(fileURLWithPath: base64))
        let json = try Self.run(base + ["--at", "2021-01-23T12:13:33Z", "--json", base64], in: folder)
        #expect(json.status == 0, "\(json)")
        let parsed = try StrictJSON.parse(Array(json.stdout))
        guard case .object(let members) = parsed else { Issue.record("not an object"); return }
        #expect(members.contains { $0.name == "counter" && $0.value == .number("0") })

        let expired = try Self.run(base + [object], in: folder)
        #expect(expired.status == 1)
        #expect(expired.stderr.contains("has expired: it is valid from 2021-01-22T12:13:35Z to 2021-01-25T12:13:35Z"), "\(expired.stderr)")
        #expect(!expired.stderr.contains("Certificate("), "\(expired.stderr)")

        let otherApp = try Self.run(["attest", "verify", "apple", "--app-id", "ABCDE12345.com.example.other", "--client-data", folder.file("client-data"),
                                     "--environment", "development", "--at", "2021-01-23T12:13:33Z", object], in: folder)
        #expect(otherApp.status == 1)
        #expect(otherApp.stderr.contains("ABCDE12345.com.example.other"))

        let production = try Self.run(["attest", "verify", "apple", "--app-id", sample.appId, "--client-data", folder.file("client-data"),
                                       "--at", "2021-01-23T12:13:33Z", object], in: folder)
        #expect(production.status == 1)
        #expect(production.stderr.contains("development environment"), "\(production.stderr)")

        try Data("not an attestation".utf8).write(to: URL(fileURLWithPath: folder.file("junk")))
        let junk = try Self.run(base + [folder.file("junk")], in: folder)
        #expect(junk.status == 3, "\(junk)")

        let noHash = try Self.run(["attest", "verify", "apple", "--app-id", sample.appId, object], in: folder)
        #expect(noHash.status == 2, "\(noHash)")
        #expect(noHash.stderr.contains("--client-data"))

        let badApp = try Self.run(["attest", "verify", "apple", "--app-id", "com.example", "--client-data", folder.file("client-data"), object], in: folder)
        #expect(badApp.status == 2, "\(badApp)")
    }

    @Test("apple-assertion: a genuine assertion verifies with its key; a replayed counter fails")
    func appleAssertion() throws {
        let folder = try TemporaryFolder(prefix: "signet-attest-cli")
        defer { folder.remove() }
        let sample = try #require(AppAttestSample.all("assertion").first { $0.name == "basd-chiff-assertion1" })
        try Data(try #require(sample.publicKey_spki_pem).utf8).write(to: URL(fileURLWithPath: folder.file("key.pem")))
        try Data("{\"challenge\":\"assertion-test\"}".utf8).write(to: URL(fileURLWithPath: folder.file("client-data")))
        let base = ["attest", "verify", "apple-assertion", "--app-id", sample.appId, "--public-key", folder.file("key.pem"), "--client-data", folder.file("client-data")]
        let ok = try Self.run(base + [try Self.vector("apple/" + sample.file)], in: folder)
        #expect(ok.status == 0, "\(ok)")
        #expect(String(decoding: ok.stdout, as: UTF8.self).contains("counter: 3"))
        let replay = try Self.run(base + ["--previous-counter", "3", try Self.vector("apple/" + sample.file)], in: folder)
        #expect(replay.status == 1)
        #expect(replay.stderr.contains("not greater than the stored 3"), "\(replay.stderr)")
    }

    @Test("android: a genuine chain verifies (PEM and DER) with its facts; policy, time and revocation failures exit 1")
    func android() throws {
        let folder = try TemporaryFolder(prefix: "signet-attest-cli")
        defer { folder.remove() }
        let sample = try #require(AndroidSample.named("kat_akita_sdk34_TEE_EC_NONE"))
        try Data(try sample.challenge()).write(to: URL(fileURLWithPath: folder.file("challenge")))
        let chain = try Self.vector("android/" + sample.file)
        let base = ["attest", "verify", "android", "--challenge", folder.file("challenge"), "--at", try #require(sample.time)]
        let ok = try Self.run(base + ["--allow-unlocked", "--package", try #require(sample.packages.first), chain], in: folder)
        #expect(ok.status == 0, "\(ok)")
        let text = String(decoding: ok.stdout, as: UTF8.self)
        #expect(text.contains("securityLevel: TrustedEnvironment"))
        #expect(text.contains("verifiedBootState: Unverified"))
        #expect(text.contains("osPatchLevel: 202408"))

        let der = folder.file("chain.der")
        let certificates = try sample.chain()
        var bytes: [UInt8] = []
        for certificate in certificates { bytes += try certificate.serializeAsPEM().derBytes }
        try Data(bytes).write(to: URL(fileURLWithPath: der))
        #expect(try Self.run(base + ["--allow-unlocked", "--json", der], in: folder).status == 0)

        let unlocked = try Self.run(base + [chain], in: folder)
        #expect(unlocked.status == 1)
        #expect(unlocked.stderr.contains("Unverified"), "\(unlocked.stderr)")

        let package = try Self.run(base + ["--allow-unlocked", "--package", "com.example.other", chain], in: folder)
        #expect(package.status == 1)
        let strongbox = try Self.run(base + ["--allow-unlocked", "--min-security", "strongbox", chain], in: folder)
        #expect(strongbox.status == 1)
        #expect(strongbox.stderr.contains("StrongBox"))

        let serial = Hex.encode(Array(certificates[1].serialNumber.bytes))
        try Data("{\"entries\":{\"\(serial)\":{\"status\":\"REVOKED\",\"reason\":\"KEY_COMPROMISE\"}}}".utf8).write(to: URL(fileURLWithPath: folder.file("status.json")))
        let revoked = try Self.run(base + ["--allow-unlocked", "--revocations", folder.file("status.json"), chain], in: folder)
        #expect(revoked.status == 1)
        #expect(revoked.stderr.contains("revoked"), "\(revoked.stderr)")

        let badDigest = try Self.run(base + ["--allow-unlocked", "--signer-digest", "abc", chain], in: folder)
        #expect(badDigest.status == 2)
        try Data("junk".utf8).write(to: URL(fileURLWithPath: folder.file("junk")))
        #expect(try Self.run(base + [folder.file("junk")], in: folder).status == 3)
    }

    @Test("from the attack round: --at out of range or not a date, a PEM without line breaks, ambiguous package names in JSON")
    func attackReproductions() throws {
        let folder = try TemporaryFolder(prefix: "signet-attest-cli")
        defer { folder.remove() }
        let sample = try #require(AppAttestSample.all("attestation").first { $0.name == "basd-chiff" })
        try Data("attestation-test".utf8).write(to: URL(fileURLWithPath: folder.file("client-data")))
        let object = try Self.vector("apple/" + sample.file)
        let base = ["attest", "verify", "apple", "--app-id", sample.appId, "--client-data", folder.file("client-data"), "--environment", "development"]
        // A year swift-certificates cannot represent trapped (exit 132) before; trailing text and
        // 30 February were taken as dates.
        for at in ["10000-01-01T00:00:00Z", "0000-01-01T00:00:00Z", "2021-04-15T00:00:00Zgarbage", "2021-02-30T00:00:00Z", "2021-04-15T00:00:00Z 2030"] {
            let result = try Self.run(base + ["--at", at, object], in: folder)
            #expect(result.status == 2, "--at \(at): \(result)")
        }
        #expect(try Self.run(base + ["--at", "2021-04-15T00:00:00Z", object], in: folder).status == 0)
        #expect(try Self.run(base + ["--at", "2021-04-15T02:00:00.5+02:00", object], in: folder).status == 0)

        let android = try #require(AndroidSample.named("warden_Pixel_6"))
        try Data(try android.challenge()).write(to: URL(fileURLWithPath: folder.file("challenge")))
        let pem = String(decoding: try TestVectors.data("android/" + android.file, in: .module), as: UTF8.self)
        let oneLine = pem.replacingOccurrences(of: "-----\n", with: "-----").replacingOccurrences(of: "\n-----", with: "-----")
            .split(separator: "\n").joined()
        try Data(oneLine.utf8).write(to: URL(fileURLWithPath: folder.file("one-line.pem")))
        let flat = try Self.run(["attest", "verify", "android", "--challenge", folder.file("challenge"), folder.file("one-line.pem")], in: folder)
        #expect(flat.status == 3, "\(flat)")

        let json = try Self.run(["attest", "verify", "android", "--challenge", folder.file("challenge"), "--at", try #require(android.time), "--json",
                                 try Self.vector("android/" + android.file)], in: folder)
        #expect(json.status == 0, "\(json)")
        guard case .object(let members) = try StrictJSON.parse(Array(json.stdout)), case .array(let packages)? = members.first(where: { $0.name == "packages" })?.value,
            case .object(let package)? = packages.first
        else { Issue.record("no packages array of objects: \(json)"); return }
        #expect(package.map(\.name) == ["name", "version"])
    }
}
