import Foundation
import SignetCore
@testable import SignetVault

/// A fresh folder per test, removed afterwards.
struct TemporaryFolder: ~Copyable {
    let path: String

    init() throws {
        let base = FileManager.default.temporaryDirectory.path
        path = "\(base)/signet-vault-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// Cheap scrypt for tests: the cost is not what is being tested.
let testKDF = VaultKDFParameters(logN: 10)

func secret(_ text: String) -> SecretBytes { SecretBytes(Array(text.utf8)) }

func passphrase(_ text: String = "correct horse battery staple") -> VaultCredentials {
    VaultCredentials(passphrase: secret(text))
}
