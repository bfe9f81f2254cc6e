import ArgumentParser
import SignetCore
import SignetTLS
import SignetX509

/// What every command that opens TLS takes: private roots, pins, a pin set, and
/// the explicit pinned-self-signed mode.
struct TLSOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Trust only these roots (PEM or DER) instead of the system's.", valueName: "FILE"))
    var roots: String?

    @Option(name: .customLong("pin"), help: ArgumentHelp(
        "A pinned key, sha256/<base64> (repeat: at least two, one a backup not in the current chain).", valueName: "PIN"))
    var pins: [String] = []

    @Option(name: .customLong("pins"), help: ArgumentHelp("A pin set file (docs/formats/pins.md).", valueName: "FILE"))
    var pinsFile: String?

    @Flag(name: .customLong("pinned-self-signed"), help: ArgumentHelp(
        "The server is self-signed: its pinned key replaces the chain (the hostname and dates are still checked)."))
    var pinnedSelfSigned = false

    var isEmpty: Bool { trust.isEmpty }

    func validate() throws {
        if !pins.isEmpty && pinsFile != nil { throw ValidationError("give --pin or --pins, not both") }
        if pinnedSelfSigned && pins.isEmpty && pinsFile == nil { throw ValidationError("--pinned-self-signed needs --pin or --pins") }
        if pinnedSelfSigned && roots != nil { throw ValidationError("--pinned-self-signed trusts the pin, not --roots; give one of them") }
    }

    /// What the options say.
    var trust: TLSTrust { TLSTrust(roots: roots, pins: pins, pinsFile: pinsFile, pinnedSelfSigned: pinnedSelfSigned) }

    /// The trust policy for connections to `host`.
    func policy(host: String) throws -> TLSTrustPolicy { try trust.policy(host: host) }
}

/// How a server is trusted: roots, pins or a pin file, self-signed or not (``TLSOptions``'
/// values, or a connection profile's).
struct TLSTrust: Equatable {
    var roots: String?
    var pins: [String] = []
    var pinsFile: String?
    var pinnedSelfSigned = false

    var isEmpty: Bool { roots == nil && pins.isEmpty && pinsFile == nil && !pinnedSelfSigned }

    /// The trust policy for connections to `host`.
    func policy(host: String) throws -> TLSTrustPolicy {
        var pinSet: PinSet?
        if let pinsFile {
            pinSet = try PinSet.load(path: pinsFile)
        } else if !pins.isEmpty {
            let fingerprints = try pins.map { text throws -> KeyFingerprint in
                guard let pin = KeyFingerprint(string: text) else {
                    throw X509Error.invalidArgument(detail: "'\(text)' is not a pin (sha256/ and the base64 of 32 bytes)")
                }
                return pin
            }
            pinSet = try PinSet(hosts: [HostPins(host: host, pins: fingerprints)], source: "the --pin values")
        }
        let mode: TLSTrustPolicy.Mode
        if pinnedSelfSigned {
            mode = .pinnedSelfSigned
        } else {
            mode = .validatedChain(try roots.map { .certificates(try X509Files.readCertificates(path: $0)) } ?? .system)
        }
        return TLSTrustPolicy(mode: mode, pins: pinSet, reporter: StandardErrorPinReporter())
    }
}

/// Prints pin failure reports (RFC 7469's JSON) on standard error.
struct StandardErrorPinReporter: PinFailureReporter {
    func report(_ report: PinFailureReport) async {
        Console.writeError("pin failure report\(report.enforced ? "" : " (report-only)"): \(String(decoding: report.json(), as: UTF8.self))\n")
    }
}
