import Foundation
import HTTPTypes
import SignetCore

/// The request-signing scheme mobile tutorials teach, kept byte-compatible but made as safe as
/// it can be: the string to sign is `METHOD&URL&BODY&TIMESTAMP`, HMAC-SHA512 under a shared
/// secret, sent base64 in a `Signature` field with the timestamp in its own field.
///
/// The tutorial's version leaves the timestamp outside the MAC (so it protects nothing) or
/// out altogether; here it is inside, and ``verify(_:url:body:)`` checks it against a window
/// and compares in constant time.
///
/// ## A weakness that cannot be fixed
///
/// `&` both separates the parts of the string to sign and the parameters of a query or a
/// form body, and nothing marks where the URL ends and the body begins. So the tail of a
/// query can move into a body (or back) without changing the MAC: a request signed for
/// `POST https://api/x?a=1&b=2` with body `c=3` carries a MAC that also verifies for
/// `POST https://api/x?a=1` with body `b=2&c=3`, because both strings to sign are
/// `POST&https://api/x?a=1&b=2&c=3&<timestamp>`. A party in the middle (or a proxy that
/// rewrites requests) can change what the server reads as query versus body. Fixing it would
/// change the string to sign and break every tutorial client, so it is not fixed. The
/// profile also has no nonce (a request can be replayed within the window) and needs the
/// secret on every device.
///
/// It is therefore never on by default anywhere in Signet, and the only way to make one is
/// ``init(secret:accepting:)``, which names the weakness. Prefer RFC 9421
/// (``HTTPMessageSigner`` / ``HTTPMessageVerifier``) for anything new: per-device keys, a
/// nonce against replay, and components that cannot trade bytes.
public struct LegacyHMACProfile: Sendable {
    /// The weaknesses a caller accepts by using the tutorial scheme.
    public enum KnownWeaknesses: Sendable {
        /// Bytes can move between the URL's query and the body without changing the MAC;
        /// requests can be replayed within the window; the secret lives on every device.
        case queryBodyAmbiguityAndReplay
    }

    /// The shared secret.
    public let secret: SecretBytes
    /// The field carrying the timestamp (Unix seconds). Default `X-Timestamp`.
    public var timestampField = HTTPField.Name("X-Timestamp")!
    /// The field carrying the base64 MAC. Default `Signature`.
    public var signatureField = HTTPField.Name.signature
    /// How far the timestamp may lie from now, either way. Default: 300 seconds (whole
    /// seconds: a fraction is dropped).
    public var window: Duration = .seconds(300)
    /// Where the current time comes from, for the timestamp and the window. Default: the
    /// system's clock.
    public var clock: WallClock = .system

    /// A profile for the tutorial scheme under `secret`. `accepting` must name
    /// ``KnownWeaknesses/queryBodyAmbiguityAndReplay``: the scheme cannot bind the query to
    /// the URL nor stop a replay within the window (see the type's documentation).
    public init(secret: SecretBytes, accepting weaknesses: KnownWeaknesses) {
        self.secret = secret
    }

    /// The exact bytes that are MACed: `METHOD&URL&BODY&TIMESTAMP`.
    public static func stringToSign(method: String, url: String, body: [UInt8], timestamp: Int64) -> [UInt8] {
        Array("\(method)&\(url)&".utf8) + body + Array("&\(timestamp)".utf8)
    }

    /// The base64 HMAC-SHA512 of the string to sign.
    public func mac(method: String, url: String, body: [UInt8], timestamp: Int64) throws -> String {
        var authenticator = try MessageAuthenticator(algorithm: .hmacSHA512, key: secret)
        authenticator.update(Self.stringToSign(method: method, url: url, body: body, timestamp: timestamp))
        return Base64.encode(authenticator.finalize())
    }

    /// Adds the timestamp and signature fields to `request` (sent to `url`, the full URL).
    public func sign(_ request: inout HTTPRequest, url: String, body: [UInt8] = []) throws {
        let timestamp = Int64(clock.now.timeIntervalSince1970.rounded(.down))
        request.headerFields[timestampField] = String(timestamp)
        request.headerFields[signatureField] = try mac(method: request.method.rawValue, url: url, body: body, timestamp: timestamp)
    }

    /// Checks a request signed this way; returns its timestamp.
    @discardableResult
    public func verify(_ request: HTTPRequest, url: String, body: [UInt8] = []) throws -> Int64 {
        guard let stamp = request.headerFields[timestampField] else { throw HTTPSignatureError.missingParameter(timestampField.rawName) }
        guard stamp.utf8.count <= 12, let timestamp = Int64(stamp), String(timestamp) == stamp else {
            throw HTTPSignatureError.malformedField(field: timestampField.rawName, detail: "must be Unix seconds in canonical decimal")
        }
        let now = Int64(clock.now.timeIntervalSince1970.rounded(.down))
        let window = self.window.wholeSeconds
        if timestamp > now + window { throw HTTPSignatureError.createdInFuture(created: timestamp, now: now, skew: window) }
        if now - timestamp > window { throw HTTPSignatureError.tooOld(created: timestamp, now: now, maxAge: window) }
        guard let sent = request.headerFields[signatureField] else { throw HTTPSignatureError.missingSignature(detail: "no \(signatureField.rawName) field") }
        guard let sentBytes = Base64.decode(sent), sentBytes.count == 64 else {
            throw HTTPSignatureError.malformedField(field: signatureField.rawName, detail: "must be the base64 of a 64-byte HMAC-SHA512")
        }
        guard var authenticator = try? MessageAuthenticator(algorithm: .hmacSHA512, key: secret) else {
            throw HTTPSignatureError.invalidArgument(detail: "the shared secret is empty")
        }
        authenticator.update(Self.stringToSign(method: request.method.rawValue, url: url, body: body, timestamp: timestamp))
        guard ConstantTime.equals(authenticator.finalize(), sentBytes) else { throw HTTPSignatureError.signatureInvalid(label: signatureField.rawName) }
        return timestamp
    }
}
