import Crypto
import CryptoExtras
import Foundation
import SignetCore

/// An age passphrase recipient (age-encryption.org/v1, `scrypt`): the file key is wrapped under
/// a key that scrypt derives from the passphrase and a fresh salt.
///
/// The stanza is `-> scrypt <salt> <logN>`, with a 16-byte salt and the base-two logarithm of
/// the work factor in decimal. A passphrase stanza must be a file's only stanza, which
/// ``isPassphrase`` tells the encryptor.
///
/// scrypt here uses r = 8 and p = 1, as age does, so it needs 2^`logN` KiB of memory
/// (128 · r · N bytes): 256 MiB at age's default of 18.
public struct ScryptRecipient: AgeRecipient {
    /// age's default work factor, 2^18: about a second on a current machine, 256 MiB of memory.
    public static let defaultLogN = 18
    /// The work factors accepted, as age's `SetWorkFactor` accepts them.
    public static let supportedLogN: ClosedRange<Int> = 1...30

    /// The base-two logarithm of the scrypt work factor written into the stanza.
    public let logN: Int
    private let passphrase: SecretBytes

    /// A recipient for `passphrase` with work factor 2^`logN`.
    ///
    /// Files made with a `logN` above ``ScryptIdentity/defaultMaximumLogN`` open only for an
    /// identity given a higher bound.
    ///
    /// - Throws: ``AgeError/invalidArgument(detail:)`` for an empty passphrase (age refuses one
    ///   too) or a `logN` outside ``supportedLogN``.
    public init(passphrase: SecretBytes, logN: Int = ScryptRecipient.defaultLogN) throws {
        guard !passphrase.isEmpty else { throw AgeError.invalidArgument(detail: "the passphrase is empty") }
        guard Self.supportedLogN.contains(logN) else {
            throw AgeError.invalidArgument(
                detail: "the scrypt work factor must be from 2^\(Self.supportedLogN.lowerBound) to 2^\(Self.supportedLogN.upperBound), not 2^\(logN)")
        }
        self.passphrase = passphrase
        self.logN = logN
    }

    /// Always true: a passphrase stanza must be a file's only stanza.
    public var isPassphrase: Bool { true }

    /// Wraps `fileKey` in an `scrypt` stanza with a fresh 16-byte salt.
    ///
    /// - Throws: ``AgeError/io(path:detail:)`` when scrypt cannot run (its memory cannot be had).
    public func wrap(fileKey: SecretBytes) throws -> [AgeStanza] {
        let salt = RandomBytes.make(ScryptWrap.saltCount)
        guard let wrapKey = ScryptWrap.wrapKey(passphrase: passphrase, salt: salt, logN: logN) else {
            throw ScryptWrap.failure(source: "the passphrase", logN: logN)
        }
        let body = try FileKeyWrap.seal(fileKey, with: wrapKey)
        return [AgeStanza(type: ScryptWrap.stanzaType, arguments: [Base64.encodeUnpadded(salt), String(logN)], body: body)]
    }
}

/// An age passphrase identity: opens a file whose only stanza is an `scrypt` stanza made with
/// the same passphrase, if its work factor is within ``maximumLogN``.
///
/// The bound exists because the work factor comes from the file: without one, a hostile file
/// could ask for any amount of memory and time. It is checked before scrypt runs.
public struct ScryptIdentity: AgeIdentity {
    /// The default bound on the work factor, 2^20: 1 GiB of memory and a few seconds.
    ///
    /// age's own default is 2^22, which costs 4 GiB of memory (scrypt with r = 8 needs
    /// 2^logN KiB), more than many machines (and CI runners) can give; 2^20 still opens
    /// everything age and rage write by default (2^18) with two steps of headroom. A file made
    /// with a higher work factor opens with an identity given a higher ``maximumLogN``.
    public static let defaultMaximumLogN = 20

    /// The highest work factor, as a base-two logarithm, this identity runs scrypt for.
    public let maximumLogN: Int
    private let passphrase: SecretBytes

    /// An identity for `passphrase` that refuses work factors above 2^`maximumLogN`
    /// (clamped to ``ScryptRecipient/supportedLogN``).
    public init(passphrase: SecretBytes, maximumLogN: Int = ScryptIdentity.defaultMaximumLogN) {
        self.passphrase = passphrase
        self.maximumLogN = min(max(maximumLogN, ScryptRecipient.supportedLogN.lowerBound), ScryptRecipient.supportedLogN.upperBound)
    }

