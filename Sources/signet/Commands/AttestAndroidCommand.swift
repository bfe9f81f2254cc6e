import ArgumentParser
import SignetAttestation
import SignetCore
import SignetX509
import X509

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

struct AttestVerifyAndroid: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "android",
        abstract: "Verify an Android key attestation certificate chain (leaf first) and print what the device attests.",
        discussion: """
        Checks every certificate's signature and validity at --at (default now), the anchor \
        (Google's hardware attestation roots, by key), the revocation status list (--revocations, \
        or the snapshot of \(AndroidRevocationList.snapshotDate) shipped with signet; nothing goes \
        online), and the leaf's key description: the challenge, the security level (TEE or \
        better by default), the package and signing certificate digests when given, and a \
        verified boot with a locked bootloader (unless --allow-unlocked). Prints the security \
        level, the attestation version, the app, the boot state, the OS version and patch levels, \
        and the key (PEM).
        """)

    @Option(help: ArgumentHelp("The challenge the server gave the app (the file's exact bytes).", valueName: "FILE"))
    var challenge: String

    @Option(help: ArgumentHelp("The package the key must be made for.", valueName: "NAME"))
    var package: String?

    @Option(name: .customLong("signer-digest"), help: ArgumentHelp("An accepted SHA-256 of the app's signing certificate (hex); repeatable.", valueName: "HEX"))
    var signerDigests: [String] = []

    @Option(name: .customLong("min-security"), help: ArgumentHelp("The lowest security level accepted: tee (the default), strongbox, or software.", valueName: "LEVEL"))
    var minimumSecurity: SecurityLevelArgument = .tee

    @Flag(name: .customLong("allow-unlocked"), help: "Accept a device whose bootloader is unlocked or whose boot is not verified (test devices).")
    var allowUnlocked = false

    @Option(help: ArgumentHelp("Google's revocation status list (JSON, from https://android.googleapis.com/attestation/status).", valueName: "FILE"))
    var revocations: String?

    @OptionGroup var trust: AttestTrustOptions

    @OptionGroup var output: AttestOutputOptions

    @Argument(help: ArgumentHelp("The chain, leaf first: PEM certificates or concatenated DER (- for standard input).", valueName: "CHAIN"))
    var chain: String

    enum SecurityLevelArgument: String, ExpressibleByArgument, CaseIterable {
        case software, tee, strongbox
        var level: AndroidSecurityLevel {
            switch self {
            case .software: return .software
            case .tee: return .trustedEnvironment
            case .strongbox: return .strongBox
            }
        }
    }

    func run() throws {
        let digests = try signerDigests.map { text -> [UInt8] in
            guard let bytes = Hex.decode(text), bytes.count == 32 else {
                throw ValidationError("--signer-digest \(text) is not 64 hexadecimal digits (a SHA-256)")
            }
            return bytes
        }
        let list = try revocations.map { try AndroidRevocationList(json: try FileInput.readAll(path: $0, limit: AndroidRevocationList.maximumSize), source: $0) }
        let policy = AndroidAttestationPolicy(
            challenge: try FileInput.readAll(path: challenge, limit: 1 << 16), packageName: package, signerDigests: digests,
            minimumSecurityLevel: minimumSecurity.level, requiresVerifiedBoot: !allowUnlocked, requiresLockedBootloader: !allowUnlocked,
            roots: try trust.rootCertificates() ?? AndroidAttestationRoots.google, revocations: list ?? .shipped)
        let source = X509Files.displayName(chain)
        let certificates = try AndroidAttestationVerifier.readChain(
            try FileInput.readAll(path: chain, limit: AndroidAttestationVerifier.maximumChainFileSize), source: source)
        let facts = try AndroidAttestationVerifier(policy: policy).verify(chain: certificates, at: try trust.time(), source: source)
        func number(_ value: Int64?) -> JSONValue { value.map { .number(String($0)) } ?? .null }
        output.print([
            ("securityLevel", .string(facts.securityLevel.description)), ("attestationVersion", .number(String(facts.attestationVersion))),
            ("packages", .array(facts.application?.packages.map { .object([JSONMember("name", .string($0.name)), JSONMember("version", .number(String($0.version)))]) } ?? [])),
            ("signerDigests", .array(facts.application?.signatureDigests.map { .string(Hex.encode($0)) } ?? [])),
            ("verifiedBootState", facts.rootOfTrust.map { .string($0.verifiedBootState.description) } ?? .null),
            ("deviceLocked", facts.rootOfTrust.map { .bool($0.deviceLocked) } ?? .null),
            ("osVersion", number(facts.osVersion)), ("osPatchLevel", number(facts.osPatchLevel)),
            ("vendorPatchLevel", number(facts.vendorPatchLevel)), ("bootPatchLevel", number(facts.bootPatchLevel)),
            ("root", .string(facts.chain.last.map { $0.subject.description } ?? "")),
            ("revocationList", .string(revocations ?? "shipped snapshot of \(AndroidRevocationList.snapshotDate)")),
            ("publicKey", .string(try facts.publicKey.serializeAsPEM().pemString)),
        ])
    }
}
