import SignetCore

/// Every error `SignetHTTP` throws.
///
/// Each message says which check failed and is safe to send to the client that made the
/// request: it never contains key material, and names only what the client itself sent.
public enum HTTPSignatureError: Error, Sendable, Equatable {
    /// The message has no `Signature-Input`/`Signature` pair, or none with the label or key
    /// id asked for.
    case missingSignature(detail: String)
    /// A `Signature-Input`, `Signature`, `Content-Digest` or covered structured field does
    /// not parse.
    case malformedField(field: String, detail: String)
    /// A component the signature covers is not in the message.
    case missingComponent(String)
    /// The policy requires a component that the signature does not cover.
    case componentNotCovered(String)
    /// The policy requires a signature parameter that is absent.
    case missingParameter(String)
    /// An algorithm name that Signet does not know or does not allow here.
    case unsupportedAlgorithm(String)
    /// The `alg` parameter names another algorithm than the key's.
    case algorithmMismatch(declared: String, key: String)
    /// No key is known under the signature's `keyid`.
    case unknownKey(keyID: String)
    /// The signature does not verify under the key.
    case signatureInvalid(label: String)
    /// `expires` has passed.
    case expired(expires: Int64, now: Int64)
    /// `created` lies further in the future than the clock-skew window allows.
    case createdInFuture(created: Int64, now: Int64, skew: Int64)
    /// `created` is older than the policy's maximum age.
    case tooOld(created: Int64, now: Int64, maxAge: Int64)
    /// The nonce was seen before under this key: a replay.
    case replayedNonce
    /// The replay cache is full of unexpired nonces and refuses to forget one.
    case replayCacheFull
    /// The body does not match its `Content-Digest`, or a body came without one.
    case contentDigest(detail: String)
    /// A header, body or count is over a limit.
    case tooLarge(what: String, limit: Int)
    /// An argument the caller gave cannot be used (a bad component name, an HMAC key
    /// without a key id, …).
    case invalidArgument(detail: String)
}

extension HTTPSignatureError: SignetError {
    public var description: String {
        switch self {
        case .missingSignature(let detail): return "no usable signature: \(detail)"
        case .malformedField(let field, let detail): return "malformed \(field) field: \(detail)"
        case .missingComponent(let name): return "the signed component \(name) is not in the message"
        case .componentNotCovered(let name): return "the signature must cover \(name)"
        case .missingParameter(let name): return "the signature parameter \(name) is required"
        case .unsupportedAlgorithm(let name): return "unsupported algorithm \"\(name)\""
        case .algorithmMismatch(let declared, let key): return "alg \"\(declared)\" does not match the key's algorithm \(key)"
        case .unknownKey(let keyID): return "unknown keyid \"\(keyID)\""
        case .signatureInvalid(let label): return "signature \(label) does not verify"
        case .expired(let expires, let now): return "the signature expired at \(expires) (now \(now))"
        case .createdInFuture(let created, let now, let skew):
            return "created \(created) is more than \(skew) s in the future (now \(now)); check the client's clock"
        case .tooOld(let created, let now, let maxAge): return "created \(created) is more than \(maxAge) s ago (now \(now))"
        case .replayedNonce: return "the nonce was already used: replay refused"
        case .replayCacheFull: return "too many recent requests to track replays; retry later"
        case .contentDigest(let detail): return "content digest: \(detail)"
        case .tooLarge(let what, let limit): return "\(what) is over the limit of \(limit)"
        case .invalidArgument(let detail): return detail
        }
    }

    public var category: FailureCategory {
        switch self {
        case .malformedField, .tooLarge: return .malformedInput
        case .invalidArgument: return .usage
        case .replayCacheFull: return .environment
        default: return .checkFailed
        }
    }
}
