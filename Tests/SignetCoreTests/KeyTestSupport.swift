import Foundation
import SignetCore
import SignetTestSupport
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

    static func secret(_ text: String) -> SecretBytes { SecretBytes(Array(text.utf8)) }

    // MARK: Fixtures in Vectors/keys

    /// The URL of `Vectors/keys/<name>` in the test bundle.
    static func fixtureURL(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> URL {
        try TestVectors.url("keys/\(name)", in: .module)
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
        try SignetTestSupport.thrown(SignetCoreError.self, sourceLocation: sourceLocation, body)
    }

    /// Runs `body`, requires it to throw a ``SignetCoreError`` and returns that error.
    static func thrownAsync<R>(
        sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> R
    ) async throws -> SignetCoreError {
        try await SignetTestSupport.thrownAsync(SignetCoreError.self, sourceLocation: sourceLocation, body)
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
        _ error: SignetCoreError, is expected: SignetErrorCode<SignetCoreError>, mentioning fragments: String...,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        expectError(error, is: expected, mentioning: fragments, sourceLocation: sourceLocation)
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
