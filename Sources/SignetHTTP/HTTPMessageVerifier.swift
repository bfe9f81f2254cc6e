import Foundation
import HTTPTypes
import SignetCore

/// Finds the key for a signature's `keyid`.
public protocol HTTPSignatureKeyStore: Sendable {
    /// The key registered under `keyID`, or nil when there is none.
    func verificationKey(for keyID: String) async throws -> HTTPVerificationKey?
}

/// A fixed set of keys, by key id.
public struct StaticHTTPSignatureKeys: HTTPSignatureKeyStore {
    /// The keys by key id, the value of a signature's `keyid` parameter.
    public let keys: [String: HTTPVerificationKey]

    /// The keys under the key ids given.
    public init(_ keys: [String: HTTPVerificationKey]) {
        self.keys = keys
    }

    /// Public keys under their fingerprints (`sha256/…`), each with its RFC 9421 default algorithm.
    public init(publicKeys: [PublicKey]) {
        self.keys = Dictionary(publicKeys.map { ($0.fingerprint.description, HTTPVerificationKey.publicKey($0)) }, uniquingKeysWith: { first, _ in first })
    }

    /// The key registered under `keyID`, or nil.
    public func verificationKey(for keyID: String) async throws -> HTTPVerificationKey? { keys[keyID] }
}

/// What a verified signature established.
public struct VerifiedHTTPSignature: Sendable, Equatable {
    /// The signature's label.
    public let label: String
    /// The key id it was verified under.
    public let keyID: String
    /// The algorithm of that key (for a custom scheme, the primitive underneath).
    public let algorithm: SignatureAlgorithm
    /// The signature input (components and parameters).
    public let input: SignatureInput
    /// The `alg` name of the key's scheme: ``algorithm``'s name, or a custom scheme's
    /// (``HTTPSignatureVerifying/algorithmName``).
    public let algorithmName: String
    /// The signature counter a custom scheme reported, nil for every other key: the caller
    /// keeps it growing (and refuses the request when it does not).
    public let counter: UInt64?

    init(label: String, keyID: String, algorithm: SignatureAlgorithm, input: SignatureInput, algorithmName: String? = nil, counter: UInt64? = nil) {
        self.label = label
        self.keyID = keyID
        self.algorithm = algorithm
        self.input = input
        self.algorithmName = algorithmName ?? algorithm.rawValue
        self.counter = counter
    }
}

/// Verifies HTTP message signatures (RFC 9421) under a policy: required components and
/// parameters, the algorithm fixed by the key, a time window, the body's digest, and replay.
public struct HTTPMessageVerifier: Sendable {
    /// Where keys come from.
    public let keys: any HTTPSignatureKeyStore
    /// What is demanded beyond validity.
    public let policy: HTTPSignaturePolicy
    /// Replay protection; nil turns it off.
    public let nonceCache: (any NonceCache)?
    /// Where the current time comes from, for the time window and the nonce's lifetime.
    public let clock: WallClock

    /// A verifier that finds keys in `keys`, demands what `policy` says, refuses replays through
    /// `nonceCache` (nil turns replay protection off) and takes the current time from `clock`.
    public init(
        keys: any HTTPSignatureKeyStore, policy: HTTPSignaturePolicy = .default, nonceCache: (any NonceCache)? = nil,
        clock: WallClock = .system
    ) {
        self.keys = keys
        self.policy = policy
        self.nonceCache = nonceCache
        self.clock = clock
    }

    /// Verifies a request and its body (nil or empty when it has none).
    public func verify(_ request: HTTPRequest, body: [UInt8]?, label: String? = nil, keyID: String? = nil) async throws -> VerifiedHTTPSignature {
        try await verify(.request(request), bodyDigests: body.flatMap { ContentDigest.digests(of: $0) }, label: label, keyID: keyID)
    }

    /// Verifies a message whose body was hashed while it streamed (``ContentDigest/Hasher``
    /// with both algorithms); `bodyDigests` is nil when there is no body.
    ///
    /// Of several signatures, the first that passes every check is the result; `label` or
    /// `keyID` pick one. When none passes, the reason the first candidate failed is thrown.
    public func verify(
        _ message: SignedMessage, bodyDigests: [ContentDigest.Algorithm: [UInt8]]?, label: String? = nil, keyID: String? = nil
    ) async throws -> VerifiedHTTPSignature {
        try await verify(message, hasBody: bodyDigests != nil, label: label, keyID: keyID) { bodyDigests }
    }

