import Foundation
import SignetCore

/// Gravatar avatar URLs (https://docs.gravatar.com/api/avatars/images/).
package enum Gravatar {
    /// The hash that identifies an address. Gravatar documents SHA-256 today; MD5 is the
    /// legacy form that older clients still send.
    package enum Hash: Sendable {
        /// SHA-256, the hash Gravatar documents today; the default.
        case sha256
        /// Legacy; MD5 is broken and only kept for old integrations.
        case legacyMD5
    }

    /// The hash of an e-mail address as Gravatar computes it: trimmed, lower-cased, hex.
    package static func hash(email: String, using hash: Hash = .sha256) -> String {
        let normalized = Array(email.trimmingCharacters(in: .whitespacesAndNewlines).lowercased().utf8)
        return (hash == .sha256 ? DigestAlgorithm.sha256 : .md5).hash(normalized).hex
    }

    /// The avatar URL for `email`.
    /// - Parameters:
    ///   - size: the edge in pixels (1…2048); nil leaves Gravatar's default (80).
    ///   - fallback: what to show when there is no avatar (`identicon`, `mp`, `404`, …).
    package static func url(email: String, size: Int? = nil, fallback: String? = nil, using hash: Hash = .sha256) throws -> String {
        var url = "https://gravatar.com/avatar/" + Self.hash(email: email, using: hash)
        var query: [String] = []
        if let size {
            guard (1...2048).contains(size) else { throw SignetCoreError.invalidArgument(detail: "Gravatar size must be 1 to 2048 pixels, not \(size)") }
            query.append("s=\(size)")
        }
        if let fallback {
            let allowed = fallback.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? fallback
            query.append("d=\(allowed)")
        }
        if !query.isEmpty { url += "?" + query.joined(separator: "&") }
        return url
    }
}
