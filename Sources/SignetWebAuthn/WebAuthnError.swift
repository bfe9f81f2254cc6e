import SignetCore

/// Every error `SignetWebAuthn` throws. Each refused check has a case of its own, so its
/// stable code (`webauthn.codeMismatch`) says which check failed.
public enum WebAuthnError: Error, Sendable, Equatable {
    /// An input that does not parse: `source` names it, `detail` says where and why.
    case malformed(source: String, detail: String)
    /// A one-time code that is not the one expected in the accepted window (`skew` steps either
    /// side of now).
    case codeMismatch(skew: Int)
    /// A one-time code of a time step already accepted (or earlier): a replay.
    case codeReused(step: Int64)
    /// An argument the caller gave cannot be used (a secret too short, 7 digits, a period of 0 …).
    case invalidArgument(detail: String)
}

extension WebAuthnError: SignetError {
    /// The message a user can act on, naming the input and the check.
    public var description: String {
        switch self {
        case .malformed(let source, let detail): return "\(source): \(detail)"
        case .codeMismatch(let skew):
            return "the one-time code is not the expected one within \(skew) time step\(skew == 1 ? "" : "s") either side (check the device's clock)"
        case .codeReused(let step): return "the one-time code of time step \(step) was already used: each code is accepted once"
        case .invalidArgument(let detail): return detail
        }
    }

    /// The kind of failure: a malformed input, a bad argument, or a refused check.
    public var category: FailureCategory {
        switch self {
        case .malformed: return .malformedInput
        case .invalidArgument: return .usage
        case .codeMismatch, .codeReused: return .checkFailed
        }
    }

    /// The prefix of this module's codes.
    public static let codeDomain = "webauthn"
}
