import SignetCore
import SignetVault
import SignetTestSupport
import Testing

/// Every `VaultError` case has its own stable, data-free code, named after the case, and no
/// message names a command-line flag.
@Suite("VaultError codes")
struct VaultErrorCodeTests {
    static let samples: [(VaultError, String)] = [
        (.itemNotFound(service: "s", account: "a"), "itemNotFound"), (.duplicateItem(service: "s", account: "a"), "duplicateItem"),
        (.wrongKind(service: "s", account: "a", expected: .password, found: .privateKey), "wrongKind"), (.locked(path: "p"), "locked"),
        (.wrongPassphrase(path: "p"), "wrongPassphrase"), (.credentialsRequired(path: "p", detail: "d"), "credentialsRequired"),
        (.notAVault(path: "p", detail: "d"), "notAVault"), (.corrupted(path: "p", detail: "d"), "corrupted"), (.vaultExists(path: "p"), "vaultExists"),
        (.vaultMissing(path: "p"), "vaultMissing"), (.busy(path: "p"), "busy"), (.io(path: "p", detail: "d"), "io"),
        (.invalidArgument(detail: "d"), "invalidArgument"),
    ]

    @Test("one code per case, named after it, in the vault domain; messages name no flag")
    func codes() {
        expectStableCodes(Self.samples, domain: "vault")
    }
}
