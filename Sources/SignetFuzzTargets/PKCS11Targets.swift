import SignetPKCS11

/// PKCS#11 URIs (RFC 7512), as `--key pkcs11:…` and `signet token` take them.
enum PKCS11Targets {
    static let all: TargetList = [
        ("pkcs11-uri", { PKCS11Targets.uri($0) }),
    ]

    /// `PKCS11URI(parsing:)`. Invariant: a URI that parses prints a canonical form that parses
    /// to the same URI and prints the same again.
    static func uri(_ bytes: [UInt8]) {
        guard let text = String(validating: bytes, as: UTF8.self), let uri = try? PKCS11URI(parsing: text) else { return }
        let canonical = uri.description
        guard uri.pinValue == nil else { return }  // a pin-value is never printed, by design
        let again = try? PKCS11URI(parsing: canonical)
        Fuzz.require(again == uri, "pkcs11-uri", "a URI's canonical form does not parse back to it")
        Fuzz.require(again?.description == canonical, "pkcs11-uri", "the canonical form is not stable")
    }
}
