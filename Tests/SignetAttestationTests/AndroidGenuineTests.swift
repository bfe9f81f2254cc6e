import Foundation
import SignetAttestation
import SignetAttestationTestSupport
import SignetCore
import SignetTestSupport
import Testing
import X509

@Suite("Android key attestation: genuine chains from real devices, Google's roots")
struct AndroidGenuineTests {
    /// Genuine chains that verify; the rest of `chains/` are refused on purpose (below).
    static let refusedGenuine: [String: SignetErrorCode<AttestationError>] = [
        "gaka_RKP_ATTEST_KEY_2023": "untrustedChain",  // an ATTEST_KEY chain: key descriptions above the leaf
        "kat_invalid_malformed_rot_device_locked": "malformed",  // deviceLocked encoded 0x01, not DER's 0xFF
        "kat_tokay_sdk37_TEE_MLDSA_FACTORY": "malformed",  // an ML-DSA-65 leaf key: swift-certificates cannot read it yet
        "kat_tokay_sdk37_TEE_MLDSA_RKP": "malformed",
    ]
    static let genuine = AndroidSample.all.filter { $0.category == "chains" && refusedGenuine[$0.name] == nil }

    @Test("the vector folder holds the collected chains")
    func samplesAreThere() {
        #expect(Self.genuine.count >= 24)
        #expect(AndroidAttestationRoots.google.count == 5)
        #expect(AndroidRevocationList.shipped.entries.count >= 1600)
    }

    @Test("every genuine chain verifies at its time with exactly the facts it carries", arguments: genuine)
    func genuineChainVerifies(sample: AndroidSample) throws {
        let attestation = try AndroidAttestationVerifier(policy: try sample.lenientPolicy()).verify(chain: try sample.chain(), at: try sample.at())
        #expect(attestation.securityLevel.description == sample.securityLevel)
        #expect(attestation.attestationVersion == sample.attestationVersion)
        #expect(attestation.application?.packages.map(\.name) ?? [] == sample.packages)
        #expect(attestation.application?.signatureDigests.map(Hex.encode) ?? [] == sample.signerDigests)
        #expect(attestation.rootOfTrust?.verifiedBootState.description == sample.bootState)
        #expect(attestation.rootOfTrust?.deviceLocked == sample.deviceLocked)
        #expect(attestation.osVersion == sample.osVersion)
        #expect(attestation.osPatchLevel == sample.osPatchLevel)
        #expect(AndroidAttestationRoots.google.contains { $0 == attestation.chain.last })
    }

    @Test("a chain ending in the 2016 root certificate (expired 2026-05-24) verifies later through its re-issue (attack round)")
    func expiredRootCertificateStoodForByReissue() throws {
        let sample = try #require(AndroidSample.named("webauthn_galaxy_s9plus_android10"))
        let chain = try sample.chain()
        #expect(chain.last?.notValidAfter ?? .distantFuture < Date(timeIntervalSince1970: 1_780_000_000))
        let later = Date(timeIntervalSince1970: 1_796_601_600)  // 2026-12-07
        let attestation = try AndroidAttestationVerifier(policy: try sample.lenientPolicy()).verify(chain: chain, at: later)
        #expect(attestation.chain.last.map { later <= $0.notValidAfter } == true)
        // An intermediate's expiry is still checked.
        let error = try thrown(AttestationError.self) {
            try AndroidAttestationVerifier(policy: try sample.lenientPolicy()).verify(chain: chain, at: Date(timeIntervalSince1970: 4_102_444_800))
        }
        #expect(error.code == "untrustedChain")
        let outOfRange = try thrown(AttestationError.self) {
            try AndroidAttestationVerifier(policy: try sample.lenientPolicy()).verify(chain: chain, at: Date(timeIntervalSince1970: 300_000_000_000))
        }
        #expect(outOfRange.code == "invalidArgument")
    }

    @Test("genuine chains refused on purpose: an ATTEST_KEY chain, a non-DER boolean, ML-DSA leaves", arguments: Array(refusedGenuine.keys).sorted())
    func genuineButRefused(name: String) throws {
        let sample = try #require(AndroidSample.named(name))
        let error = try thrown(AttestationError.self) {
            try AndroidAttestationVerifier(policy: try sample.lenientPolicy()).verify(chain: try sample.chain(), at: try sample.at())
        }
        #expect(error.code == Self.refusedGenuine[name], "\(error)")
    }

    @Test("software keys, unknown roots and broken chains are refused", arguments: AndroidSample.all.filter { $0.category != "chains" })
    func otherChainsAreRefused(sample: AndroidSample) throws {
        let time = (try? sample.at()) ?? Date(timeIntervalSince1970: 1_700_000_000)
        let error = try thrown(AttestationError.self) {
            try AndroidAttestationVerifier(policy: try sample.lenientPolicy()).verify(chain: try sample.chain(), at: time)
        }
        #expect(["untrustedChain", "securityLevelTooLow", "malformed"].contains(error.code.name), "\(sample.name): \(error)")
    }

