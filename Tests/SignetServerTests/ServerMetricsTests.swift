import Foundation
import HTTPTypes
import SignetCore
import SignetHTTP
import SignetServer
import SignetTestSupport
import Testing

/// `signet serve --metrics-port`: Prometheus metrics on a listener of their own, scraped while
/// the API is under load; every counter moves by exactly what was sent.
@Suite(.serialized) struct ServerMetricsTests {
    typealias Nodes = ServerNodesTests

    /// The samples of a Prometheus text exposition: `name{labels}` → value.
    static func samples(_ text: String) -> [String: Double] {
        var samples: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            samples[String(line[..<space])] = value
        }
        return samples
    }

    /// `GET /metrics` on the metrics listener at `port`.
    static func scrape(port: Int) async throws -> (status: Int, contentType: String?, text: String) {
        let socket = try LoopbackSocket(port: port)
        defer { socket.close() }
        try await socket.waitUntilConnected()
        let request = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n"
        guard let response = try await socket.exchange(Array(request.utf8)) else {
            throw ServerTestError(description: "the metrics listener closed the connection without an answer")
        }
        return (response.status, response.field("Content-Type"), response.text)
    }

    /// `signet serve --metrics-port 0` for the public URL, with the app enrolled; the port of
    /// the metrics listener, read from the line it printed.
    static func serverWithMetrics(in folder: TemporaryFolder) async throws -> (ServerKeys, ServeProcess, Int) {
        let keys = try ServerKeys.initialise(in: folder)
        let server = try await ServeProcess.start(
            in: folder, extra: ["--public-url", "https://\(Nodes.publicAuthority)", "--metrics-port", "0"], name: "metrics")
        guard let announced = try await server.process.waitForLine("metrics"), announced.hasPrefix("http://127.0.0.1:"),
            announced.hasSuffix("/metrics"), let port = Int(announced.dropFirst("http://127.0.0.1:".count).dropLast("/metrics".count))
        else {
            server.process.stop()
            throw ServerTestError(description: "no metrics line:\n\(server.process.output)")
        }
        try await Nodes.enrolApp(keys, on: server)
        return (keys, server, port)
    }

    @Test func metricsCountWhatWasSentWhileUnderLoad() async throws {
        let (keys, server, port) = try await Self.serverWithMetrics(in: try TemporaryFolder(prefix: "signet-metrics"))
        defer { server.process.stop() }
        let register = try await Nodes.signed(
            .post, "/v1/users", json: UserAPI.Registration(email: "ann@example.com", password: "correct horse battery", displayName: "Ann"),
            signer: keys.appSigner)
        #expect(try await Nodes.send(register, to: server).status == 201)
        let token = try await Nodes.signIn("ann@example.com", keys: keys, on: server)

        let first = try await Self.scrape(port: port)
        #expect(first.status == 200)
        #expect(first.contentType == "text/plain; version=0.0.4; charset=utf-8")
        let before = Self.samples(first.text)

        // The load: health, signed /v1/me, unsigned /v1/me (401), replays (401), and scrapes
        // beside them.
        let (health, me, unsigned, replays) = (120, 40, 15, 10)
        var signed: [(HTTPRequest, [UInt8]?)] = []
        for _ in 0..<me { signed.append(try await Nodes.signed(.get, "/v1/me", signer: keys.appSigner, bearer: token)) }
        // Ten loops at once (a connection each): under the per-address connection limit.
        let statuses = try await withThrowingTaskGroup(of: (String, [Int]).self) { group in
            for loop in 0..<4 {
                group.addTask {
                    var seen: [Int] = []
                    for _ in 0..<(health / 4) { seen.append(try await server.api.send(.get, "/v1/health", signer: nil).status) }
                    return ("health", seen)
                }
                let share = Array(signed[(loop * me / 4)..<((loop + 1) * me / 4)])
                group.addTask {
                    var seen: [Int] = []
                    for request in share { seen.append(try await Nodes.send(request, to: server).status) }
                    return ("me", seen)
                }
            }
            group.addTask {
                var seen: [Int] = []
                for _ in 0..<unsigned { seen.append(try await server.api.send(.get, "/v1/me", signer: nil).status) }
                return ("unsigned", seen)
            }
            group.addTask {
                var seen: [Int] = []
                for _ in 0..<5 { seen.append(try await Self.scrape(port: port).status) }
                return ("scrape", seen)
            }
            var statuses: [String: [Int]] = [:]
            for try await (kind, seen) in group { statuses[kind, default: []] += seen }
            return statuses
        }
        #expect(statuses["health"] == Array(repeating: 200, count: health))
        #expect(statuses["me"] == Array(repeating: 200, count: me))
        #expect(statuses["unsigned"] == Array(repeating: 401, count: unsigned))
        #expect(statuses["scrape"] == Array(repeating: 200, count: 5))
        for request in signed.prefix(replays) { #expect(try await Nodes.send(request, to: server).status == 401) }

        let after = Self.samples(try await Self.scrape(port: port).text)
        func moved(_ sample: String) -> Double { (after[sample] ?? 0) - (before[sample] ?? 0) }
        #expect(moved(#"signet_http_requests_total{route="/v1/health",method="GET",status="200"}"#) == Double(health))
        #expect(moved(#"signet_http_request_duration_seconds_count{route="/v1/health",method="GET",status="200"}"#) == Double(health))
        #expect(moved(#"signet_http_requests_total{route="/v1/me",method="GET",status="200"}"#) == Double(me))
        #expect(moved(#"signet_http_requests_total{route="/v1/me",method="GET",status="401"}"#) == Double(unsigned + replays))
        #expect(moved(#"signet_refusals_total{code="server.unauthorized"}"#) == Double(unsigned + replays))
        // Every signature accepted is remembered: the enrolment's, the registration's, the
        // sign-in's and the load's.
        #expect(after["signet_replay_cache_nonces"] == Double(3 + me))
        #expect(after["signet_session_cache_entries"] == 1)
        #expect(after["signet_password_jobs_waiting"] == 0)
        #expect((after["signet_database_connection_wait_seconds_count"] ?? 0) > 0)

        // The API's own port does not serve them.
        #expect(try await server.api.send(.get, "/metrics", signer: nil).status == 404)
    }

    @Test func rateLimitHitsAreCountedByLimit() async throws {
        let (keys, server, port) = try await Self.serverWithMetrics(in: try TemporaryFolder(prefix: "signet-metrics-limits"))
        defer { server.process.stop() }
        for attempt in 0..<7 {
            let wrong = try await Nodes.signed(
                .post, "/v1/sessions", json: UserAPI.SignIn(email: "x@example.com", password: "wrong-\(attempt)"), signer: keys.appSigner)
            #expect(try await Nodes.send(wrong, to: server).status == (attempt < 5 ? 401 : 429))
        }
        let after = Self.samples(try await Self.scrape(port: port).text)
        #expect(after[#"signet_rate_limit_hits_total{limit="failed-sign-ins-per-account"}"#] == 2)
        #expect(after[#"signet_refusals_total{code="server.rateLimited"}"#] == 2)
        #expect(after[#"signet_http_requests_total{route="/v1/sessions",method="POST",status="429"}"#] == 2)
    }

    /// Hostile use of the metrics listener — 200 silent connections and 100 scrapes at once —
    /// leaves the API's health answering and the listener serving.
    @Test func aFloodOnTheMetricsListenerLeavesHealthAnswering() async throws {
        let (_, server, port) = try await Self.serverWithMetrics(in: try TemporaryFolder(prefix: "signet-metrics-flood"))
        defer { server.process.stop() }
        var silent: [LoopbackSocket] = []
        defer { for socket in silent { socket.close() } }
        for _ in 0..<200 { silent.append(try LoopbackSocket(port: port)) }
        for socket in silent { try await socket.waitUntilConnected() }
        let (scrapes, health) = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            for index in 0..<20 {
                group.addTask {
                    var statuses = (0, 0)
                    for _ in 0..<5 { if try await Self.scrape(port: port).status == 200 { statuses.0 += 1 } }
                    if index.isMultiple(of: 4), try await server.api.send(.get, "/v1/health", signer: nil).status == 200 { statuses.1 += 1 }
                    return statuses
                }
            }
            var total = (0, 0)
            for try await statuses in group { total = (total.0 + statuses.0, total.1 + statuses.1) }
            return total
        }
        #expect(scrapes == 100)
        #expect(health == 5)
        #expect(try await server.api.send(.get, "/v1/health", signer: nil).status == 200)
    }

    @Test func metricsOptionsAreChecked() throws {
        let folder = try TemporaryFolder(prefix: "signet-metrics-options")
        for arguments in [["--metrics-port", "70000"], ["--metrics-host", "0.0.0.0"]] {
            let result = try SignetBinary.run(["serve", "--data", folder.file("data")] + arguments, in: folder.url)
            #expect(result.status == 2, "\(result)")
            #expect(result.stderr.contains("--metrics-"), "\(result)")
        }
    }
}
