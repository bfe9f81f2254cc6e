import SignetCore
import SignetX509

/// Every error `SignetAttestation` throws. Each refused check has a case of its own, so its
/// stable code (`attestation.nonceMismatch`) says which check failed.
public enum AttestationError: Error, Sendable, Equatable {
    /// The input is not the structure its format defines: `detail` says where.
    case malformed(source: String, detail: String)
    /// The attestation's format is not the one verified here (`fmt` is not `apple-appattest`).
    case wrongFormat(source: String, format: String)
    /// The certificate chain does not lead to a trusted root at the time of verification, or a
    /// certificate of it is refused: `reason` is the certificate check's error.
    case untrustedChain(source: String, reason: X509Error)
    /// The chain has no certificate (App Attest: `x5c` is empty; Android: no chain).
    case missingCertificate(source: String, detail: String)
    /// The attestation certificate lacks the extension that carries the attested facts.
    case missingExtension(source: String, oid: String)
    /// The nonce the certificate or the assertion carries is not the one computed from the
    /// authenticator data and the client data (the challenge).
    case nonceMismatch(source: String, detail: String)
    /// The key identifier does not match the certificate's key or the credential id.
    case keyIDMismatch(source: String, detail: String)
    /// The relying party id hash is not SHA-256 of the App ID the policy expects.
    case appIDMismatch(source: String, expected: String)
    /// The attestation comes from an environment the policy does not allow.
    case environmentNotAllowed(source: String, environment: String, allowed: String)
    /// A new attestation's counter is not zero.
    case counterNotZero(source: String, counter: UInt32)
    /// An assertion's counter is not greater than the one stored for the key (a replay).
    case counterNotIncreasing(source: String, previous: UInt32, found: UInt32)
    /// The signature does not verify with the key.
    case signatureInvalid(source: String, detail: String)
    /// The attestation challenge in the key description is not the expected one.
    case challengeMismatch(source: String, detail: String)
    /// The key's security level is under the policy's minimum (software keys are refused).
    case securityLevelTooLow(source: String, found: String, required: String)
    /// The attested application's package name is not the expected one.
    case packageMismatch(source: String, found: [String], expected: String)
    /// No signing certificate digest of the attested application is one the policy allows.
    case signerMismatch(source: String, detail: String)
    /// The device did not boot verified software (the policy requires `Verified`).
    case bootStateNotVerified(source: String, state: String)
    /// The device's bootloader is unlocked (the policy requires a locked device).
    case deviceUnlocked(source: String)
    /// A certificate of the chain is on the revocation status list.
    case revoked(source: String, serial: String, status: String, reason: String)
    /// An argument cannot be used (an App ID without a team, an unreadable root file).
    case invalidArgument(detail: String)
}

extension AttestationError: SignetError {
    /// The message a user can act on, naming the input and the check.
    public var description: String {
        switch self {
        case .malformed(let source, let detail): return "\(source): \(detail)"
        case .wrongFormat(let source, let format):
            return "\(source): the attestation's format is \"\(PrintableText.escaped(format, limit: 60))\", not \"apple-appattest\""
        case .untrustedChain(let source, let reason): return "\(source): the certificate chain is not trusted: \(reason)"
        case .missingCertificate(let source, let detail): return "\(source): \(detail)"
        case .missingExtension(let source, let oid): return "\(source): the attestation certificate has no extension \(oid)"
        case .nonceMismatch(let source, let detail): return "\(source): the nonce does not match: \(detail)"
        case .keyIDMismatch(let source, let detail): return "\(source): the key id does not match: \(detail)"
        case .appIDMismatch(let source, let expected):
            return "\(source): the relying party id hash is not SHA-256 of the App ID \(expected): made for another app"
        case .environmentNotAllowed(let source, let environment, let allowed):
            return "\(source): made in the \(environment) environment; allowed: \(allowed)"
        case .counterNotZero(let source, let counter): return "\(source): a new key's counter is \(counter), not 0"
        case .counterNotIncreasing(let source, let previous, let found):
            return "\(source): the counter \(found) is not greater than the stored \(previous): a replayed or cloned assertion"
        case .signatureInvalid(let source, let detail): return "\(source): the signature does not verify: \(detail)"
        case .challengeMismatch(let source, let detail): return "\(source): the attestation challenge does not match: \(detail)"
        case .securityLevelTooLow(let source, let found, let required):
            return "\(source): the key's security level is \(found); at least \(required) is required"
        case .packageMismatch(let source, let found, let expected):
            let names = found.isEmpty ? "none" : found.map { PrintableText.escaped($0, limit: 100) }.joined(separator: ", ")
            return "\(source): the attested application is \(names), not \(expected)"
        case .signerMismatch(let source, let detail): return "\(source): the application's signing certificate is not allowed: \(detail)"
        case .bootStateNotVerified(let source, let state): return "\(source): the device's verified boot state is \(state), not Verified"
        case .deviceUnlocked(let source): return "\(source): the device's bootloader is unlocked"
        case .revoked(let source, let serial, let status, let reason):
            let why = reason.isEmpty ? "" : " (\(PrintableText.escaped(reason, limit: 60)))"
            return "\(source): the certificate with serial \(serial) is \(PrintableText.escaped(status.lowercased(), limit: 40))\(why) on the revocation status list"
        case .invalidArgument(let detail): return detail
        }
    }

    /// The kind of failure: a malformed input, a bad argument, or a refused check.
    public var category: FailureCategory {
        switch self {
        case .malformed, .wrongFormat, .missingCertificate: return .malformedInput
        case .invalidArgument: return .usage
        default: return .checkFailed
        }
    }

    /// The prefix of this module's codes.
    public static let codeDomain = "attestation"

    /// A parser's error in words: without the source file and line some libraries append.
    static func describe(_ error: any Error) -> String {
        String(describing: error).replacing(/\s?\(?[A-Za-z0-9_\/]+\.swift:\d+\)?/, with: "")
    }
}