    @Test("one input changed is refused with its check's code", arguments: ["kat_caiman_sdk36_TEE_EC_RKP", "warden_Pixel_6", "kat_sony-xperia10-iii_sdk33_TEE_EC"])
    func alteredInputsAreRefused(name: String) throws {
        let sample = try #require(AndroidSample.named(name))
        let chain = try sample.chain()
        let time = try sample.at()
        func refusal(_ policy: AndroidAttestationPolicy, at: Date? = nil, chain: [Certificate]? = nil) throws -> AttestationError {
            try thrown(AttestationError.self) { try AndroidAttestationVerifier(policy: policy).verify(chain: chain ?? sample.chain(), at: at ?? time) }
        }
        var policy = try sample.lenientPolicy()
        policy.challenge = Array("another challenge".utf8)
        #expect(try refusal(policy).code == "challengeMismatch")

        policy = try sample.lenientPolicy()
        policy.packageName = "com.example.other"
        let package = try refusal(policy)
        #expect(package.code == "packageMismatch")
        #expect(package.description.contains(try #require(sample.packages.first)))

        policy = try sample.lenientPolicy()
        policy.signerDigests = [[UInt8](repeating: 0xAB, count: 32)]
        #expect(try refusal(policy).code == "signerMismatch")

        policy = try sample.lenientPolicy()
        policy.minimumSecurityLevel = .strongBox
        #expect(try refusal(policy).code == "securityLevelTooLow")

        #expect(try refusal(try sample.lenientPolicy(), at: Date(timeIntervalSince1970: 4_102_444_800)).code == "untrustedChain")
        #expect(try refusal(try sample.lenientPolicy(), at: Date(timeIntervalSince1970: 946_684_800)).code == "untrustedChain")

        policy = try sample.lenientPolicy()
        policy.roots = [try AttestationTestCA.make().root]
        #expect(try refusal(policy).code == "untrustedChain")

        #expect(try refusal(try sample.lenientPolicy(), chain: Array(chain.dropFirst())).code != "challengeMismatch")
        #expect(try refusal(try sample.lenientPolicy(), chain: [chain[0]] + chain.dropFirst(2)).code == "untrustedChain")

        // Its own facts, matched exactly, pass.
        policy = try sample.lenientPolicy()
        policy.packageName = sample.packages.first
        policy.signerDigests = try sample.signerDigests.map { try TestVectors.bytes(hex: $0) }
        _ = try AndroidAttestationVerifier(policy: policy).verify(chain: chain, at: time)
    }

    @Test("the default policy refuses an unlocked device and unverified boot, and accepts a locked, verified one")
    func bootPolicy() throws {
        let unlocked = try #require(AndroidSample.named("kat_akita_sdk34_TEE_EC_NONE"))
        let strict = AndroidAttestationPolicy(challenge: try unlocked.challenge())
        let error = try thrown(AttestationError.self) { try AndroidAttestationVerifier(policy: strict).verify(chain: try unlocked.chain(), at: try unlocked.at()) }
        #expect(error.code == "bootStateNotVerified")
        var lockedOnly = strict
        lockedOnly.requiresVerifiedBoot = false
        let lockError = try thrown(AttestationError.self) { try AndroidAttestationVerifier(policy: lockedOnly).verify(chain: try unlocked.chain(), at: try unlocked.at()) }
        #expect(lockError.code == "deviceUnlocked")

        let locked = try #require(AndroidSample.named("warden_Pixel_6"))
        _ = try AndroidAttestationVerifier(policy: AndroidAttestationPolicy(challenge: try locked.challenge())).verify(chain: try locked.chain(), at: try locked.at())
    }

    @Test("a listed serial is refused, whatever the list says of it, and the shipped snapshot lists none of the samples")
    func revokedSerial() throws {
        let sample = try #require(AndroidSample.named("warden_Pixel_6"))
        let chain = try sample.chain()
        let serial = Hex.encode(Array(chain[1].serialNumber.bytes))
        let list = try AndroidRevocationList(json: Array("{\"entries\":{\"\(serial)\":{\"status\":\"REVOKED\",\"reason\":\"KEY_COMPROMISE\"}}}".utf8), source: "status.json")
        var policy = try sample.lenientPolicy()
        policy.revocations = list
        let error = try thrown(AttestationError.self) { try AndroidAttestationVerifier(policy: policy).verify(chain: chain, at: try sample.at()) }
        #expect(error.code == "revoked")
        #expect(error.description.contains("KEY_COMPROMISE"))
        for genuine in Self.genuine {
            for certificate in try genuine.chain() { #expect(AndroidRevocationList.shipped.entry(for: certificate) == nil) }
        }
    }

    @Test("a revocation list that is not Google's format is refused", arguments: [
        "", "[]", "{\"entries\":[]}", "{\"entries\":{\"xyz\":{\"status\":\"REVOKED\"}}}", "{\"entries\":{\"12\":{}}}",
        "{\"entries\":{\"12\":{\"status\":\"REVOKED\"},\"12\":{\"status\":\"REVOKED\"}}}",
    ])
    func badRevocationList(text: String) throws {
        let error = try thrown(AttestationError.self) { try AndroidRevocationList(json: Array(text.utf8), source: "status.json") }
        #expect(error.code == "malformed")
        #expect(error.description.hasPrefix("status.json: "))
    }
}
