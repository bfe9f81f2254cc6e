import Crypto
import Foundation
import SignetCore

/// Time-based one-time passwords (RFC 6238 over RFC 4226's HOTP): the codes authenticator apps
/// show, derived from a shared secret and the time.
///
/// ```swift
/// let totp = try TOTP(secret: TOTP.makeSecret())            // 20 random bytes, SHA-1, 6 digits, 30 s
/// let step = try totp.verify(code, at: Date(), after: lastAcceptedStep)   // store `step`: no code of it or before is taken again
/// ```
public struct TOTP: Sendable {
    /// The HMAC under the code. Authenticator apps honour SHA-1; RFC 6238 defines all three.
    public enum Algorithm: String, Sendable, CaseIterable {
        case sha1 = "SHA1", sha256 = "SHA256", sha512 = "SHA512"
    }

    /// The shared secret.
    public let secret: SecretBytes
    public let algorithm: Algorithm
    /// 6 or 8.
    public let digits: Int
    /// The time step, whole seconds (30 by default).
    public let period: Duration

    /// The shortest secret taken: RFC 4226 §4 requires 128 bits.
    public static let minimumSecretBytes = 16
    /// The longest secret taken.
    public static let maximumSecretBytes = 128

    /// A generator for `secret`.
    /// - Throws: ``WebAuthnError/invalidArgument(detail:)`` for a secret of fewer than 16 or more
    ///   than 128 bytes, digits other than 6 or 8, a period that is not 1 to 3600 whole seconds.
    public init(secret: SecretBytes, algorithm: Algorithm = .sha1, digits: Int = 6, period: Duration = .seconds(30)) throws {
        guard (Self.minimumSecretBytes...Self.maximumSecretBytes).contains(secret.count) else {
            throw WebAuthnError.invalidArgument(
                detail: "a TOTP secret must have \(Self.minimumSecretBytes) to \(Self.maximumSecretBytes) bytes, not \(secret.count)")
        }
        guard digits == 6 || digits == 8 else { throw WebAuthnError.invalidArgument(detail: "a TOTP code has 6 or 8 digits, not \(digits)") }
        guard period.components.attoseconds == 0, (1...3600).contains(period.components.seconds) else {
            throw WebAuthnError.invalidArgument(detail: "a TOTP period is 1 to 3600 whole seconds, not \(period)")
        }
        self.secret = secret
        self.algorithm = algorithm
        self.digits = digits
        self.period = period
    }

    /// A new random secret of `bytes` (20: 160 bits, RFC 4226's recommendation).
    public static func makeSecret(bytes: Int = 20) -> SecretBytes {
        var random = RandomBytes.make(bytes)
        return SecretBytes(consuming: &random)
    }

    /// The time step of `time`: whole periods since the Unix epoch (negative before it).
    public func step(at time: Date) -> Int64 {
        Int64((time.timeIntervalSince1970 / Double(period.components.seconds)).rounded(.down))
    }

    /// The code of time step `step`: HOTP (RFC 4226 §5.3) with the step as its counter.
    public func code(step: Int64) -> String {
        let counter = withUnsafeBytes(of: UInt64(bitPattern: step).bigEndian, Array.init)
        let mac = secret.withUnsafeBytes { bytes -> [UInt8] in
            let key = SymmetricKey(data: bytes)
            switch algorithm {
            case .sha1: return Array(HMAC<Insecure.SHA1>.authenticationCode(for: counter, using: key))
            case .sha256: return Array(HMAC<SHA256>.authenticationCode(for: counter, using: key))
            case .sha512: return Array(HMAC<SHA512>.authenticationCode(for: counter, using: key))
            }
        }
        let offset = Int(mac[mac.count - 1] & 0x0F)
        let binary = UInt32(mac[offset] & 0x7F) << 24 | UInt32(mac[offset + 1]) << 16 | UInt32(mac[offset + 2]) << 8 | UInt32(mac[offset + 3])
        let modulus: UInt32 = digits == 8 ? 100_000_000 : 1_000_000
        let value = String(binary % modulus)
        return String(repeating: "0", count: digits - value.count) + value
    }

    /// The code at `time`.
    public func code(at time: Date) -> String { code(step: step(at: time)) }

    /// Checks `code` against the steps of `time` and `skew` steps either side (RFC 6238 §5.2:
    /// one step absorbs a clock off by up to a period and the time a user takes to type), and
    /// refuses a step at or before `lastStep` (the last one accepted for this secret), so each
    /// code is taken once. Returns the step it matched: store it as the next `lastStep`.
    /// - Throws: ``WebAuthnError/malformed(source:detail:)`` when `code` is not `digits` ASCII
    ///   digits, ``WebAuthnError/codeReused(step:)``, ``WebAuthnError/codeMismatch(skew:)``.
    @discardableResult
    public func verify(_ code: String, at time: Date, skew: Int = 1, after lastStep: Int64? = nil) throws -> Int64 {
        let typed = Array(code.utf8)
        guard typed.count == digits, typed.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            throw WebAuthnError.malformed(source: "the one-time code", detail: "must be \(digits) digits")
        }
        let now = step(at: time)
        // Every step in the window is computed and compared, the newest match kept: the time
        // taken does not tell which step matched.
        var matched: Int64?
        for candidate in (now - Int64(max(0, skew)))...(now + Int64(max(0, skew))) where ConstantTime.equals(Array(self.code(step: candidate).utf8), typed) {
            matched = candidate
        }
        guard let matched else { throw WebAuthnError.codeMismatch(skew: max(0, skew)) }
        if let lastStep, matched <= lastStep { throw WebAuthnError.codeReused(step: matched) }
        return matched
    }
}
