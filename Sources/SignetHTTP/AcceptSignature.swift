extension HTTPMessageVerifier {
    /// The `Accept-Signature` field value (RFC 9421 §5.1) that tells a client what this
    /// verifier demands: the required components (and `content-digest` when a body must be
    /// covered) and the parameters, under the label `sig1` — e.g.
    /// `sig1=("@method" "@target-uri" "content-digest");created;keyid;nonce`. Parameters
    /// are named bare, as RFC 9421 §5.1's example does for `created`.
    public var acceptSignature: String {
        var components = policy.requiredComponents.map(\.description)
        if policy.requireContentDigestWithBody { components.append("\"content-digest\"") }
        var parameters = [String]()
        if policy.requireCreated { parameters.append("created") }
        if policy.requireKeyID { parameters.append("keyid") }
        if policy.requireNonce ?? (nonceCache != nil) { parameters.append("nonce") }
        if let tag = policy.requiredTag { parameters.append("tag=\"\(tag)\"") }
        return "sig1=(" + components.joined(separator: " ") + ")" + parameters.map { ";" + $0 }.joined()
    }
}
