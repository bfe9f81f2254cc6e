import Foundation
import SignetCore
@testable import SignetVault

/// Cheap scrypt for tests: the cost is not what is being tested.
let testKDF = VaultKDFParameters(logN: 10)

func secret(_ text: String) -> SecretBytes { SecretBytes(Array(text.utf8)) }

func passphrase(_ text: String = "correct horse battery staple") -> VaultCredentials {
    VaultCredentials(passphrase: secret(text))
}
