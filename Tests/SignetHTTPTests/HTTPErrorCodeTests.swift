import SignetCore
import SignetHTTP
import SignetTestSupport
import Testing

/// Every `HTTPSignatureError` case has its own stable, data-free code, named after the case,
/// and no message names a command-line flag.
@Suite("HTTPSignatureError codes")
struct HTTPErrorCodeTests {
    static let samples: [(HTTPSignatureError, String)] = [
        (.missingSignature(detail: "d"), "missingSignature"), (.malformedField(field: "f", detail: "d"), "malformedField"),
        (.missingComponent("c"), "missingComponent"), (.componentNotCovered("c"), "componentNotCovered"), (.missingParameter("p"), "missingParameter"),
        (.unsupportedAlgorithm("a"), "unsupportedAlgorithm"), (.algorithmMismatch(declared: "a", key: "b"), "algorithmMismatch"),
        (.unknownKey(keyID: "k"), "unknownKey"), (.signatureInvalid(label: "sig1"), "signatureInvalid"), (.expired(expires: 1, now: 2), "expired"),
        (.createdInFuture(created: 3, now: 1, skew: 1), "createdInFuture"), (.tooOld(created: 1, now: 9, maxAge: 1), "tooOld"),
        (.replayedNonce(keyID: "k"), "replayedNonce"), (.counterNotIncreasing(keyID: "k", stored: 2, found: 1), "counterNotIncreasing"),
        (.replayCacheFull(detail: "d"), "replayCacheFull"), (.contentDigest(detail: "d"), "contentDigest"),
        (.tooLarge(what: "w", limit: 1), "tooLarge"), (.invalidArgument(detail: "d"), "invalidArgument"),
    ]

    @Test("one code per case, named after it, in the http domain; messages name no flag")
    func codes() {
        expectStableCodes(Self.samples, domain: "http")
    }
}
