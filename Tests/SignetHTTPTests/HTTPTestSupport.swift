import Foundation
import HTTPTypes
import SignetCore
@testable import SignetHTTP
import SignetTestSupport
import Testing

// MARK: - Vector files

// Files copied into the test bundle from `Tests/SignetHTTPTests/Vectors` are read with
// SignetTestSupport's `TestVectors` (`in: .module`).

/// A message as `rfc9421.json` describes it: a request (`method`) or a response (`status`).
struct VectorMessage: Decodable, Sendable {
    var method: String?
    var requestTarget: String?
    var authority: String?
    var scheme: String?
    var status: Int?
    var reason: String?
    var headers: [[String]]
    var body: String?
    var description: String?
    var expectValid: Bool?

    var isResponse: Bool { status != nil }
    var bodyBytes: [UInt8]? { body.map { Array($0.utf8) } }

    /// The request: the scheme is `https` unless the vector gives one; the path is the
    /// request target as sent (as an HTTP/1 server hands it over).
    func request() throws -> HTTPRequest {
        let name = try #require(method, "the vector message has no method")
        let method = try #require(HTTPRequest.Method(name), "bad method \(name)")
        return HTTPRequest(
            method: method, scheme: scheme ?? "https", authority: authority, path: requestTarget,
            headerFields: try HTTPTestSupport.fields(headers))
    }

    func response() throws -> HTTPResponse {
        let code = try #require(status, "the vector message has no status")
        return HTTPResponse(status: HTTPResponse.Status(code: code, reasonPhrase: reason ?? ""), headerFields: try HTTPTestSupport.fields(headers))
    }
}

/// One signature example of RFC 9421 (Appendix B, §2.4, §2.5/§3, §4.3).
struct SignatureExample: Decodable, Sendable, CustomTestStringConvertible {
    var id: String
    var title: String
    /// `request` (test-request), `response` (test-response) or `inline` (``messageData``).
    var message: String
    var label: String
    var keyid: String
    var algorithm: String
    var coveredComponents: [String]
    var signatureInput: String
    var signatureBase: String
    var signature: String
    var deterministic: Bool
    var addedHeaders: [[String]]
    var messageData: VectorMessage?
    var transformedMessages: [VectorMessage]?
    var relatedRequest: String?
    var combinedHeaders: [[String]]?

    var testDescription: String { "\(id) (\(algorithm))" }

