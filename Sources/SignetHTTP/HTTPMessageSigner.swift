import Foundation
import HTTPTypes
import SignetCore

/// Signs HTTP messages (RFC 9421): adds `Signature-Input` and `Signature`, and
/// `Content-Digest` for a body.
///
/// ```swift
/// let signer = HTTPMessageSigner(key: .signer(try resolver.signer("device-key.pem")))
/// var request = HTTPRequest(method: .post, scheme: "https", authority: "api.example.com", path: "/v1/orders")
/// try await signer.sign(&request, body: body)
/// ```
public struct HTTPMessageSigner: Sendable {
    /// The key that signs.
    public var key: HTTPSigningKey
    /// The signature's label in the fields. Default `sig1`.
    public var label = "sig1"
    /// The covered components; nil means the defaults: `@method`, `@target-uri` (for a
    /// response, `@status`), `content-digest` when there is a body, and `authorization` when a
    /// request carries one.
    public var components: [SignatureComponent]?
    /// The `keyid`; nil means the public key's fingerprint (`sha256/…`). An HMAC key needs one.
    public var keyID: String?
    /// Adds a random `nonce` (replay protection). Default: on.
    public var includeNonce = true
    /// Adds `alg`. Default: on.
    public var includeAlgorithm = true
    /// Adds `expires` this long after `created` (whole seconds: a fraction is dropped).
    public var expiresAfter: Duration?
    /// An application `tag`.
    public var tag: String?
    /// Where `created` comes from.
    public var clock: WallClock = .system

    /// A signer with `key`; `keyID` nil means the public key's fingerprint (an HMAC key needs one).
    public init(key: HTTPSigningKey, keyID: String? = nil) {
        self.key = key
        self.keyID = keyID
    }

    /// Signs a request; `body`, when not empty, gets a `Content-Digest` (SHA-512) that the
    /// signature covers. Returns the signature input used.
    @discardableResult
    public func sign(_ request: inout HTTPRequest, body: [UInt8]? = nil) async throws -> SignatureInput {
        let hasBody = Self.addContentDigest(to: &request.headerFields, body: body)
        return try await signRequest(&request, hasBody: hasBody)
    }

    /// Signs a request whose body was hashed elsewhere — streamed from a file or a socket
    /// with ``ContentDigest/Hasher``, as the verifier takes it: `bodyDigests` nil means no
    /// body. A `Content-Digest` (SHA-512 where given, else SHA-256) is added unless the
    /// request has one, and the default components cover it.
    @discardableResult
    public func sign(_ request: inout HTTPRequest, bodyDigests: [ContentDigest.Algorithm: [UInt8]]?) async throws -> SignatureInput {
        let hasBody = Self.addContentDigest(to: &request.headerFields, digests: bodyDigests)
        return try await signRequest(&request, hasBody: hasBody)
    }

    /// Signs a request whose `Content-Digest`, if it has a body, is in place.
    private func signRequest(_ request: inout HTTPRequest, hasBody: Bool) async throws -> SignatureInput {
        // A request that carries authority (a bearer token) has it covered: otherwise it could be
        // swapped under the signature.
        let authorization = request.headerFields[.authorization] != nil ? [SignatureComponent("authorization")] : []
        let defaults: [SignatureComponent] = [.method, .targetURI] + (hasBody ? [.contentDigest] : []) + authorization
        let (input, fields) = try await signatureFields(for: .request(request), defaults: defaults, existing: request.headerFields)
        request.headerFields.append(contentsOf: fields)
        return input
    }

    /// Signs a response (components marked `req` come from `request`).
    @discardableResult
    public func sign(_ response: inout HTTPResponse, body: [UInt8]? = nil, answering request: HTTPRequest? = nil) async throws -> SignatureInput {
        let hasBody = Self.addContentDigest(to: &response.headerFields, body: body)
        let defaults: [SignatureComponent] = [.status] + (hasBody ? [.contentDigest] : [])
        let (input, fields) = try await signatureFields(
            for: .response(response, answering: request), defaults: defaults, existing: response.headerFields)
        response.headerFields.append(contentsOf: fields)
        return input
    }

    /// The signature input and the two fields to add for `message`.
    public func signatureFields(
        for message: SignedMessage, defaults: [SignatureComponent] = [.method, .targetURI], existing: HTTPFields = [:]
    ) async throws -> (SignatureInput, [HTTPField]) {
        guard Self.isValidLabel(label) else {
            throw HTTPSignatureError.invalidArgument(detail: "the label \"\(label)\" must be a structured-field key (a–z 0–9 _ - . *, starting with a letter)")
        }
        if SignatureFields.labels(in: existing, maximumSignatures: .max, maximumFieldBytes: .max).contains(label) {
            throw HTTPSignatureError.invalidArgument(detail: "the message already has a signature labelled \(label)")
        }
        guard let keyID = keyID ?? key.defaultKeyID else {
            throw HTTPSignatureError.invalidArgument(detail: key.isCustom ? "a \(key.algorithmName) key needs a key id" : "an HMAC key needs a key id")
        }
        let created = Int64(clock.now.timeIntervalSince1970.rounded(.down))
        let parameters = SignatureParameters(
            created: created, expires: expiresAfter.map { created + $0.wholeSeconds },
            nonce: includeNonce ? Base64.encodeURL(RandomBytes.make(16)) : nil,
            algorithm: includeAlgorithm || key.isCustom ? key.algorithmName : nil, keyID: keyID, tag: tag)
        let input = try SignatureInput(components: components ?? defaults, parameters: parameters)
        let signature = try await key.sign(try input.signatureBaseBytes(for: message))
        let inputValue = label + "=" + (try input.serializedParameters())
        let signatureValue = label + "=:" + Base64.encode(signature) + ":"
        return (input, [HTTPField(name: .signatureInput, value: inputValue), HTTPField(name: .signature, value: signatureValue)])
    }

    /// Adds a SHA-512 `Content-Digest` for a non-empty body unless the fields have one (the
    /// body is hashed only then); returns whether there is a body.
    private static func addContentDigest(to fields: inout HTTPFields, body: [UInt8]?) -> Bool {
        guard let body, !body.isEmpty else { return false }
        if fields[.contentDigest] == nil { fields[.contentDigest] = ContentDigest.fieldValue(for: body) }
        return true
    }

    /// Adds a `Content-Digest` (SHA-512 where given, else SHA-256) for a body's digests unless
    /// the fields have one; returns whether there is a body.
    private static func addContentDigest(to fields: inout HTTPFields, digests: [ContentDigest.Algorithm: [UInt8]]?) -> Bool {
        guard let digests, !digests.isEmpty else { return false }
        if fields[.contentDigest] == nil {
            let algorithm: ContentDigest.Algorithm = digests[.sha512] != nil ? .sha512 : .sha256
            fields[.contentDigest] = ContentDigest.fieldValue([algorithm: digests[algorithm]!])
        }
        return true
    }

    static func isValidLabel(_ label: String) -> Bool {
        guard let first = label.utf8.first, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first) || first == UInt8(ascii: "*") else { return false }
        return label.utf8.count <= 64 && label.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || Array("_-.*".utf8).contains(byte)
        }
    }
}
