import SignetBundle
import SignetCore
import SignetTestSupport
import Testing

/// Every `BundleError` case has its own stable, data-free code, named after the case, and no
/// message names a command-line flag.
@Suite("BundleError codes")
struct BundleErrorCodeTests {
    static let samples: [(BundleError, String)] = [
        (.io(path: "p", detail: "d"), "io"), (.malformed(source: "s", detail: "d"), "malformed"),
        (.unsafeEntry(source: "s", entry: "e", detail: "d"), "unsafeEntry"), (.verificationFailed(source: "s", detail: "d"), "verificationFailed"),
        (.rollback(name: "n", version: 1, accepted: 2, floor: "f"), "rollback"), (.versionReused(name: "n", version: 1, floor: "f"), "versionReused"),
        (.wrongName(expected: "a", found: "b", reason: "r"), "wrongName"), (.expired(name: "n", expires: "e", now: "n"), "expired"),
        (.changedAtRest(folder: "f", problems: ["p"]), "changedAtRest"), (.invalidArgument(detail: "d"), "invalidArgument"),
        (.outputExists(path: "p"), "outputExists"),
    ]

    @Test("one code per case, named after it, in the bundle domain; messages name no flag")
    func codes() {
        expectStableCodes(Self.samples, domain: "bundle")
    }
}
