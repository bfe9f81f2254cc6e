import ArgumentParser
import Foundation
import HTTPTypes
import SignetCore
import SignetHTTP

/// `signet request`: RFC 9421 HTTP message signatures from the command line.
struct RequestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "request",
        abstract: "Sign and verify HTTP requests (RFC 9421 message signatures, RFC 9530 Content-Digest).",
        discussion: """
        A request is described by -X METHOD, --url URL, -H 'Name: value' and --body FILE. \
        'sign' prints the fields to add; 'verify' checks a signature under the default policy \
        (@method, @target-uri and, with a body, content-digest covered; created and keyid \
        present; created within 300 s); 'send' signs and sends. The format is in \
        docs/formats/http-signatures.md. Exit codes: 0 valid; 1 a check failed; 2 usage; \
        3 malformed input; 4 I/O.
        """,
        subcommands: [RequestSign.self, RequestVerify.self, RequestSend.self]
    )
}

/// The request a command works on, and the key options shared by sign, verify and send.
struct RequestOptions: ParsableArguments {
    @Option(name: .customShort("X"), help: ArgumentHelp("The method.", valueName: "METHOD"))
    var method: String = "GET"

    @Option(help: ArgumentHelp("The full URL (http:// or https://).", valueName: "URL"))
    var url: String

    @Option(name: .customShort("H"), help: ArgumentHelp("A header field, 'Name: value' (repeat).", valueName: "FIELD"))
    var headers: [String] = []

    @Option(help: ArgumentHelp("A file holding the body (- for standard input).", valueName: "FILE"))
    var body: String?

    @Option(help: ArgumentHelp(
        "The signing key, or public key for verify; for -a hmac-sha256 a file whose bytes are the shared secret (default: the SIGNET_HMAC_KEY environment variable).",
        valueName: "KEY"))
    var key: String?

    @Option(help: ArgumentHelp("The keyid (default: the key's fingerprint, sha256/…; needed for HMAC).", valueName: "ID"))
    var keyid: String?

    @Option(name: .shortAndLong, help: ArgumentHelp(
        "The algorithm: hmac-sha256, rsa-pss-sha512, rsa-v1_5-sha256, ecdsa-p256-sha256, ecdsa-p384-sha384, ed25519 (default: the key's).",
        valueName: "ALG"))
    var algorithm: String?

    /// The request head (scheme, authority and path from the URL; header fields from -H).
    func request() throws -> HTTPRequest {
        guard let method = HTTPRequest.Method(method.uppercased()) else { throw ValidationError("-X \(method): not an HTTP method") }
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased() else {
            throw ValidationError("--url \(url): give a full URL such as https://api.example.com/path")
        }
        guard scheme == "http" || scheme == "https" else { throw ValidationError("--url: the scheme must be http or https") }
        guard let host = parsed.host, !host.isEmpty, parsed.user == nil, parsed.password == nil else {
            throw ValidationError("--url: the URL needs a host (and no user info)")
        }
        var fields = HTTPFields()
        for header in headers {
            guard let colon = header.firstIndex(of: ":"), let name = HTTPField.Name(String(header[..<colon]).trimmingCharacters(in: .whitespaces)) else {
                throw ValidationError("-H '\(header)': give 'Name: value'")
            }
            let value = header[header.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            guard HTTPField.isValidValue(value) else { throw ValidationError("-H '\(header)': the value has characters a field cannot hold") }
            fields.append(HTTPField(name: name, value: value))
        }
        var request = HTTPRequest(method: method, url: parsed, headerFields: fields)
        request.scheme = scheme  // as RFC 9421's @scheme has it: lower case
        return request
    }

    /// The body's SHA-256 and SHA-512, streamed from the file (or taken from `bytes` when
    /// the body was already read); nil without a body or for an empty one. The signer adds
    /// the Content-Digest from them and covers it; the verifier checks against them.
    func bodyDigests(_ bytes: [UInt8]? = nil) throws -> [ContentDigest.Algorithm: [UInt8]]? {
        if let bytes { return ContentDigest.digests(of: bytes) }
        guard let body else { return nil }
        var hasher = ContentDigest.Hasher()
        try FileInput(path: body).stream { hasher.update($0) }
        return hasher.byteCount == 0 ? nil : hasher.finalize()
    }

    /// The algorithm asked for, if any.
    func chosenAlgorithm() throws -> SignatureAlgorithm? {
        try algorithm.map { try HTTPSignatureAlgorithms.parse($0) }
    }

    /// The shared secret of an HMAC key: the --key file, else SIGNET_HMAC_KEY.
    func hmacSecret() throws -> SecretBytes {
        guard keyid != nil else { throw ValidationError("an HMAC key needs --keyid") }
        return try HMACKeyInput.load(file: key, option: "--key")
    }

    /// The --key of a public-key algorithm.
    func requiredKey() throws -> String {
        guard let key else { throw ValidationError("give --key KEY (a signing key, or the public key for verify)") }
        return key
    }
}

/// Signing choices shared by sign and send.
struct RequestSigningOptions: ParsableArguments {
    @Option(name: .customLong("component"), help: ArgumentHelp(
        "A component to cover (repeat; default: @method @target-uri, and content-digest with a body), e.g. @authority, content-type, '\"@query-param\";name=\"id\"'.",
        valueName: "NAME"))
    var components: [String] = []

