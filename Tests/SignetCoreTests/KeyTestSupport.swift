import Foundation
import SignetCore
import Testing

/// Helpers shared by the key, signature and atomic-file tests.
enum KeyTestSupport {
    /// The key types generated in tests: every type except RSA-1024 (weak, refused by default)
    /// and RSA-3072/4096 (slow to generate, and no different in format from RSA-2048).
    static let fastTypes: [KeyGenerationType] = [.rsa2048, .p256, .p384, .ed25519]

    /// The kind a generated key of `type` has, known without generating one.
    static func kind(of type: KeyGenerationType) -> KeyKind {
        switch type {
        case .rsa1024: return .rsa(bits: 1024)
        case .rsa2048: return .rsa(bits: 2048)
        case .rsa3072: return .rsa(bits: 3072)
        case .rsa4096: return .rsa(bits: 4096)
        case .p256: return .p256
        case .p384: return .p384
        case .ed25519: return .ed25519
        }
    }

    /// A fixed message for signatures.
    static let message: [UInt8] = Array("Signet test message: the quick brown fox jumps over the lazy dog.".utf8)

    /// `bytes` with the lowest bit of the byte at `index` flipped.
    static func flipped(_ bytes: [UInt8], at index: Int) -> [UInt8] {
        var copy = bytes
        copy[index] ^= 0x01
        return copy
    }

    static func secret(_ text: String) -> SecretBytes { SecretBytes(Array(text.utf8)) }

    // MARK: Fixtures in Vectors/keys

    /// The URL of `Vectors/keys/<name>` in the test bundle.
    static func fixtureURL(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> URL {
        let dot = name.lastIndex(of: ".")
        let base = dot.map { String(name[..<$0]) } ?? name
        let ext = dot.map { String(name[name.index(after: $0)...]) }
        if let url = Bundle.module.url(forResource: base, withExtension: ext, subdirectory: "Vectors/keys") {
            return url
        }
        // Fallback for Foundation implementations that resolve subdirectories differently.
        let candidate = try #require(
            Bundle.module.resourceURL?.appendingPathComponent("Vectors/keys/\(name)"), "no resource URL",
            sourceLocation: sourceLocation)
        try #require(
            FileManager.default.fileExists(atPath: candidate.path), "missing fixture Vectors/keys/\(name)",
            sourceLocation: sourceLocation)
        return candidate
    }

    static func fixturePath(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        try fixtureURL(name, sourceLocation: sourceLocation).path
    }

    static func fixture(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [UInt8] {
        Array(try Data(contentsOf: fixtureURL(name, sourceLocation: sourceLocation)))
    }

    static func fixtureText(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        String(decoding: try fixture(name, sourceLocation: sourceLocation), as: UTF8.self)
    }

    // MARK: Errors

    /// Runs `body`, requires it to throw a ``SignetCoreError`` and returns that error.
    static func thrown<R>(
        sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> R
    ) throws -> SignetCoreError {
        try #require(throws: SignetCoreError.self, sourceLocation: sourceLocation) { try body() }
    }

    /// Runs `body`, requires it to throw a ``SignetCoreError`` and returns that error.
    static func thrownAsync<R>(
        sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> R
    ) async throws -> SignetCoreError {
        try await #require(throws: SignetCoreError.self, sourceLocation: sourceLocation) { try await body() }
    }

    /// The error `KeyDecoder.decode(_:source:policy:)` throws for `bytes`.
    static func decodeError(
        _ bytes: [UInt8], source: String, policy: KeyPolicy = .strict, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> SignetCoreError {
        try thrown(sourceLocation: sourceLocation) { try KeyDecoder.decode(bytes, source: source, policy: policy) }
    }

    /// The error `KeyDecoder.decode(_:source:policy:)` throws for the UTF-8 of `text`.
    static func decodeError(
        text: String, source: String, policy: KeyPolicy = .strict, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> SignetCoreError {
        try decodeError(Array(text.utf8), source: source, policy: policy, sourceLocation: sourceLocation)
    }

    /// Checks the case of `error` and that its description mentions every fragment.
    static func check(
        _ error: SignetCoreError, is expected: SignetCoreError.Case, mentioning fragments: String...,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(error.errorCase == expected, "got \(error.errorCase): \(error)", sourceLocation: sourceLocation)
        for fragment in fragments {
            #expect(
                error.description.contains(fragment), "\"\(error.description)\" does not mention \"\(fragment)\"",
                sourceLocation: sourceLocation)
        }
    }
}

extension SignetCoreError {
    /// The case of an error without its payload, so tests can compare cases with `==`.
    enum Case: String, Sendable {
        case io, outputExists, malformed, unsupported, tooLarge, publicKeyWherePrivateNeeded, algorithmMismatch
        case weakKey, wrongPassphrase, passphraseUnavailable, signatureInvalid, legacySignatureNotAllowed, mismatch, invalidArgument
        case cryptoFailure
    }

    var errorCase: Case {
        switch self {
        case .io: return .io
        case .outputExists: return .outputExists
        case .malformed: return .malformed
        case .unsupported: return .unsupported
        case .tooLarge: return .tooLarge
        case .publicKeyWherePrivateNeeded: return .publicKeyWherePrivateNeeded
        case .algorithmMismatch: return .algorithmMismatch
        case .weakKey: return .weakKey
        case .wrongPassphrase: return .wrongPassphrase
        case .passphraseUnavailable: return .passphraseUnavailable
        case .signatureInvalid: return .signatureInvalid
        case .legacySignatureNotAllowed: return .legacySignatureNotAllowed
        case .mismatch: return .mismatch
        case .invalidArgument: return .invalidArgument
        case .cryptoFailure: return .cryptoFailure
        }
    }
}

extension DecodedKey {
    /// The private key, when that is what was decoded.
    var privateKeyValue: PrivateKey? {
        if case .privateKey(let key) = self { return key }
        return nil
    }

    /// The public key, when that is what was decoded.
    var publicKeyValue: PublicKey? {
        if case .publicKey(let key) = self { return key }
        return nil
    }

    /// The encrypted private key, when that is what was decoded.
    var encryptedValue: EncryptedPrivateKey? {
        if case .encryptedPrivateKey(let key) = self { return key }
        return nil
    }
}

/// Keys generated once for the whole test run, for tests that only need some key of a type.
enum SharedTestKeys {
    private static let keys: [KeyGenerationType: PrivateKey] = Dictionary(
        uniqueKeysWithValues: KeyTestSupport.fastTypes.map { ($0, try! PrivateKey.generate($0)) })

    static func key(_ type: KeyGenerationType) -> PrivateKey { keys[type]! }
}

/// A fresh folder under the system's temporary folder. Call ``remove()`` in a `defer`.
struct KeyTestFolder {
    let path: String

    init() throws {
        path = FileManager.default.temporaryDirectory
            .appendingPathComponent("signet-core-tests-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }

    /// The path of `name` inside the folder.
    func file(_ name: String) -> String { path + "/" + name }

    /// The names in the folder, hidden ones included, sorted.
    func contents() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: path).sorted()
    }

    @discardableResult
    func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        try Data(bytes).write(to: URL(fileURLWithPath: file(name)))
        return file(name)
    }

    func read(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: file(name))))
    }
}