    /// Verifies a message whose body's digests are computed by `bodyDigests` only once a
    /// signature has passed its check (nil: the body is empty): a request that no key signed
    /// costs no hashing of its body. `hasBody` says whether there is one.
    package func verify(
        _ message: SignedMessage, hasBody: Bool, label: String? = nil, keyID: String? = nil,
        bodyDigests: @escaping () -> [ContentDigest.Algorithm: [UInt8]]?
    ) async throws -> VerifiedHTTPSignature {
        let signatures = try SignatureFields(message.fields, maximumFieldBytes: policy.maximumFieldBytes, maximumSignatures: policy.maximumSignatures)
        let candidates = signatures.entries.filter { entry in
            (label == nil || entry.label == label) && (keyID == nil || entry.keyID == keyID)
        }
        guard !candidates.isEmpty else {
            if let keyID { throw HTTPSignatureError.missingSignature(detail: "no signature has keyid \"\(keyID)\"") }
            throw HTTPSignatureError.missingSignature(detail: "no signature labelled \(label ?? "")")
        }
        // Each component costs a look-up when a base is built: bound them over all the
        // signatures tried, not only within one.
        let components = candidates.reduce(0) { $0 + ((try? $1.input)?.components.count ?? 0) }
        guard components <= SignatureInput.maximumComponents else {
            throw HTTPSignatureError.tooLarge(what: "the number of components the signatures cover together", limit: SignatureInput.maximumComponents)
        }
        var firstError: (any Error)?
        var digests: [ContentDigest.Algorithm: [UInt8]]??
        let digestsOnce = {
            if let digests { return digests }
            let computed = bodyDigests()
            digests = .some(computed)
            return computed
        }
        // Fields parsed for one candidate's base serve the next: a field of 256 members that
        // every signature covers is parsed and serialised once.
        var parsed = ParsedDictionaries()
        for candidate in candidates.prefix(max(1, policy.maximumSignaturesChecked)) {
            do {
                return try await check(candidate, message: message, hasBody: hasBody, parsed: &parsed, bodyDigests: digestsOnce)
            } catch {
                firstError = firstError ?? error
            }
        }
        throw firstError!
    }

