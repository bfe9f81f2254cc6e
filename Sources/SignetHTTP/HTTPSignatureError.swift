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
    /// The nonce was seen before under the key `keyID`: a replay.
    case replayedNonce(keyID: String)
    /// A signature scheme with a counter (an App Attest assertion, a WebAuthn signCount)
    /// signed with a counter no greater than the last one accepted: a replay, or a cloned key.
    case counterNotIncreasing(keyID: String, stored: UInt64, found: UInt64)
    /// Replays cannot be tracked now: the replay cache is full of unexpired nonces and refuses
    /// to forget one, or the record of a nonce could not be written. `detail` says which, for
    /// the client (it names no internals).
    case replayCacheFull(detail: String)
    /// `created` precedes the start of the process whose replay cache lives in memory: a
    /// signature accepted before a restart could be replayed after it, so none made before is.
    case createdBeforeStart(created: Int64, start: Int64)
    /// The key store could not be read (its database failed or timed out): the request may
    /// be fine, and is to be retried, not refused as unsigned.
    case keyStoreUnavailable(keyID: String, detail: String)
    /// The body does not match its `Content-Digest`, or a body came without one.
    case contentDigest(detail: String)
    /// A header, body or count is over a limit.
    case tooLarge(what: String, limit: Int)
    /// An argument the caller gave cannot be used (a bad component name, an HMAC key
    /// without a key id, …).
    case invalidArgument(detail: String)
}

extension HTTPSignatureError: SignetError {
    /// The message a user can act on: the input concerned and the problem, never a CLI flag.
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
        case .replayedNonce(let keyID): return "the nonce was already used with key \"\(PrintableText.escaped(keyID))\": replay refused"
        case .counterNotIncreasing(let keyID, let stored, let found):
            return "the signature counter \(found) of key \"\(PrintableText.escaped(keyID))\" is not above the last accepted \(stored): replay refused"
        case .replayCacheFull(let detail): return "replays cannot be tracked now (\(detail)); retry later"
        case .createdBeforeStart(let created, _):
            // The start is not told: it would say when the server last restarted.
            return "created \(created) precedes the server's start, so a replay of it could not be told apart; sign the request again"
        case .keyStoreUnavailable(let keyID, let detail): return "the key \"\(keyID)\" could not be looked up (\(detail)); retry later"
        case .contentDigest(let detail): return "content digest: \(detail)"
        case .tooLarge(let what, let limit): return "\(what) is over the limit of \(limit)"
        case .invalidArgument(let detail): return detail
        }
    }

    /// The kind of failure, which decides the CLI's exit code.
    public var category: FailureCategory {
        switch self {
        case .malformedField, .tooLarge: return .malformedInput
        case .invalidArgument: return .usage
        case .replayCacheFull, .keyStoreUnavailable: return .environment
        default: return .checkFailed
        }
    }
}

extension HTTPSignatureError {
    /// The prefix of this module's codes in ``SignetErrorCode/description``.
    public static let codeDomain = "http"
}
