import Foundation
import HTTPTypes
import SignetCore
import SignetHTTP

/// What `signet-bench server-requests` signs: one of four calls of Signet's server API.
enum ServerRequestKind: Sendable {
    /// `GET /v1/me` with `Authorization: Bearer TOKEN`.
    case me(token: String)
    /// `POST /v1/sessions` with `{"email", "password"}`.
    case signIn(email: String, password: String)
    /// `POST /v1/users` with `PREFIX-<i>@bench.example`, `bench-password-<i>`, `Bench <i>`.
    case register(prefix: String)
    /// `GET /v1/resources/NAME` with `If-None-Match: ETAG` (answered 304 while ETAG is current).
    case resource(name: String, etag: String)
}

/// `signet-bench server-requests KIND KEY AUTHORITY COUNT OUT [ARGS…]`: COUNT distinct requests
/// to `signet serve` at `https://AUTHORITY`, each signed by KEY (the private key of an enrolled
/// app) as the server requires: `@method`, `@target-uri` and, with a body, `content-digest`,
/// with its own `nonce` and `created` = now. They are written to OUT, one per line, for the wrk
/// script of Scripts/bench's server section:
///
///     METHOD<TAB>PATH<TAB>Name=value<TAB>…<TAB>BODY
///
/// The header fields (everything the request carries but `Host`, which wrk adds) are split at
/// their first `=`; the body (JSON, no tabs or line breaks) is always the last field, empty for
/// a GET. KIND and ARGS:
///
/// - `me TOKEN`: `GET /v1/me` with `Authorization: Bearer TOKEN`;
/// - `signin EMAIL PASSWORD`: `POST /v1/sessions` with `{"email","password"}`;
/// - `register PREFIX`: `POST /v1/users` with e-mail `PREFIX-<i>@bench.example`, password
///   `bench-password-<i>` and display name `Bench <i>`, i = 0..<COUNT;
/// - `resource NAME ETAG`: `GET /v1/resources/NAME` with `If-None-Match: ETAG`.
///
/// Signing is spread over the cores; prints `COUNT SECONDS` (the time it took) on standard output.
func serverRequestsBench(kind name: String, keyPath: String, authority: String, count: Int, output: String, arguments: [String]) async throws {
    let kind: ServerRequestKind
    switch (name, arguments.count) {
    case ("me", 1): kind = .me(token: arguments[0])
    case ("signin", 2): kind = .signIn(email: arguments[0], password: arguments[1])
    case ("register", 1): kind = .register(prefix: arguments[0])
    case ("resource", 2): kind = .resource(name: arguments[0], etag: arguments[1])
    default:
        throw BenchError("server-requests: KIND and ARGS are 'me TOKEN', 'signin EMAIL PASSWORD', 'register PREFIX' or 'resource NAME ETAG' (got '\(name)' with \(arguments.count) argument(s))")
    }
    let decoded = try KeyDecoder.decode(path: keyPath)
    guard case .privateKey(let key) = decoded else {
        throw BenchError("\(keyPath): not an unencrypted private key (an enrolled app's signing key is needed)")
    }
    // The algorithm the server gives the key's kind at enrolment (and `signet request send` uses).
    let signer = HTTPMessageSigner(
        key: .signer(try SoftwareSigner(key: key, algorithm: HTTPSignatureAlgorithms.default(for: key.kind))))

    let clock = ContinuousClock()
    let start = clock.now
    let text = try await signedLines(count: count) { index in
        try await serverRequestLine(kind, index: index, authority: authority, signer: signer)
    }
    let signing = (clock.now - start).seconds
    try Data(text.utf8).write(to: URL(fileURLWithPath: output))
    print("\(count) " + String(format: "%.2f", signing))
}

/// The `index`-th request of `kind`, signed, as one line of the file (with its line feed).
private func serverRequestLine(_ kind: ServerRequestKind, index: Int, authority: String, signer: HTTPMessageSigner) async throws -> String {
    var request: HTTPRequest
    var body: [UInt8] = []
    switch kind {
    case .me(let token):
        request = HTTPRequest(method: .get, scheme: "https", authority: authority, path: "/v1/me")
        request.headerFields[.authorization] = "Bearer " + token
    case .signIn(let email, let password):
        request = HTTPRequest(method: .post, scheme: "https", authority: authority, path: "/v1/sessions")
        body = try jsonObject(["email": email, "password": password])
    case .resource(let name, let etag):
        request = HTTPRequest(method: .get, scheme: "https", authority: authority, path: "/v1/resources/" + name)
        request.headerFields[.ifNoneMatch] = etag
    case .register(let prefix):
        request = HTTPRequest(method: .post, scheme: "https", authority: authority, path: "/v1/users")
        body = try jsonObject([
            "email": "\(prefix)-\(index)@bench.example",
            "password": "bench-password-\(index)",
            "displayName": "Bench \(index)",
        ])
        // Each registration from a client address of its own, as many users registering would
        // be: the server (started with --trusted-proxy 127.0.0.1) limits registrations per address.
        request.headerFields[HTTPField.Name("X-Forwarded-For")!] = "10.\(index >> 16 & 255).\(index >> 8 & 255).\(index & 255)"
    }
    if !body.isEmpty {
        request.headerFields[.contentType] = "application/json"
    }
    // Adds Content-Digest (with a body), Signature-Input and Signature.
    try await signer.sign(&request, body: body.isEmpty ? nil : body)
    var fields = [request.method.rawValue, request.path ?? "/"]
    for field in request.headerFields {
        fields.append(field.name.rawName + "=" + field.value)
    }
    fields.append(String(decoding: body, as: UTF8.self))
    for field in fields where field.utf8.contains(where: { $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) {
        throw BenchError("server-requests: a field holds a tab or line break, which the line format cannot carry: \(field.prefix(80))")
    }
    return fields.joined(separator: "\t") + "\n"
}

/// A flat JSON object of strings, on one line (JSONEncoder escapes control characters).
private func jsonObject(_ members: [String: String]) throws -> [UInt8] {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return Array(try encoder.encode(members))
}

/// Lines 0..<count made by `line`, on every core at once (pre-signing is most of a bench's
/// start-up), joined in order.
func signedLines(count: Int, _ line: @escaping @Sendable (Int) async throws -> String) async throws -> String {
    let workers = max(1, min(ProcessInfo.processInfo.activeProcessorCount, count))
    let share = (count + workers - 1) / workers
    let parts = try await withThrowingTaskGroup(of: (Int, String).self, returning: [String].self) { group in
        for worker in 0..<workers {
            let lower = min(count, worker * share)
            let indices = lower..<min(count, lower + share)
            group.addTask {
                var text = ""
                text.reserveCapacity(indices.count * 640)
                for index in indices { text += try await line(index) }
                return (worker, text)
            }
        }
        var collected = [String](repeating: "", count: workers)
        for try await part in group { collected[part.0] = part.1 }
        return collected
    }
    return parts.joined()
}
