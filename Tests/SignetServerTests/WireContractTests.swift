import Foundation
import HTTPTypes
import SignetAPI
import SignetClient
import SignetCore
import SignetHTTP
import SignetServer
import SignetTestSupport
import Testing

/// One wire contract (issue 30): `docs/api/openapi.yaml`, SignetAPI's operations and problem
/// codes, and the routes the server really serves, held to each other in both directions.
@Suite struct WireContractTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The OpenAPI document as JSON (PyYAML reads the YAML: Scripts/test installs it).
    static func document() throws -> [String: Any] {
        let path = root.appendingPathComponent("docs/api/openapi.yaml").path
        let result = try Python.runOK("import json, sys, yaml; json.dump(yaml.safe_load(open(sys.argv[1])), sys.stdout)", [path])
        return try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
    }

    /// Follows a local `$ref`.
    static func resolve(_ node: [String: Any], in document: [String: Any]) throws -> [String: Any] {
        guard let reference = node["$ref"] as? String else { return node }
        var current: Any = document
        for part in reference.dropFirst(2).split(separator: "/") {
            current = try #require((current as? [String: Any])?[String(part)], "\(reference) does not resolve")
        }
        return try resolve(try #require(current as? [String: Any]), in: document)
    }

    /// `(operationId, method, path, statuses)` of every operation in the document.
    static func documentedOperations(_ document: [String: Any]) throws -> [(id: String, method: String, path: String, statuses: Set<Int>)] {
        let paths = try #require(document["paths"] as? [String: Any])
        var operations: [(String, String, String, Set<Int>)] = []
        for (path, item) in paths {
            for (method, operation) in try #require(item as? [String: Any]) where ["get", "post", "put", "delete", "patch", "head"].contains(method) {
                let operation = try #require(operation as? [String: Any])
                let responses = try #require(operation["responses"] as? [String: Any])
                operations.append((
                    try #require(operation["operationId"] as? String), method.uppercased(), path, Set(responses.keys.compactMap { Int($0) })))
            }
        }
        return operations
    }

    @Test func theDocumentsProblemCodesAreSignetAPIs() throws {
        let document = try Self.document()
        let schemas = try #require((document["components"] as? [String: Any])?["schemas"] as? [String: Any])
        let problem = try Self.resolve(try #require(schemas["Problem"] as? [String: Any]), in: document)
        let properties = try #require(problem["properties"] as? [String: Any])
        let codes = try #require((properties["code"] as? [String: Any])?["enum"] as? [String])
        #expect(Set(codes) == Set(ProblemCode.allCases.map(\.code)), "the document's codes: \(codes.sorted())")
        #expect(codes.count == Set(codes).count, "a code is listed twice")
        let statuses = try #require((properties["status"] as? [String: Any])?["enum"] as? [Int])
        #expect(Set(statuses) == Set(ProblemCode.allCases.map(\.status)), "the document's statuses: \(statuses.sorted())")
    }

    @Test func theDocumentsOperationsAreSignetAPIsWithTheirStatuses() throws {
        let documented = try Self.documentedOperations(try Self.document())
        #expect(Set(documented.map(\.id)) == Set(APIOperation.allCases.map(\.rawValue)))
        #expect(documented.count == APIOperation.allCases.count, "an operationId is used twice")
        for entry in documented {
            guard let operation = APIOperation(rawValue: entry.id) else { continue }
            #expect(entry.method == operation.method.rawValue && entry.path == operation.path, "\(entry.id): \(entry.method) \(entry.path)")
            #expect(
                entry.statuses == operation.statuses,
                "\(entry.id): documented \(entry.statuses.sorted()), SignetAPI \(operation.statuses.sorted())")
        }
    }

    /// Every problem response the document lists states the status it is listed under, and
    /// allows only codes of that status.
    @Test func everyDocumentedProblemMatchesItsStatus() throws {
        let document = try Self.document()
        for (path, item) in try #require(document["paths"] as? [String: Any]) {
            for (method, operation) in try #require(item as? [String: Any]) {
                guard let responses = (operation as? [String: Any])?["responses"] as? [String: Any] else { continue }
                for (status, response) in responses {
                    let response = try Self.resolve(try #require(response as? [String: Any]), in: document)
                    let headers = try #require(response["headers"] as? [String: Any], "\(method) \(path) \(status) lists no headers")
                    #expect(headers["Request-Id"] != nil, "\(method) \(path) \(status) lacks Request-Id")
                    guard let code = Int(status), code >= 400 else { continue }
                    let content = try #require(response["content"] as? [String: Any], "\(method) \(path) \(status) has no body")
                    let media = try #require(content[ProblemDocument.mediaType] as? [String: Any], "\(method) \(path) \(status) is not a problem")
                    let allowed = try Self.allowedCodes(try #require(media["schema"] as? [String: Any]), in: document)
                    let expected = Set(ProblemCode.allCases.filter { $0.status == code }.map(\.code))
                    #expect(!allowed.isEmpty && allowed.isSubset(of: expected), "\(method) \(path) \(status) allows \(allowed.sorted())")
                }
            }
        }
    }

    /// The codes a problem schema narrows `code` to (`enum` or `const`, through `allOf`).
    static func allowedCodes(_ schema: [String: Any], in document: [String: Any]) throws -> Set<String> {
        let schema = try resolve(schema, in: document)
        var found: Set<String>?
        if let code = (schema["properties"] as? [String: Any])?["code"] as? [String: Any] {
            if let values = code["enum"] as? [String] { found = Set(values) }
            if let value = code["const"] as? String { found = [value] }
        }
        for part in schema["allOf"] as? [[String: Any]] ?? [] {
            let inner = try allowedCodes(part, in: document)
            if !inner.isEmpty { found = found.map { $0.intersection(inner) } ?? inner }
        }
        return found ?? []
    }

    /// The router serves exactly SignetAPI's operations.
    @Test func theRouterServesExactlySignetAPIsOperations() async throws {
        try await TestServer.with { server in
            let served = Set(server.servedRoutes.map { "\($0.method.rawValue) \($0.path)" })
            let operations = Set(APIOperation.allCases.map { "\($0.method.rawValue) \($0.path)" })
            #expect(served == operations, "served only: \(served.subtracting(operations).sorted()); not served: \(operations.subtracting(served).sorted())")
        }
    }

    /// docs/server.md's problem-code table lists every code with its status, and nothing else.
    @Test func theOperatorsGuideListsEveryCode() throws {
        let guide = try String(contentsOf: Self.root.appendingPathComponent("docs/server.md"), encoding: .utf8)
        let rows = guide.split(separator: "\n").filter { $0.hasPrefix("| `server.") }
        var listed: [String: Int] = [:]
        for row in rows {
            let cells = row.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 2, let status = Int(cells[1]) else { continue }
            listed[cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`"))] = status
        }
        #expect(listed == Dictionary(uniqueKeysWithValues: ProblemCode.allCases.map { ($0.code, $0.status) }), "\(listed)")
    }

    /// An independent client that knows the API only from the document: schemathesis generates
    /// requests for every operation, signed per RFC 9421 by the admin's or the app's key (with
    /// a session where needed), against a `signet serve` process; no answer may be a 5xx, have
    /// an undocumented status, content type or header, or a body off its schema.
    @Test func schemathesisFindsNothingTheDocumentDoesNotSay() async throws {
        let check = try Python.run("import schemathesis, yaml, requests, http_message_signatures")
        try #require(check.status == 0, "python needs schemathesis, pyyaml, requests and http-message-signatures (Scripts/test installs them): \(check)")
        let folder = try TemporaryFolder(prefix: "signet-schemathesis")
        let keys = try ServerKeys.initialise(in: folder)
        let server = try await ServeProcess.start(in: folder)
        defer { server.process.stop() }
        let script = Self.root.appendingPathComponent("Tests/SignetServerTests/Python/schemathesis_run.py")
        // --deadline is a hang guard for the whole run, not a speed expectation.
        let arguments = [
            "--spec", Self.root.appendingPathComponent("docs/api/openapi.yaml").path, "--server", server.url,
            "--cafile", folder.file("data/tls-certificate.pem"), "--admin-key", keys.adminPath, "--app-key", keys.appPath,
            "--examples", "15", "--deadline", "1500",
        ] + server.pins.flatMap { ["--pin", $0.description] }
        let result = try await ProcessRunner.runAsync(try Python.executable(), [script.path] + arguments, in: folder.url)
        #expect(result.status == 0, "\(result)")
        #expect(result.out.contains("\"operations\": \(APIOperation.allCases.count)"), "\(result.out.suffix(2000))")
        let health = try await server.api.send(.get, "/v1/health", signer: nil)
        #expect(health.status == 200, "the server no longer answers after the run")
    }

    /// The lines `signet serve` prints are the ones docs/server.md's table explains.
    @Test func theGuideExplainsEveryLineServePrints() async throws {
        let folder = try TemporaryFolder(prefix: "signet-serve-lines")
        _ = try ServerKeys.initialise(in: folder)
        let server = try await ServeProcess.start(in: folder, extra: ["--metrics-port", "0"])
        _ = try await server.process.waitForLine("trust-root")
        _ = try await server.process.waitForLine("metrics")
        server.process.stop()
        let printed = Set(server.process.output.split(separator: "\n").compactMap { line -> String? in
            guard let colon = line.firstIndex(of: ":"), line[colon...].hasPrefix(": ") else { return nil }
            let key = line[..<colon]
            return key.allSatisfy { $0.isLowercase || $0 == "-" } ? String(key) : nil
        })
        let guide = try String(contentsOf: Self.root.appendingPathComponent("docs/server.md"), encoding: .utf8)
        let section = try #require(guide.components(separatedBy: "## Starting the server").dropFirst().first?.components(separatedBy: "\n## ").first)
        let explained = Set(section.split(separator: "\n").compactMap { row -> String? in
            guard row.hasPrefix("| `") else { return nil }
            let key = row.dropFirst(3).prefix { $0 != "`" }
            return !key.hasPrefix("-") && key.allSatisfy { $0.isLowercase || $0 == "-" } ? String(key) : nil
        })
        #expect(printed == explained, "printed \(printed.sorted()), explained \(explained.sorted())")
        #expect(printed.isSuperset(of: ["url", "pin", "backup-pin", "response-key", "trust-root", "metrics"]))
    }

    /// A head the decoder refuses is answered with a problem document — also when it comes
    /// pipelined behind a request still being answered (then after that answer).
    @Test func aRefusedHeadGetsAProblemDocumentEvenPipelined() async throws {
        try await TestServer.with(plainHTTP: true) { server in
            for lead in ["", "GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"] {
                let socket = try await server.connect()
                defer { socket.close() }
                try await socket.write(Array((lead + "FOO BAR BAZ\r\n\r\n").utf8))
                #expect(try await socket.waitForPeerClose(), "the connection was not closed")
                let text = String(decoding: socket.received, as: UTF8.self)
                let answers = text.components(separatedBy: "HTTP/1.1 ").dropFirst()
                #expect(answers.count == (lead.isEmpty ? 1 : 2), "\(text)")
                let refusal = answers.last ?? ""
                #expect(refusal.hasPrefix("400 Bad Request"), "\(refusal)")
                #expect(refusal.lowercased().contains("content-type: application/problem+json"), "\(refusal)")
                #expect(refusal.lowercased().contains("request-id: "), "\(refusal)")
                #expect(refusal.contains(#""code":"server.badRequest""#) && refusal.contains(#""title":"Bad Request""#), "\(refusal)")
            }
            #expect(try await server.healthStatus() == 200)
        }
    }

    /// A version is spelled one way: digits, no sign, no leading zero (else 400, as documented).
    @Test func aVersionHasOneSpelling() async throws {
        try await TestServer.with { server in
            for version in ["+1", "01", "1.0", "0", "-1", "99999999999999999999"] {
                let answer = try await server.api.send(.get, "/v1/resources/site/\(version)", signer: server.appSigner)
                #expect(answer.status == 400 && answer.problemCode == "server.badRequest", "\(version): \(answer.status) \(answer.text)")
            }
            let unknown = try await server.api.send(.get, "/v1/resources/site/1", signer: server.appSigner)
            #expect(unknown.status == 404)
        }
    }
}