    /// The file key from the file's `scrypt` stanza, or nil when the file has none (it is not
    /// passphrase-encrypted).
    ///
    /// Everything is checked before scrypt runs: the stanza is the file's only one; it has
    /// exactly two arguments after its type, a salt that is the canonical unpadded base64 of 16
    /// bytes and a work factor in decimal without leading zeros (`^[1-9][0-9]*$`); its body is
    /// exactly 32 bytes; the work factor is within ``maximumLogN``.
    ///
    /// - Throws: ``AgeError/malformedHeader(source:detail:)`` when a check fails;
    ///   ``AgeError/workFactorTooHigh(source:logN:maximum:)`` above the bound;
    ///   ``AgeError/wrongPassphrase(source:)`` when the body does not open (an empty passphrase
    ///   never opens one: age refuses to encrypt with it); ``AgeError/io(path:detail:)`` when
    ///   scrypt cannot run.
    public func unwrap(stanzas: [AgeStanza], source: String) throws -> SecretBytes? {
        guard let stanza = stanzas.first(where: { $0.type == ScryptWrap.stanzaType }) else { return nil }
        func malformed(_ detail: String) -> AgeError { .malformedHeader(source: source, detail: detail) }
        guard stanzas.count == 1 else {
            throw malformed("an scrypt stanza must be the only stanza of a file, and this file has \(stanzas.count)")
        }
        guard stanza.arguments.count == 2 else {
            throw malformed("an scrypt stanza has \(stanza.arguments.count) arguments after its type, not 2")
        }
        guard let salt = Base64.decodeUnpadded(stanza.arguments[0]), salt.count == ScryptWrap.saltCount else {
            throw malformed("the salt of an scrypt stanza is not the canonical unpadded base64 of \(ScryptWrap.saltCount) bytes")
        }
        let logNText = stanza.arguments[1]
        guard ScryptWrap.isCanonicalDecimal(logNText) else {
            throw malformed("the work factor of an scrypt stanza is not a decimal number without leading zeros")
        }
        guard stanza.body.count == FileKeyWrap.bodyCount else {
            throw malformed("the body of an scrypt stanza is \(stanza.body.count) bytes, not \(FileKeyWrap.bodyCount)")
        }
        // Too many digits for an Int is certainly too high.
        let logN = Int(logNText) ?? Int.max
        guard logN <= maximumLogN else {
            throw AgeError.workFactorTooHigh(source: source, logN: logN, maximum: maximumLogN)
        }
        guard !passphrase.isEmpty else { throw AgeError.wrongPassphrase(source: source) }
        guard let wrapKey = ScryptWrap.wrapKey(passphrase: passphrase, salt: salt, logN: logN) else {
            throw ScryptWrap.failure(source: source, logN: logN)
        }
        guard let fileKey = FileKeyWrap.open(stanza.body, with: wrapKey) else {
            throw AgeError.wrongPassphrase(source: source)
        }
        return fileKey
    }
}

/// What the scrypt recipient and identity share.
enum ScryptWrap {
    /// The stanza type.
    static let stanzaType = "scrypt"
    /// The size of the salt in a stanza.
    static let saltCount = 16
    /// Prefixed to the stanza's salt to make scrypt's salt.
    private static let label = Array("age-encryption.org/v1/scrypt".utf8)

    /// scrypt(passphrase, label ‖ salt, N = 2^logN, r = 8, p = 1) as a 32-byte key, or nil when
    /// scrypt fails (it could not have its memory).
    static func wrapKey(passphrase: SecretBytes, salt: [UInt8], logN: Int) -> SymmetricKey? {
        let scryptSalt = label + salt
        do {
            // swift-crypto 4.5.2 ignores `maxMemory` and budgets 128 · N · r · p bytes plus a
            // page, which covers what BoringSSL needs at r = 8, p = 1.
            return try passphrase.withUnsafeBytes { bytes in
                try KDF.Scrypt.deriveKey(
                    from: bytes, salt: scryptSalt, outputByteCount: 32, rounds: 1 << logN, blockSize: 8, parallelism: 1)
            }
        } catch {
            return nil
        }
    }

    /// The error when scrypt cannot run at 2^`logN`, which needs 2^`logN` KiB of memory.
    static func failure(source: String, logN: Int) -> AgeError {
        let memory = logN >= 10 ? "\(1 << (logN - 10)) MiB" : "\(1 << logN) KiB"
        return .io(path: source, detail: "scrypt with work factor 2^\(logN) could not run (it needs \(memory) of memory)")
    }

    /// Whether `text` is `^[1-9][0-9]*$`.
    static func isCanonicalDecimal(_ text: String) -> Bool {
        let digits = Array(text.utf8)
        guard let first = digits.first, (UInt8(ascii: "1")...UInt8(ascii: "9")).contains(first) else { return false }
        return digits.dropFirst().allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }
}
