import Foundation
import SignetCore
import SignetTestSupport
import Testing
@testable import SignetBundle

enum BundleTest {
    static let ed25519 = try! PrivateKey.generate(.ed25519)
    static let p256 = try! PrivateKey.generate(.p256)
    static let other = try! PrivateKey.generate(.ed25519)

    static func signer(_ key: PrivateKey) -> any Signer { try! SoftwareSigner(key: key) }

    static func trusted(_ keys: PrivateKey...) -> [TrustedKey] { keys.map { try! TrustedKey(publicKey: $0.publicKey) } }

    /// Runs `body`, requires a ``BundleError`` and returns it.
    static func thrown<R>(sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> R) throws -> BundleError {
        try SignetTestSupport.thrown(BundleError.self, sourceLocation: sourceLocation, body)
    }

    /// Runs the asynchronous `body`, requires a ``BundleError`` and returns it.
    static func thrownAsync<R>(sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> R) async throws -> BundleError {
        try await SignetTestSupport.thrownAsync(BundleError.self, sourceLocation: sourceLocation, body)
    }

    /// A folder of a few files and a bundle of it signed by `signers`.
    static func makeBundle(
        in scratch: TemporaryFolder, name: String = "app", version: Int64 = 1, expires: Date? = nil, signers: [PrivateKey] = [ed25519],
        output: String = "out.bundle"
    ) async throws -> String {
        try scratch.write("src/readme.txt", Array("hello\n".utf8))
        try scratch.write("src/data/blob.bin", (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try scratch.write("src/empty", [UInt8]())
        _ = try await BundleCreator(name: name, version: version, expires: expires).create(
            inputs: [scratch.file("src")], signers: signers.map(signer), output: scratch.file(output), overwrite: true)
        return scratch.file(output)
    }
}
