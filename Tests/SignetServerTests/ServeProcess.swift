import Foundation
import HTTPTypes
import SignetCore
import SignetHTTP
import SignetClient
import SignetServer
import SignetTLS
import SignetTestSupport
import Testing

/// A `signet serve` process on 127.0.0.1 (a free port), with what it printed: its URL, pins
/// and response key.
final class ServeProcess: Sendable {
    let process: BackgroundProcess
    let port: Int
    /// `https`, or `http` for a server started with `plainHTTP` (`--plain-http`).
    let scheme: String
    /// The pins it announced (none over plain HTTP).
    let pins: [KeyFingerprint]
    let responseKey: String
    /// The folder it runs in, kept as long as the server is.
    let folder: TemporaryFolder
    /// Its data folder's response key file (`DATA/response-key.pem`).
    let responseKeyPath: String

    private init(
        process: BackgroundProcess, port: Int, scheme: String, pins: [KeyFingerprint], responseKey: String, folder: TemporaryFolder,
        responseKeyPath: String
    ) {
        self.folder = folder
        self.responseKeyPath = responseKeyPath
        self.process = process
        self.port = port
        self.scheme = scheme
        self.pins = pins
        self.responseKey = responseKey
    }

    var url: String { "\(scheme)://127.0.0.1:\(port)" }
    var api: TestAPI { get throws { try TestAPI(port: port, pins: pins) } }
    /// `--server URL --pin A --pin B`.
    var connectionArguments: [String] { ["--server", url] + pins.flatMap { ["--pin", $0.description] } }
    /// `--server URL --pin A --pin B --server-key DATA/response-key.pem`: what an admin command needs besides its key.
    var adminArguments: [String] { connectionArguments + ["--server-key", responseKeyPath] }

    /// The admin API client of this server, signing with `signer` and verifying every answer
    /// under the server's response key.
    func adminClient(signer: HTTPMessageSigner, api: TestAPI? = nil) throws -> AdminClient {
        guard case .publicKey(let serverKey) = try KeyDecoder.decode(Array(try Data(contentsOf: URL(fileURLWithPath: responseKeyPath))), source: responseKeyPath)
        else { throw ServerTestError(description: "\(responseKeyPath) is not a public key") }
        return try AdminClient(
            server: url, signer: signer, serverKey: serverKey, transport: ContractCheckingTransport(inner: PinnedTransport(client: try (api ?? self.api).transport)))
    }

    /// Starts `signet serve --data DATA --log-level LEVEL` (and `--database`, `extra`) in
    /// `folder`, DATA being `data` inside it; with `plainHTTP`, `--plain-http` (no TLS, no pins).
    static func start(
        in folder: TemporaryFolder, database: String? = nil, extra: [String] = [], name: String = "serve", environment: [String: String] = [:],
        plainHTTP: Bool = false, data: String = "data", logLevel: String = "warning"
    ) async throws -> ServeProcess {
        var arguments = ["serve", "--data", folder.file(data), "--port", "0", "--scrypt-log-n", "14", "--log-level", logLevel]
        if plainHTTP { arguments.append("--plain-http") }
        if let database { arguments += ["--database", database] }
        arguments += extra
        let process = try BackgroundProcess(
            SignetBinary.path, arguments, in: folder.url, log: folder.fileURL("\(name)-\(UUID().uuidString.prefix(8)).log"),
            environment: SignetBinary.isolatedEnvironment(in: folder.url, adding: environment))
        guard let url = try await process.waitForLine("url"), let responseKey = try await process.waitForLine("response-key"),
              let port = url.split(separator: ":").last.flatMap({ Int($0) })
        else {
            process.stop(signal: SIGKILL)
            throw ServerTestError(description: "signet serve did not start:\n\(process.output)")
        }
        var pins: [KeyFingerprint] = []
        if !plainHTTP {
            guard let pin = try await process.waitForLine("pin").flatMap(KeyFingerprint.init(string:)) else {
                process.stop(signal: SIGKILL)
                throw ServerTestError(description: "signet serve announced no pin:\n\(process.output)")
            }
            pins.append(pin)
            // With the operator's own certificate there is no backup key of the server's making.
            if process.output.contains("backup-pin: "), let backup = try await process.waitForLine("backup-pin").flatMap(KeyFingerprint.init(string:)) {
                pins.append(backup)
            }
        }
        return ServeProcess(
            process: process, port: port, scheme: plainHTTP ? "http" : "https", pins: pins, responseKey: responseKey, folder: folder,
            responseKeyPath: folder.file(data + "/response-key.pem"))
    }
}

/// Key files and the first admin for servers started as processes.
struct ServerKeys {
    let admin: SoftwareSigner
    let app: SoftwareSigner
    let adminPath: String
    let appPath: String

    /// Writes an admin and an app key into `folder` and runs `signet server init`.
    static func initialise(in folder: TemporaryFolder, database: String? = nil) throws -> ServerKeys {
        let admin = try PrivateKey.generate(.ed25519)
        let app = try PrivateKey.generate(.ed25519)
        let adminPath = try folder.write("admin.pem", try admin.encoded(as: .pem))
        let appPath = try folder.write("app.pem", try app.encoded(as: .pem))
        var arguments = ["server", "init", "--data", folder.file("data"), "--admin-key", adminPath]
        if let database { arguments += ["--database", database] }
        let result = try SignetBinary.run(arguments, in: folder.url)
        #expect(result.status == 0, "\(result)")
        return ServerKeys(admin: try SoftwareSigner(key: admin), app: try SoftwareSigner(key: app), adminPath: adminPath, appPath: appPath)
    }

    var adminSigner: HTTPMessageSigner { HTTPMessageSigner(key: .signer(admin)) }
    var appSigner: HTTPMessageSigner { HTTPMessageSigner(key: .signer(app)) }

    /// Enrols the app key through `server`'s admin API.
    func enrolApp(on server: ServeProcess, name: String = "app") async throws {
        let client = try server.adminClient(signer: adminSigner)
        _ = try await client.enrol(AdminAPI.Enrolment(name: name, publicKey: Base64.encode(app.publicKey.spkiDER)), role: .app)
    }
}
