import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import SignetAPI
import SignetCore
import SignetHTTP
import SignetServer

/// `signet-bench request-cost KIND COUNT PREPARED`: the real server's router and store (SQLite
/// in a temporary folder) answering COUNT requests of KIND in process, with no network, after
/// PREPARED requests were made ready — for `Scripts/request-cost`, which runs it under
/// valgrind's callgrind at two COUNTs with the same PREPARED and divides the difference in
/// instructions by the difference in requests: the instructions of one request, a figure the
/// machine's noise does not move. KIND:
///
/// - `health`: `GET /v1/health`, unsigned;
/// - `me`: `GET /v1/me` signed by an enrolled Ed25519 app (`@method`, `@target-uri`,
///   `authorization`, its own nonce and `created`) with a session's bearer token — the route an
///   app calls most;
/// - `verify`: the bare Ed25519 check of a distinct 250-byte message (a signature base's size);
/// - `device-me`: `GET /v1/me` as `me`, but signed by an App Attest device of the app
///   (`alg="apple-app-attest"`: an assertion whose counter grows, kept by a database write),
///   with a session that device started.
///
/// *overhead = me − health − verify* is what authenticating a request costs beyond its
/// signature; *device-me − me* what a device's assertion costs beyond an app's Ed25519 signature.
func requestCost(kind: String, count: Int, prepared: Int) async throws {
    guard count <= prepared else { throw BenchError("request-cost: COUNT (\(count)) must not exceed PREPARED (\(prepared))") }
    let appKey = try PrivateKey.generate(.ed25519)
    if kind == "verify" {
        let pool = try await SignaturePool(key: appKey, count: prepared, messageBytes: 250)
        for _ in 0..<count { try pool.checkNext() }
        return
    }
    guard ["health", "me", "device-me"].contains(kind) else { throw BenchError("request-cost: unknown KIND \(kind) (health, me, verify, device-me)") }
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("signet-request-cost-\(getpid())").path
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    var logger = Logger(label: "signet-bench")
    logger.logLevel = .critical
    let store = ServerStore(database: try ServerDatabase(location: .sqlite(path: folder + "/signet.sqlite"), logger: logger))
    try await store.migrate()
    let app = try SoftwareSigner(key: appKey)
    try await store.principals.add(Principal(
        keyID: app.publicKey.fingerprint.description, role: .app, name: "bench-app", algorithm: .ed25519,
        publicKeyDER: app.publicKey.spkiDER, createdAt: 0))
    let device = try SoftwareSigner(key: try PrivateKey.generate(.p256))
    let appID = "ABCDE12345.bench.example"
    if kind == "device-me" {
        try await store.principals.setAttestation(app: "bench-app", AdminAPI.AttestationSettings(appleAppId: appID).normalized())
        try await store.devices.add(DeviceRecord(
            id: "bench-device", keyID: device.publicKey.fingerprint.description, app: "bench-app", platform: .apple,
            publicKeyDER: device.publicKey.spkiDER, facts: DeviceAPI.Facts(environment: "production", appId: appID), createdAt: 0))
    }
    var configuration = ServerConfiguration()
    configuration.publicScheme = "https"
    configuration.publicAuthority = "bench.example"
    configuration.passwordHasher = PasswordHasher(algorithm: .scrypt(logN: 10, r: 8, p: 1))
    let server = try SignetServer(configuration: configuration, store: store, responseSigner: nil, tls: nil)
    let signer = kind == "device-me"
        ? HTTPMessageSigner(key: .custom(BenchAssertions(device: device, appID: appID)), keyID: device.publicKey.fingerprint.description)
        : HTTPMessageSigner(key: .signer(app))
    let application = try server.application(logger: logger)
    try await application.test(.router) { client in
        func signed(_ method: HTTPRequest.Method, _ path: String, token: String? = nil, json: String? = nil) async throws -> HTTPRequest {
            var request = HTTPRequest(method: method, scheme: "https", authority: "bench.example", path: path)
            if let token { request.headerFields[.authorization] = "Bearer " + token }
            if json != nil { request.headerFields[.contentType] = "application/json" }
            try await signer.sign(&request, body: json.map { Array($0.utf8) })
            return request
        }
        func send(_ request: HTTPRequest, json: String? = nil) async throws -> TestResponse {
            let response = try await client.execute(
                uri: request.path ?? "/", method: request.method, headers: request.headerFields, body: json.map { ByteBuffer(string: $0) })
            guard response.status.code < 300 else {
                throw BenchError("request-cost: \(request.method) \(request.path ?? "") answered \(response.status): \(String(buffer: response.body))")
            }
            return response
        }
        // The session every `me` request carries: registered and signed in through the API.
        let account = #"{"email":"bench@bench.example","password":"bench-password-1","displayName":"Bench"}"#
        _ = try await send(try await signed(.post, "/v1/users", json: account), json: account)
        let credentials = #"{"email":"bench@bench.example","password":"bench-password-1"}"#
        let session = try await send(try await signed(.post, "/v1/sessions", json: credentials), json: credentials)
        struct Session: Decodable { let token: String }
        let token = try JSONDecoder().decode(Session.self, from: Data(buffer: session.body)).token
        var requests: [HTTPRequest] = []
        requests.reserveCapacity(prepared)
        for _ in 0..<prepared {
            requests.append(kind == "health" ? HTTPRequest(method: .get, scheme: "https", authority: "bench.example", path: "/v1/health") : try await signed(.get, "/v1/me", token: token))
        }
        for request in requests.prefix(count) { _ = try await send(request) }
    }
    await store.database.shutdown()
}

/// App Attest assertions by a P-256 key, as a device's `generateAssertion` makes them:
/// `{signature, authenticatorData}` over SHA-256(authenticatorData ‖ SHA-256(signature base)),
/// the counter one more each time.
final class BenchAssertions: HTTPSignatureProducing, @unchecked Sendable {
    let device: SoftwareSigner
    let appIDHash: [UInt8]
    private var counter: UInt32 = 0
    private let lock = NSLock()

    init(device: SoftwareSigner, appID: String) {
        self.device = device
        appIDHash = DigestAlgorithm.sha256.hash(Array(appID.utf8)).bytes
    }

    var algorithmName: String { DeviceAPI.appAttestAlgorithm }
    var algorithm: SignatureAlgorithm { .ecdsaP256SHA256 }

    func sign(base: [UInt8]) async throws -> [UInt8] {
        let next = lock.withLock { () -> UInt32 in
            counter += 1
            return counter
        }
        let authenticatorData = appIDHash + [0x40] + withUnsafeBytes(of: next.bigEndian, Array.init)
        let nonce = DigestAlgorithm.sha256.hash(authenticatorData + DigestAlgorithm.sha256.hash(base).bytes).bytes
        let signature = try await device.sign(message: nonce)
        return CBORValue.map([
            CBORMapEntry(.text("signature"), .bytes(signature)),
            CBORMapEntry(.text("authenticatorData"), .bytes(authenticatorData)),
        ]).encoded
    }
}
