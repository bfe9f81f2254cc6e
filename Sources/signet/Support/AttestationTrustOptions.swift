import ArgumentParser
import SignetAttestation
import SignetCore
import SignetServer
import SignetX509
import X509

/// `signet serve`'s options for device attestation: the roots and revocation list devices'
/// attestations are verified against (Apple's and Google's by default), and the challenge budget.
struct AttestationTrustOptions: ParsableArguments {
    @Option(name: .customLong("apple-attestation-roots"), help: ArgumentHelp(
        "Replace Apple's App Attest root with these certificates (PEM): for test roots only.", valueName: "FILE"))
    var appleRoots: String?

    @Option(name: .customLong("android-attestation-roots"), help: ArgumentHelp(
        "Replace Google's hardware attestation roots with these certificates (PEM): for test roots only.", valueName: "FILE"))
    var androidRoots: String?

    @Option(name: .customLong("android-revocations"), help: ArgumentHelp(
        "Google's attestation status list (JSON, from android.googleapis.com/attestation/status), read at start; else the shipped snapshot.",
        valueName: "FILE"))
    var androidRevocations: String?

    @Option(name: .customLong("device-challenges-per-address"), help: ArgumentHelp(
        "Device enrolment challenges per client address per window (15 minutes).", valueName: "N"))
    var challengesPerAddress = 30

    func validate() throws {
        guard challengesPerAddress >= 1 else { throw ValidationError("--device-challenges-per-address must be at least 1") }
    }

    /// Sets the trust and budget of `configuration`; the files are read now.
    func apply(to configuration: inout ServerConfiguration) throws {
        configuration.deviceChallengesPerAddress = challengesPerAddress
        if let appleRoots { configuration.attestation.appleRoots = try Self.roots(appleRoots) }
        if let androidRoots { configuration.attestation.androidRoots = try Self.roots(androidRoots) }
        if let androidRevocations {
            configuration.attestation.androidRevocations = try AndroidRevocationList(
                json: try FileInput.readAll(path: androidRevocations, limit: AndroidRevocationList.maximumSize), source: X509Files.displayName(androidRevocations))
        }
    }

    static func roots(_ path: String) throws -> [Certificate] {
        let certificates = try X509Files.readCertificates(path: path)
        guard !certificates.isEmpty else { throw ValidationError("\(path) holds no certificate") }
        return certificates
    }
}
