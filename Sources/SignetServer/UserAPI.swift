import SignetAPI
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import NIOPosix
import SignetCore

/// Session tokens: 32 random bytes, `sgt_` and base64url; the database keeps only SHA-256.
enum SessionToken {
    static let prefix = UserAPI.sessionTokenPrefix

    static func make() -> String { prefix + Base64.encodeURL(RandomBytes.make(32)) }

    static func hash(_ token: String) -> String { DigestAlgorithm.sha256.hash(Array(token.utf8)).hex }

    /// The token of `Authorization: Bearer …`, or nil.
    static func bearer(in fields: HTTPFields) -> String? {
        guard let value = fields[.authorization] else { return nil }
        let parts = value.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        guard token.hasPrefix(prefix), token.utf8.count <= 100 else { return nil }
        return token
    }
}
