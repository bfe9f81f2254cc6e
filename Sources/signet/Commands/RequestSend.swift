import ArgumentParser
import AsyncHTTPClient
import HTTPTypes
import NIOCore
import SignetCore
import SignetHTTP
import SignetHTTPClient
import SignetTLS
import SignetX509

/// `signet request send`: a tiny curl that signs what it sends, for testing a server.
struct RequestSend: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Sign a request and send it; the response body goes to standard output.",
        discussion: """
        The status line and the response's fields go to standard error (-i: to standard output, \
        before the body). Exit 0 for a 1xx–3xx status, 1 for 4xx–5xx (the server refused) or a \
        server that fails TLS verification (chain, hostname or pin), 4 when it cannot be reached.
        https is verified in full: the chain to the system's roots (or --roots), the hostname, \
        and with --pin/--pins the pinned keys on the validated chain.
        """)

    @OptionGroup var options: RequestOptions
    @OptionGroup var signing: RequestSigningOptions
    @OptionGroup var keyAccess: KeyAccessOptions
    @OptionGroup var tls: TLSOptions

    @Flag(name: .shortAndLong, help: "Print the status line and response fields on standard output before the body.")
    var include = false

    @Option(help: ArgumentHelp("Give up after this many seconds.", valueName: "SECONDS"))
    var timeout: Int64 = 30

    @Option(help: ArgumentHelp("The most response bytes read.", valueName: "BYTES"))
    var maxResponse = 64 << 20

    @Flag(name: .shortAndLong, help: "Print nothing on standard error.")
    var quiet = false

    static let maximumBody = 256 << 20

    func run() async throws {
        var request = try options.request()
        let body = try options.body.map { try FileInput.readAll(path: $0, limit: Self.maximumBody) }
        try await signing.sign(&request, options: options, keyAccess: keyAccess, body: body)
        if request.scheme?.lowercased() == "https" {
            try await sendPinned(request, body: body)
            return
        }
        guard tls.isEmpty else {
            throw ValidationError("--roots, --pin, --pins and --pinned-self-signed apply to https URLs")
        }
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        let response: HTTPClientResponse
        let received: ByteBuffer
        do {
            response = try await client.execute(try HTTPClientRequest(request, body: body), timeout: .seconds(timeout))
            received = try await response.body.collect(upTo: maxResponse)
        } catch {
            try? await client.shutdown()
            throw SignetCoreError.io(path: options.url, detail: "\(error)")
        }
        try? await client.shutdown()
        try report(
            version: "\(response.version.major).\(response.version.minor)", status: Int(response.status.code),
            reason: response.status.reasonPhrase, fields: response.headers.map { ($0.name, $0.value) },
            body: Array(received.readableBytesView))
    }

    /// https: through the client that verifies chain, hostname and pins.
    func sendPinned(_ request: HTTPRequest, body: [UInt8]?) async throws {
        let (host, _) = try PinnedHTTPSClient.hostAndPort(request.authority ?? "", defaultPort: 443)
        let client = PinnedHTTPSClient(trust: try tls.policy(host: host), timeout: .seconds(timeout), maximumResponseSize: maxResponse)
        let response = try await client.send(request, body: body)
        try report(
            version: response.version, status: response.head.status.code, reason: response.head.status.reasonPhrase,
            fields: response.head.headerFields.map { ($0.name.rawName, $0.value) }, body: response.body)
    }

    func report(version: String, status: Int, reason: String, fields: [(String, String)], body: [UInt8]) throws {
        // What the server sent is escaped: its reason phrase and fields cannot drive the terminal.
        let head = "HTTP/\(version) \(status) \(PrintableText.terminalSafe(reason))\n"
            + fields.map { "\(PrintableText.terminalSafe($0.0)): \(PrintableText.terminalSafe($0.1))\n" }.joined()
        if include {
            Console.write(head + "\n")
        } else if !quiet {
            Console.writeError(head)
        }
        Console.write(bytes: body)
        if status >= 400 { throw ExitCode(1) }
    }
}