    private func check(
        _ entry: SignatureFields.Entry, message: SignedMessage, hasBody: Bool, parsed: inout ParsedDictionaries,
        bodyDigests: () -> [ContentDigest.Algorithm: [UInt8]]?
    ) async throws -> VerifiedHTTPSignature {
        let input = try entry.input
        let signature = try entry.signature
        let parameters = input.parameters
        let now = Int64(clock.now.timeIntervalSince1970.rounded(.down))
        let replayProtected = policy.requireNonce ?? (nonceCache != nil)
        if policy.requireKeyID, parameters.keyID == nil { throw HTTPSignatureError.missingParameter("keyid") }
        if policy.requireCreated, parameters.created == nil { throw HTTPSignatureError.missingParameter("created") }
        if replayProtected, parameters.nonce?.isEmpty ?? true { throw HTTPSignatureError.missingParameter("nonce") }
        if let nonce = parameters.nonce, nonce.utf8.count > policy.maximumNonceBytes {
            throw HTTPSignatureError.tooLarge(what: "the nonce", limit: policy.maximumNonceBytes)
        }
        // A nonce is remembered only until the signature carrying it could no longer be
        // accepted; a signature with no time bound would outlive any memory of its nonce.
        let acceptableUntil = Self.acceptableUntil(parameters, policy: policy)
        if replayProtected, nonceCache != nil, acceptableUntil == nil { throw HTTPSignatureError.missingParameter("created or expires") }
        if let tag = policy.requiredTag, parameters.tag != tag { throw HTTPSignatureError.missingParameter("tag=\"\(tag)\"") }
        // A handful of components: a scan beats building a set.
        let covered = input.components
        for component in policy.requiredComponents where !covered.contains(component) {
            // A response cannot cover request-only components itself; only requests are held to them.
            if message.response != nil, !component.fromRequest, component.isDerived, component != .status { continue }
            throw HTTPSignatureError.componentNotCovered(component.description)
        }
        if message.response == nil {
            for name in policy.fieldsCoveredWhenPresent where !covered.contains(SignatureComponent(name)) {
                if let field = HTTPField.Name(name), message.fields[field] != nil { throw HTTPSignatureError.componentNotCovered(name) }
            }
        }
        let contentDigestField = message.fields[.contentDigest]
        if policy.requireContentDigestWithBody, hasBody || contentDigestField != nil, !covered.contains(.contentDigest) {
            throw HTTPSignatureError.componentNotCovered("content-digest")
        }
        if let created = parameters.created {
            if created > now + policy.clockSkew.wholeSeconds { throw HTTPSignatureError.createdInFuture(created: created, now: now, skew: policy.clockSkew.wholeSeconds) }
            if now - created > policy.maximumAge.wholeSeconds { throw HTTPSignatureError.tooOld(created: created, now: now, maxAge: policy.maximumAge.wholeSeconds) }
        }
        if let expires = parameters.expires, now - policy.clockSkew.wholeSeconds > expires { throw HTTPSignatureError.expired(expires: expires, now: now) }

        guard let keyID = parameters.keyID else { throw HTTPSignatureError.missingParameter("keyid") }
        let found: HTTPVerificationKey?
        do {
            found = try await keys.verificationKey(for: keyID)
        } catch {
            // Not the store's own words: they may name its internals.
            throw HTTPSignatureError.keyStoreUnavailable(keyID: String(keyID.prefix(80)), detail: "the key store did not answer")
        }
        guard let key = found else { throw HTTPSignatureError.unknownKey(keyID: keyID) }
        if case .custom(let scheme) = key {
            // The bytes are the scheme's, not a raw signature: the message must say so.
            guard parameters.algorithm == scheme.algorithmName else {
                throw HTTPSignatureError.algorithmMismatch(declared: parameters.algorithm ?? "(none)", key: scheme.algorithmName)
            }
        } else if let declared = parameters.algorithm, declared != key.algorithm.rawValue || !HTTPSignatureAlgorithms.supported.contains(key.algorithm) {
            // The common case, the key's own algorithm named, needs no parse — unless the key is
            // pinned to an algorithm outside RFC 9421's registry, which the parse refuses by name.
            let algorithm = try HTTPSignatureAlgorithms.parse(declared)
            guard algorithm == key.algorithm else { throw HTTPSignatureError.algorithmMismatch(declared: declared, key: key.algorithm.rawValue) }
        }
        let counter = try key.verify(signature, base: try input.signatureBaseBytes(for: message, parsed: &parsed), label: entry.label)

        if let contentDigestField {
            // Hashed only now, after the signature passed: nobody's made-up signature costs it.
            try ContentDigest.verify(stated: try ContentDigest.parse(contentDigestField), computed: bodyDigests() ?? Self.emptyBodyDigests)
        } else if hasBody, policy.requireContentDigestWithBody {
            throw HTTPSignatureError.contentDigest(detail: "a body came without a Content-Digest field")
        }
        if replayProtected, let cache = nonceCache, let nonce = parameters.nonce, let acceptableUntil {
            let until = Date(timeIntervalSince1970: TimeInterval(max(acceptableUntil, now) + 1))
            guard try await cache.insert(nonce: nonce, keyID: keyID, created: parameters.created, until: until) else { throw HTTPSignatureError.replayedNonce(keyID: keyID) }
        }
        return VerifiedHTTPSignature(
            label: entry.label, keyID: keyID, algorithm: key.algorithm, input: input, algorithmName: key.algorithmName, counter: counter)
    }

    /// The last second at which a signature with these parameters is accepted under `policy`:
    /// `created` + maximum age and `expires` + clock skew, whichever comes first; nil when the
    /// signature has neither, and so never ages out.
    static func acceptableUntil(_ parameters: SignatureParameters, policy: HTTPSignaturePolicy) -> Int64? {
        switch (parameters.created.map { $0 + policy.maximumAge.wholeSeconds }, parameters.expires.map { $0 + policy.clockSkew.wholeSeconds }) {
        case (let created?, let expires?): return min(created, expires)
        case (let bound?, nil), (nil, let bound?): return bound
        case (nil, nil): return nil
        }
    }

    /// The digests of an empty body, for a Content-Digest sent with none.
    static let emptyBodyDigests: [ContentDigest.Algorithm: [UInt8]] = ContentDigest.Hasher().finalize()
}
