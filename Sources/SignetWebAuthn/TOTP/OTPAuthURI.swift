import Foundation
import SignetCore

/// The `otpauth://totp/…` URI an authenticator app scans from a QR code (Google Authenticator's
/// "Key Uri Format", which every app follows): the label (`Issuer:account`), the secret in
/// base32, and the algorithm, digits and period when they are not the defaults' only by accident.
///
/// `otpauth://totp/Signet:ada%40example.com?secret=JBSWY3DPEHPK3PXP&issuer=Signet&algorithm=SHA1&digits=6&period=30`
public struct OTPAuthURI: Sendable {
    /// Who the account is at (shown by the app above the code).
    public var issuer: String?
    /// The account's name (an e-mail address).
    public var account: String
    /// The generator: secret, algorithm, digits, period.
    public var totp: TOTP

    /// The longest URI read, and the longest issuer and account.
    public static let maximumLength = 4096
    public static let maximumNameBytes = 256

    public init(totp: TOTP, account: String, issuer: String? = nil) {
        self.totp = totp
        self.account = account
        self.issuer = issuer
    }

    /// The URI, every parameter written out (apps ignore none of them).
    public var uri: String {
        let label = (issuer.map { Self.escaped($0) + ":" } ?? "") + Self.escaped(account)
        var query = ["secret=" + totp.secret.withUnsafeBytes { Base32.encode(Array($0)) }]
        if let issuer { query.append("issuer=" + Self.escaped(issuer)) }
        query += ["algorithm=" + totp.algorithm.rawValue, "digits=\(totp.digits)", "period=\(totp.period.components.seconds)"]
        return "otpauth://totp/" + label + "?" + query.joined(separator: "&")
    }

    /// Reads an `otpauth://totp/` URI: the label percent-decoded and split at its first `:`,
    /// `secret` required (base32, either case, padding optional), `issuer` (equal to the label's
    /// when both are given), `algorithm` (`SHA1`, `SHA256`, `SHA512`), `digits` (6, 8) and
    /// `period` (seconds); other parameters (`image`, …) ignored, none given twice.
    /// - Throws: ``WebAuthnError/malformed(source:detail:)`` naming what is wrong;
    ///   ``WebAuthnError/invalidArgument(detail:)`` for a secret, digits or period ``TOTP`` does not take.
    public init(parsing text: String) throws {
        func malformed(_ detail: String) -> WebAuthnError { .malformed(source: "the otpauth URI", detail: detail) }
        guard text.utf8.count <= Self.maximumLength else { throw malformed("it is over \(Self.maximumLength) bytes") }
        let prefix = "otpauth://"
        guard text.utf8.count > prefix.utf8.count, text.prefix(prefix.count).lowercased() == prefix else {
            throw malformed("it does not start with otpauth://")
        }
        let rest = text.dropFirst(prefix.count)
        guard let slash = rest.firstIndex(of: "/") else { throw malformed("it has no label (otpauth://totp/LABEL?secret=…)") }
        let type = rest[..<slash].lowercased()
        guard type == "totp" else {
            throw malformed(type == "hotp" ? "HOTP (counter-based) codes are not supported, only TOTP" : "the type is not totp")
        }
        let afterType = rest[rest.index(after: slash)...]
        let question = afterType.firstIndex(of: "?")
        // The issuer and the account are split before decoding: a colon inside either is
        // written %3A, the separator literally (or, by some writers, as the first %3A).
        let rawLabel = afterType[..<(question ?? afterType.endIndex)]
        let separator = rawLabel.firstRange(of: ":") ?? rawLabel.firstRange(of: "%3A") ?? rawLabel.firstRange(of: "%3a")
        var parameters: [String: String] = [:]
        if let question {
            for pair in afterType[afterType.index(after: question)...].split(separator: "&", omittingEmptySubsequences: true) {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = try Self.decoded(parts[0], "a parameter name").lowercased()
                guard parameters[name] == nil else { throw malformed("the parameter \(PrintableText.escaped(name, limit: 40)) is given twice") }
                parameters[name] = parts.count == 2 ? try Self.decoded(parts[1], "the parameter \(PrintableText.escaped(name, limit: 40))") : ""
            }
        }
        var labelIssuer: String?
        var account = try Self.decoded(rawLabel, "the label")
        if let separator {
            labelIssuer = try Self.decoded(rawLabel[..<separator.lowerBound], "the label's issuer")
            account = try Self.decoded(rawLabel[separator.upperBound...], "the label's account").trimmingCharacters(in: .whitespaces)
        }
        guard !account.isEmpty else { throw malformed("the label names no account") }
        if let given = parameters["issuer"], let labelIssuer, given != labelIssuer {
            throw malformed("the issuer parameter (\(PrintableText.escaped(given, limit: 60))) is not the label's (\(PrintableText.escaped(labelIssuer, limit: 60)))")
        }
        guard let secretText = parameters["secret"], !secretText.isEmpty else { throw malformed("it has no secret") }
        guard let secret = Base32.decode(secretText) else { throw malformed("the secret is not base32 (A-Z, 2-7)") }
        let algorithmName = parameters["algorithm"]?.uppercased() ?? "SHA1"
        guard let algorithm = TOTP.Algorithm(rawValue: algorithmName) else {
            throw malformed("the algorithm \(PrintableText.escaped(algorithmName, limit: 20)) is not SHA1, SHA256 or SHA512")
        }
        guard let digits = Int(parameters["digits"] ?? "6") else { throw malformed("digits is not a number") }
        guard let period = Int64(parameters["period"] ?? "30") else { throw malformed("period is not a number") }
        var secretBytes = secret
        totp = try TOTP(secret: SecretBytes(consuming: &secretBytes), algorithm: algorithm, digits: digits, period: .seconds(period))
        self.account = account
        issuer = parameters["issuer"] ?? labelIssuer
    }

    /// Percent-decoded UTF-8 without control characters, at most ``maximumNameBytes``.
    static func decoded(_ text: Substring, _ what: String) throws -> String {
        guard let value = String(text).removingPercentEncoding else {
            throw WebAuthnError.malformed(source: "the otpauth URI", detail: "\(what) is not valid percent-encoding")
        }
        guard value.utf8.count <= maximumNameBytes, !value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw WebAuthnError.malformed(source: "the otpauth URI", detail: "\(what) is over \(maximumNameBytes) bytes or holds a control character")
        }
        return value
    }

    /// Percent-encoded for a label or a parameter: unreserved characters and `@` stay.
    static func escaped(_ text: String) -> String {
        let allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~@")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}
