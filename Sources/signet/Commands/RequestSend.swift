import ArgumentParser
import AsyncHTTPClient
import HTTPTypes
import NIOCore
import SignetCore
import SignetHTTP
import SignetHTTPClient

/// `signet request send`: a tiny curl that signs what it sends, for testing a server.
struct RequestSend: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Sign a request and send it; the response body goes to standard output.",
        discussion: "The status line and the response's fields go to standard error (-i: to standard output, before the body). Exit 0 for a 1xx–3xx status, 1 for 4xx–5xx (the server refused), 4 when the server cannot be reached.")

    @OptionGroup var options: RequestOptions
    @OptionGroup var signing: RequestSigningOptions
    @OptionGroup var keyAccess: KeyAccessOptions

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
        let head = "HTTP/\(response.version.major).\(response.version.minor) \(response.status.code) \(response.status.reasonPhrase)\n"
            + response.headers.map { "\($0.name): \($0.value)\n" }.joined()
        if include {
            Console.write(head + "\n")
        } else if !quiet {
            Console.writeError(head)
        }
        Console.write(bytes: Array(received.readableBytesView))
        if response.status.code >= 400 { throw ExitCode(1) }
    }
}
