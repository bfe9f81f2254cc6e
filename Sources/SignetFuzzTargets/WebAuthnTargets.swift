import Foundation
import SignetWebAuthn

/// One-time codes' inputs (SignetWebAuthn): `otpauth://` URIs and base32 secrets.
enum WebAuthnTargets {
    static let all: TargetList = [
        ("otpauth-uri", { WebAuthnTargets.otpauthURI($0) }),
    ]

    /// `OTPAuthURI(parsing:)` on the input as text, and `Base32.decode` and
    /// `RecoveryCodes.normalise` on it. Invariants: a URI read is written back to one that reads
    /// the same; base32 read is written back to the same bytes; a normalised code is a fixed point.
    static func otpauthURI(_ bytes: [UInt8]) {
        guard let text = String(validating: bytes, as: UTF8.self) else { return }
        if let code = RecoveryCodes.normalise(text) {
            Fuzz.require(RecoveryCodes.normalise(code) == code, "otpauth-uri", "a normalised recovery code normalises to another")
        }
        if let decoded = Base32.decode(text) {
            Fuzz.require(Base32.decode(Base32.encode(decoded)) == decoded, "otpauth-uri", "base32 does not read back what it wrote")
        }
        guard let uri = try? OTPAuthURI(parsing: text) else { return }
        guard let again = try? OTPAuthURI(parsing: uri.uri) else {
            return Fuzz.require(false, "otpauth-uri", "a URI it read writes one it cannot read: \(uri.uri)")
        }
        Fuzz.require(
            again.account == uri.account && again.issuer == uri.issuer && again.totp.secret.bytes == uri.totp.secret.bytes
                && again.totp.algorithm == uri.totp.algorithm && again.totp.digits == uri.totp.digits && again.totp.period == uri.totp.period,
            "otpauth-uri", "a URI read and written reads differently")
    }
}