    var signatureAlgorithm: SignatureAlgorithm {
        get throws { try #require(SignatureAlgorithm(rawValue: algorithm), "unknown algorithm \(algorithm) in a vector") }
    }

    var signatureBytes: [UInt8] {
        get throws { try #require(Base64.decode(signature), "the vector's signature is not base64") }
    }

    /// The `created` parameter, read from the text of the Signature-Input (not through Signet).
    var created: Int64 {
        get throws {
            let range = try #require(signatureInput.range(of: ";created="), "no created in \(id)")
            let digits = String(signatureInput[range.upperBound...].prefix(while: { $0.isNumber }))
            return try #require(Int64(digits), "created=\(digits) in \(id)")
        }
    }
}

/// One Section 2 component example: a raw message fragment and the signature base lines.
struct ComponentExample: Decodable, Sendable, CustomTestStringConvertible {
    var section: String
    var description: String
    var rawMessage: [String]
    var expectedLines: [String]
    var scheme: String?

    var testDescription: String { "§\(section) \(description)" }
}

struct RFC9421File: Decodable, Sendable {
    var request: VectorMessage
    var response: VectorMessage
    var examples: [SignatureExample]
    var componentExamples: [ComponentExample]

    static func load() throws -> RFC9421File {
        try JSONDecoder().decode(RFC9421File.self, from: TestVectors.data("rfc9421.json", in: .module))
    }

    static func example(_ id: String) throws -> SignatureExample {
        try #require(try load().examples.first(where: { $0.id == id }), "no example \(id)")
    }

    /// The message an example signs, with its Signature-Input and Signature fields (`signatureFields`
    /// replaces those the example adds), and the body. A response comes with test-request.
    func message(for example: SignatureExample, signatureFields: [[String]]? = nil) throws -> (message: SignedMessage, body: [UInt8]?) {
        let data: VectorMessage
        switch example.message {
        case "request": data = request
        case "response": data = response
        default: data = try #require(example.messageData, "\(example.id) has no messageData")
        }
        var message: SignedMessage
        if data.isResponse {
            message = .response(try data.response(), answering: try request.request())
        } else {
            message = .request(try data.request())
        }
        let replacement = signatureFields ?? example.addedHeaders
        try HTTPTestSupport.replaceSignatureFields(in: &message, with: replacement, onlyIfAbsent: signatureFields == nil)
        return (message, data.bodyBytes)
    }
}

// MARK: - RFC 9421 test keys

enum RFC9421Keys {
    /// `test-shared-secret`: 64 bytes, base64 in the file.
    static func sharedSecretBase64() throws -> String {
        String(decoding: try TestVectors.data("rfc9421-keys/test-shared-secret.b64", in: .module), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func sharedSecret() throws -> SecretBytes {
        let bytes = try #require(Base64.decode(try sharedSecretBase64()), "test-shared-secret.b64 is not base64")
        try #require(bytes.count == 64)
        return SecretBytes(bytes)
    }

    /// The key that checks signatures of `keyID` (the RFC's key names), pinned to `algorithm`.
    static func verificationKey(_ keyID: String, algorithm: SignatureAlgorithm) async throws -> HTTPVerificationKey {
        if algorithm == .hmacSHA256 { return .hmacSHA256(try sharedSecret()) }
        let publicKey = try await KeySourceResolver().publicKey(try TestVectors.path("rfc9421-keys/\(keyID).pub.pem", in: .module))
        return .publicKey(publicKey, algorithm)
    }

    /// The key that signs as `keyID`. Not for `test-key-rsa-pss` (SignetCore refuses its
    /// RSASSA-PSS PKCS#8 private key; see RFC9421VectorTests).
    static func signingKey(_ keyID: String, algorithm: SignatureAlgorithm) async throws -> HTTPSigningKey {
        if algorithm == .hmacSHA256 { return .hmacSHA256(try sharedSecret()) }
        let signer = try await KeySourceResolver().signer(try TestVectors.path("rfc9421-keys/\(keyID).pem", in: .module), algorithm: algorithm)
        return .signer(signer)
    }
}

// MARK: - Keys made for the tests

/// Keys generated once per test run (RSA generation is slow).
enum SharedHTTPTestKeys {
    private static let keys: [KeyGenerationType: PrivateKey] = Dictionary(
        uniqueKeysWithValues: [KeyGenerationType.rsa2048, .p256, .p384, .ed25519].map { ($0, try! PrivateKey.generate($0)) })

    static func key(_ type: KeyGenerationType) -> PrivateKey { keys[type]! }

    /// A fixed 32-byte HMAC secret.
    static let hmacSecretBytes: [UInt8] = (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
}

/// A signing key and the verification key that matches it, for one algorithm.
struct SigningFixture: Sendable {
    let algorithm: SignatureAlgorithm
    let signingKey: HTTPSigningKey
    let verificationKey: HTTPVerificationKey
    /// The public key (nil for HMAC).
    let publicKey: PublicKey?

    static func make(_ algorithm: SignatureAlgorithm) throws -> SigningFixture {
        let type: KeyGenerationType
        switch algorithm {
        case .hmacSHA256:
            let secret = SecretBytes(SharedHTTPTestKeys.hmacSecretBytes)
            return SigningFixture(algorithm: algorithm, signingKey: .hmacSHA256(secret), verificationKey: .hmacSHA256(secret), publicKey: nil)
        case .rsaPSSSHA512, .rsaPKCS1v15SHA256: type = .rsa2048
        case .ecdsaP256SHA256: type = .p256
        case .ecdsaP384SHA384: type = .p384
        case .ed25519: type = .ed25519
        default: throw VectorError(description: "\(algorithm.rawValue) is not an RFC 9421 algorithm")
        }
        let key = SharedHTTPTestKeys.key(type)
        return SigningFixture(
            algorithm: algorithm, signingKey: .signer(try SoftwareSigner(key: key, algorithm: algorithm)),
            verificationKey: .publicKey(key.publicKey, algorithm), publicKey: key.publicKey)
    }

    /// The raw signature length RFC 9421 §3.3 gives the algorithm (RSA-2048 here).
    var signatureLength: Int {
        switch algorithm {
        case .hmacSHA256: return 32
        case .ecdsaP256SHA256, .ed25519: return 64
        case .ecdsaP384SHA384: return 96
        default: return 256
        }
    }
}

// MARK: - Messages, clocks, errors

enum HTTPTestSupport {
    /// A fixed time for signing and verifying: 2023-11-14T22:13:20Z.
    static let now: Int64 = 1_700_000_000

    static let xAccount = HTTPField.Name("X-Account")!
    static let sampleBody: [UInt8] = Array("{\"hello\": \"world\"}".utf8)
    /// `sha-512` of ``sampleBody`` (RFC 9530 Appendix D, also computed with python3's hashlib).
    static let sampleBodyContentDigest = "sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:"

    static func sampleRequest(path: String = "/v1/orders?id=7") -> HTTPRequest {
        HTTPRequest(
            method: .post, scheme: "https", authority: "api.example.com", path: path,
            headerFields: [.contentType: "application/json", xAccount: "acct-42"])
    }

    /// Header fields from `[name, value]` pairs, in order.
    static func fields(_ pairs: [[String]]) throws -> HTTPFields {
        var fields: HTTPFields = [:]
        for pair in pairs {
            try #require(pair.count == 2, "a header must be a [name, value] pair: \(pair)")
            let name = try #require(HTTPField.Name(pair[0]), "bad field name \(pair[0])")
            fields.append(HTTPField(name: name, value: pair[1]))
        }
        return fields
    }

    /// Puts `pairs` (Signature-Input / Signature lines) into the message's own fields,
    /// removing any it had first (unless `onlyIfAbsent` and it has some).
    static func replaceSignatureFields(in message: inout SignedMessage, with pairs: [[String]], onlyIfAbsent: Bool = false) throws {
        let added = try fields(pairs)
        func apply(_ fields: inout HTTPFields) {
            if onlyIfAbsent, fields[.signatureInput] != nil || fields[.signature] != nil { return }
            fields[.signatureInput] = nil
            fields[.signature] = nil
            fields.append(contentsOf: added)
        }
        if var response = message.response {
            apply(&response.headerFields)
            message.response = response
        } else if var request = message.request {
            apply(&request.headerFields)
            message.request = request
        }
    }

    /// The bytes of the signature labelled `label` in the Signature field(s).
    static func signature(_ label: String, in fields: HTTPFields) throws -> [UInt8] {
        let members = fields[values: .signature].flatMap { $0.components(separatedBy: ", ") }
        let member = try #require(members.first(where: { $0.hasPrefix(label + "=:") }), "no signature \(label) in \(members)")
        let text = member.dropFirst(label.count + 2).dropLast()
        return try #require(Base64.decode(text), "signature \(label) is not base64")
    }

    /// The digests ``HTTPMessageVerifier/verify(_:bodyDigests:label:keyID:)`` wants for `body`.
    static func digests(_ body: [UInt8]?) -> [ContentDigest.Algorithm: [UInt8]]? {
        guard let body, !body.isEmpty else { return nil }
        var hasher = ContentDigest.Hasher()
        hasher.update(body)
        return hasher.finalize()
    }

    /// Runs `body`, requires it to throw an ``HTTPSignatureError`` and returns it.
    static func thrown<R>(
        sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> R
    ) async throws -> HTTPSignatureError {
        try await SignetTestSupport.thrownAsync(HTTPSignatureError.self, sourceLocation: sourceLocation, body)
    }
}

extension HTTPSignatureError {
    /// The field a ``malformedField(field:detail:)`` names; nil for other cases.
    var malformedFieldName: String? {
        if case .malformedField(let field, _) = self { return field }
        return nil
    }
}
