import SignetCore
import SignetTestSupport
import Testing

/// Every `SignetCoreError` case has its own stable, data-free code, named after the case, and
/// no message names a command-line flag (the CLI adds its hints itself).
@Suite("SignetCoreError codes")
struct ErrorCodeTests {
    static let samples: [(SignetCoreError, String)] = [
        (.io(path: "p", detail: "d"), "io"), (.outputExists(path: "p"), "outputExists"), (.malformed(source: "s", detail: "d"), "malformed"),
        (.unsupported(source: "s", detail: "d"), "unsupported"), (.tooLarge(source: "s", limit: 1), "tooLarge"),
        (.publicKeyWherePrivateNeeded(source: "s"), "publicKeyWherePrivateNeeded"),
        (.algorithmMismatch(algorithm: "a", keyDescription: "k", hint: "h"), "algorithmMismatch"), (.weakKey(source: "s", bits: 1024), "weakKey"),
        (.wrongPassphrase(source: "s"), "wrongPassphrase"), (.passphraseUnavailable(source: "s", detail: "d"), "passphraseUnavailable"),
        (.signatureInvalid(detail: "d"), "signatureInvalid"), (.legacySignatureNotAllowed(source: "s"), "legacySignatureNotAllowed"),
        (.mismatch(detail: "d"), "mismatch"), (.invalidArgument(detail: "d"), "invalidArgument"), (.cryptoFailure(detail: "d"), "cryptoFailure"),
    ]

    @Test("one code per case, named after it, in the core domain; messages name no flag")
    func codes() {
        expectStableCodes(Self.samples, domain: "core")
        #expect(SignetCoreError.weakKey(source: "a", bits: 1).code == "weakKey")
        #expect(SignetCoreError.weakKey(source: "a", bits: 1).code != "malformed")
    }
}
