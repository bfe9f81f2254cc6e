import Foundation
import SignetCore
import SignetTestSupport
import SignetX509
import Testing
import X509

/// A scratch folder with openssl at hand, for the X.509 tests.
struct OpenSSLBox {
    let folder: TemporaryFolder

    init() throws { folder = try TemporaryFolder(prefix: "signet-x509") }

    func path(_ name: String) -> String { folder.file(name) }

    /// Runs openssl in the folder; requires exit 0.
    @discardableResult
    func openssl(_ arguments: String...) throws -> RunResult {
        let result = try ProcessRunner.run("/usr/bin/env", ["openssl"] + arguments, in: folder.url)
        #expect(result.status == 0, "openssl \(arguments.joined(separator: " ")): \(result)")
        return result
    }

    /// Runs openssl in the folder and returns the result, whatever the status.
    func opensslStatus(_ arguments: String...) throws -> RunResult {
        try ProcessRunner.run("/usr/bin/env", ["openssl"] + arguments, in: folder.url)
    }

    /// Writes bytes to `name`.
    @discardableResult
    func write(_ name: String, _ bytes: [UInt8]) throws -> String { try folder.write(name, bytes) }

    func read(_ name: String) throws -> [UInt8] { try folder.read(name) }

    /// A fresh software signer of `type`, its key also written to `name` as PKCS#8 PEM.
    func signer(_ type: KeyGenerationType, writingTo name: String? = nil) throws -> SoftwareSigner {
        let key = try PrivateKey.generate(type)
        if let name { try write(name, try key.encoded(as: .pem)) }
        return try SoftwareSigner(key: key, algorithm: SignerPrivateKey.preferredAlgorithm(for: key.kind))
    }
}

