extension AdminAPI.AttestationSettings {
    /// A field that breaks a rule: its name and the rule, as a refusal states them.
    public struct Violation: Error, Sendable, Equatable {
        public var field: String
        public var rule: String
    }

    /// The most signing-certificate digests an app may list.
    public static let maximumSigners = 16

    /// The settings with every rule checked and the defaults filled in (App Attest's
    /// environments: production; Android's minimum security: `tee`; `required`: false), the
    /// signer digests as lower-case hex without colons, environments sorted.
    /// - Throws: ``Violation`` naming the first field that breaks a rule.
    public func normalized() throws(Violation) -> Self {
        guard appleAppId != nil || androidPackage != nil else {
            throw Violation(field: "attestation", rule: "names no platform: give appleAppId, androidPackage or both")
        }
        var result = Self(required: required ?? false)
        if let appID = appleAppId {
            guard Self.isAppID(appID) else {
                throw Violation(field: "appleAppId", rule: "must be TEAMID.BUNDLEID: a 10-character team id of A-Z 0-9, a dot, the bundle id")
            }
            let environments = appleEnvironments ?? ["production"]
            guard !environments.isEmpty, environments.allSatisfy(["production", "development"].contains) else {
                throw Violation(field: "appleEnvironments", rule: "must list production, development or both")
            }
            result.appleAppId = appID
            result.appleEnvironments = Array(Set(environments)).sorted(by: >)
        } else if appleEnvironments != nil {
            throw Violation(field: "appleEnvironments", rule: "needs appleAppId")
        }
        if let package = androidPackage {
            guard Self.isPackageName(package) else {
                throw Violation(field: "androidPackage", rule: "must be an Android package name (segments of letters, digits and _, joined by dots)")
            }
            guard let signers = androidSigners, (1...Self.maximumSigners).contains(signers.count) else {
                throw Violation(field: "androidSigners", rule: "must list 1 to \(Self.maximumSigners) SHA-256 digests of the app's signing certificates")
            }
            result.androidPackage = package
            result.androidSigners = try signers.map { text throws(Violation) in
                guard let digest = Self.digest(text) else {
                    throw Violation(field: "androidSigners", rule: "each must be a SHA-256 in hex, 64 digits (colons allowed, as keytool prints them)")
                }
                return digest
            }
            let level = androidMinimumSecurity ?? "tee"
            guard ["tee", "strongbox"].contains(level) else { throw Violation(field: "androidMinimumSecurity", rule: "must be tee or strongbox") }
            result.androidMinimumSecurity = level
        } else if androidSigners != nil || androidMinimumSecurity != nil {
            throw Violation(field: androidSigners != nil ? "androidSigners" : "androidMinimumSecurity", rule: "needs androidPackage")
        }
        return result
    }

    /// `TEAMID.BUNDLEID`: ten of A–Z 0–9, a dot, and a bundle id of A–Z a–z 0–9 . - (at most 155),
    /// in labels that are not empty.
    static func isAppID(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count >= 12, bytes.count <= 166, bytes[10] == UInt8(ascii: ".") else { return false }
        let team = bytes[..<10], bundle = bytes[11...]
        return team.allSatisfy { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
            && bundle.allSatisfy { AdminAPI.isNameByte($0) && $0 != UInt8(ascii: "_") }
            && bundle.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).allSatisfy { !$0.isEmpty }
    }

    /// Segments of letters, digits and `_` starting with a letter, joined by dots; at most 255 bytes.
    static func isPackageName(_ text: String) -> Bool {
        guard !text.isEmpty, text.utf8.count <= 255 else { return false }
        return text.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { segment in
            guard let first = segment.utf8.first, first.isASCIILetter else { return false }
            return segment.utf8.allSatisfy { $0.isASCIILetter || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "_") }
        }
    }

    /// 64 hex digits, optionally in colon-separated pairs, as lower-case hex without colons.
    static func digest(_ text: String) -> String? {
        let plain = text.contains(":") ? text.split(separator: ":", omittingEmptySubsequences: false).joined() : text
        if text.contains(":"), text.split(separator: ":", omittingEmptySubsequences: false).contains(where: { $0.count != 2 }) { return nil }
        guard plain.utf8.count == 64, plain.utf8.allSatisfy({ $0.isHexDigit }) else { return nil }
        return plain.lowercased()
    }
}

extension UInt8 {
    fileprivate var isASCIILetter: Bool { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(self | 0x20) }
    fileprivate var isHexDigit: Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(self | 0x20)
    }
}
