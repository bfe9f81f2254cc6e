/// What a verifier demands of a signature beyond its being valid (RFC 9421 §3.2.1, §7).
public struct HTTPSignaturePolicy: Sendable {
    /// Components every accepted signature must cover. Default: `@method`, `@target-uri`.
    public var requiredComponents: [SignatureComponent] = [.method, .targetURI]
    /// A request with a body must cover `content-digest`, whose value is checked against
    /// the body. Default: on.
    public var requireContentDigestWithBody = true
    /// Header fields a request's signature must cover whenever the request carries them — the
    /// ones that carry authority, such as `authorization`, so that a man in the middle cannot
    /// swap a bearer token under a valid signature. Lower-case field names. Default: none (a
    /// signer covers `authorization` by default, see ``HTTPMessageSigner/components``).
    public var fieldsCoveredWhenPresent: [String] = []
    /// The `created` parameter is required. Default: on.
    ///
    /// With a nonce cache, a signature must carry a time bound even when this is off:
    /// `created` or `expires`. A nonce is remembered only until its signature could no
    /// longer be accepted, and a signature with neither would never age out, so it could be
    /// replayed once its nonce is forgotten.
    public var requireCreated = true
    /// The `keyid` parameter is required. Default: on (keys are found by it).
    public var requireKeyID = true
    /// The `nonce` parameter is required; nil means: exactly when the verifier has a
    /// replay cache.
    public var requireNonce: Bool?
    /// If set, the `tag` parameter must equal it (RFC 9421 §2.3 application tags).
    public var requiredTag: String?
    /// How old `created` may be. Default: 300 seconds. Signatures carry whole seconds, and so
    /// does this: a fraction of a second is dropped.
    public var maximumAge: Duration = .seconds(300)
    /// How far clocks may differ: `created` may lie this far in the future and `expires` this
    /// far in the past. Default: 300 seconds (whole seconds, as ``maximumAge``).
    public var clockSkew: Duration = .seconds(300)
    /// The longest `nonce`, in bytes: a replay cache stores each one (Signet's signer makes 22).
    /// Default: 128.
    public var maximumNonceBytes = 128
    /// The most bytes a `Signature-Input` or `Signature` field may have. Default: 8 KiB.
    public var maximumFieldBytes = 8192
    /// The most signatures one message may carry. Default: 8.
    public var maximumSignatures = 8
    /// The most of them checked, in order, before the message is refused: each check may cost
    /// a public-key operation, and a client signs once. Default: 8 (all of them).
    public var maximumSignaturesChecked = 8

    /// The default policy: `@method`, `@target-uri` and (with a body) `content-digest`
    /// covered; `created` and `keyid` present; ±300 s.
    public static let `default` = HTTPSignaturePolicy()

    /// The default policy, as each property describes it; the same as ``default``.
    public init() {}
}