    @Flag(inversion: .prefixedNo, help: "Add a random nonce (replay protection; on by default).")
    var nonce = true

    @Option(help: ArgumentHelp("Add expires, this many seconds after created.", valueName: "SECONDS"))
    var expires: Int64?

    @Option(help: ArgumentHelp("The signature's label.", valueName: "LABEL"))
    var label = "sig1"

    @Option(help: ArgumentHelp("An application tag parameter.", valueName: "TAG"))
    var tag: String?

    /// Signs `request` in place; the body's digest goes into Content-Digest.
    func sign(_ request: inout HTTPRequest, options: RequestOptions, keyAccess: KeyAccessOptions, body: [UInt8]? = nil) async throws {
        let algorithm = try options.chosenAlgorithm()
        let key: HTTPSigningKey
        if algorithm == .hmacSHA256 {
            key = .hmacSHA256(try options.hmacSecret())
        } else {
            let resolver = keyAccess.resolver
            let path = try options.requiredKey()
            let publicKey = try await resolver.publicKey(path)
            key = .signer(try await resolver.signer(path, algorithm: algorithm ?? HTTPSignatureAlgorithms.default(for: publicKey.kind)))
        }
        if let expires, expires <= 0 { throw ValidationError("--expires must be a positive number of seconds") }
        var signer = HTTPMessageSigner(key: key, keyID: options.keyid)
        signer.label = label
        signer.includeNonce = nonce
        signer.expiresAfter = expires.map { .seconds($0) }
        signer.tag = tag
        if !components.isEmpty { signer.components = try components.map { try SignatureComponent(parsing: $0) } }
        try await signer.sign(&request, bodyDigests: try options.bodyDigests(body))
    }
}

struct RequestSign: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign",
        abstract: "Print the fields that sign a request: Content-Digest (with a body), Signature-Input, Signature.")

    @OptionGroup var options: RequestOptions
    @OptionGroup var signing: RequestSigningOptions
    @OptionGroup var keyAccess: KeyAccessOptions

    func run() async throws {
        let original = try options.request()
        var request = original
        try await signing.sign(&request, options: options, keyAccess: keyAccess)
        let added = request.headerFields.dropFirst(original.headerFields.count)
        Console.write(added.map { "\($0.name.rawName): \($0.value)\n" }.joined())
    }
}

struct RequestVerify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Verify the signature of a request whose keyid is --keyid (default: the key's fingerprint); exit 0 valid, 1 not.")

    @OptionGroup var options: RequestOptions
    @OptionGroup var keyAccess: KeyAccessOptions

    @Option(help: ArgumentHelp("How old created may be, in seconds (default 300).", valueName: "SECONDS"))
    var maxAge: Int64 = 300

    @Flag(name: .shortAndLong, help: "Print nothing on success.")
    var quiet = false

    func run() async throws {
        let request = try options.request()
        let algorithm = try options.chosenAlgorithm()
        let key: HTTPVerificationKey
        let keyID: String
        if algorithm == .hmacSHA256 {
            key = .hmacSHA256(try options.hmacSecret())
            keyID = options.keyid!
        } else {
            let publicKey = try await keyAccess.resolver.publicKey(try options.requiredKey())
            let chosen = algorithm ?? HTTPSignatureAlgorithms.default(for: publicKey.kind)
            try chosen.requireFits(publicKey.kind)
            key = .publicKey(publicKey, chosen)
            keyID = options.keyid ?? publicKey.fingerprint.description
        }
        guard maxAge > 0 else { throw ValidationError("--max-age must be positive") }
        var policy = HTTPSignaturePolicy.default
        policy.maximumAge = .seconds(maxAge)
        let verifier = HTTPMessageVerifier(keys: StaticHTTPSignatureKeys([keyID: key]), policy: policy)
        let verified = try await verifier.verify(.request(request), bodyDigests: try options.bodyDigests(), keyID: keyID)
        let covered = verified.input.components.map(\.description).joined(separator: " ")
        Console.note("signature \(verified.label) valid (\(verified.algorithm.rawValue), keyid \(keyID)) covering \(covered)", quiet: quiet)
    }
}
