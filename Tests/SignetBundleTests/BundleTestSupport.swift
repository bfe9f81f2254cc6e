import Foundation
import SignetCore
import Testing
@testable import SignetBundle

/// A fresh folder per test, removed afterwards.
final class Scratch: @unchecked Sendable {
    let path: String

    init() throws {
        path = FileManager.default.temporaryDirectory.path + "/signet-bundle-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func file(_ name: String) -> String { path + "/" + name }

    @discardableResult
    func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let target = file(name)
        try FileManager.default.createDirectory(atPath: AtomicFile.parentFolder(of: target), withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: target))
        return target
    }

    func read(_ name: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: file(name)))) }
}

enum BundleTest {
    static let ed25519 = try! PrivateKey.generate(.ed25519)
    static let p256 = try! PrivateKey.generate(.p256)
    static let other = try! PrivateKey.generate(.ed25519)

    static func signer(_ key: PrivateKey) -> any Signer { try! SoftwareSigner(key: key) }

    static func trusted(_ keys: PrivateKey...) -> [TrustedKey] { keys.map { try! TrustedKey(publicKey: $0.publicKey) } }

    /// Runs `body`, requires a ``BundleError`` and returns it.
    static func thrown<R>(sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> R) throws -> BundleError {
        try #require(throws: BundleError.self, sourceLocation: sourceLocation) { try body() }
    }

    static func thrownAsync<R>(sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> R) async throws -> BundleError {
        try await #require(throws: BundleError.self, sourceLocation: sourceLocation) { try await body() }
    }

    /// A folder of a few files and a bundle of it signed by `signers`.
    static func makeBundle(
        in scratch: Scratch, name: String = "app", version: Int64 = 1, expires: Date? = nil, signers: [PrivateKey] = [ed25519],
        output: String = "out.bundle"
    ) async throws -> String {
        try scratch.write("src/readme.txt", Array("hello\n".utf8))
        try scratch.write("src/data/blob.bin", (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try scratch.write("src/empty", [])
        _ = try await BundleCreator(name: name, version: version, expires: expires).create(
            inputs: [scratch.file("src")], signers: signers.map(signer), output: scratch.file(output), overwrite: true)
        return scratch.file(output)
    }
}
