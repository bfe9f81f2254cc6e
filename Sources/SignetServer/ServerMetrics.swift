import CoreMetrics
import Foundation
import HTTPTypes
import Hummingbird
import Prometheus
import Synchronization

/// What an operator watches on a running server, in Prometheus's text format (docs/server.md
/// "Metrics"): requests and their latency by route and status, refusals by problem code,
/// rate-limit hits, the replay cache, the password queue and the database pool's waits.
///
/// The instruments are swift-metrics' (`Counter`, `Timer`, `Gauge`) made by a swift-prometheus
/// factory over a registry of the server's own, so two servers in one process never mix their
/// figures and nothing global is bootstrapped. Routes are labelled by their pattern
/// (`/v1/resources/{name}`), never by what a client put in the path, so a client cannot grow
/// the label set; unknown paths share the label `unmatched`.
final class ServerMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    let factory: PrometheusMetricsFactory

    struct RequestKey: Hashable {
        let route: String
        let method: String
        let status: Int
    }

    struct Instruments {
        var requests: [RequestKey: CoreMetrics.Counter] = [:]
        var latency: [RequestKey: CoreMetrics.Timer] = [:]
        var refusals: [String: CoreMetrics.Counter] = [:]
        var rateLimits: [String: CoreMetrics.Counter] = [:]
    }

    private let instruments = Mutex(Instruments())
    /// Figures read when scraped: (name, value).
    private let samplers = Mutex([(CoreMetrics.Gauge, @Sendable () -> Double)]())
    let databaseWait: CoreMetrics.Timer
    let replayBatches: CoreMetrics.Counter
    let replayBatchedNonces: CoreMetrics.Counter

    init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        let latency: [Duration] = [
            .microseconds(500), .milliseconds(1), .microseconds(2500), .milliseconds(5), .milliseconds(10), .milliseconds(25),
            .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(10),
        ]
        factory.defaultDurationHistogramBuckets = latency
        factory.durationHistogramBuckets["signet_database_connection_wait_seconds"] = [
            .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(5), .milliseconds(25),
            .milliseconds(100), .milliseconds(500), .seconds(2), .seconds(10),
        ]
        self.factory = factory
        databaseWait = Timer(label: "signet_database_connection_wait_seconds", dimensions: [], factory: factory)
        replayBatches = Counter(label: "signet_replay_batches_total", dimensions: [], factory: factory)
        replayBatchedNonces = Counter(label: "signet_replay_batched_nonces_total", dimensions: [], factory: factory)
    }

    /// Counts one answered request and its time.
    func request(route: String, method: HTTPRequest.Method, status: Int, duration: Duration) {
        let key = RequestKey(route: route, method: method.rawValue, status: status)
        let (counter, timer) = instruments.withLock { instruments in
            if let counter = instruments.requests[key], let timer = instruments.latency[key] { return (counter, timer) }
            let dimensions = [("route", key.route), ("method", key.method), ("status", String(key.status))]
            let counter = Counter(label: "signet_http_requests_total", dimensions: dimensions, factory: factory)
            let timer = Timer(label: "signet_http_request_duration_seconds", dimensions: dimensions, factory: factory)
            instruments.requests[key] = counter
            instruments.latency[key] = timer
            return (counter, timer)
        }
        counter.increment()
        timer.recordNanoseconds(duration.nanoseconds)
    }

    /// Counts one refusal with a problem document of `code` (`server.rateLimited`).
    func refusal(_ code: ProblemCode) {
        counter(in: \.refusals, key: code.code, label: "signet_refusals_total", dimension: "code").increment()
    }

    /// Counts one request refused by the rate limit `limit` (`sign-ins-per-address`, …).
    func rateLimited(_ limit: String) {
        counter(in: \.rateLimits, key: limit, label: "signet_rate_limit_hits_total", dimension: "limit").increment()
    }

    private func counter(
        in table: WritableKeyPath<Instruments, [String: CoreMetrics.Counter]>, key: String, label: String, dimension: String
    ) -> CoreMetrics.Counter {
        instruments.withLock { instruments in
            if let counter = instruments[keyPath: table][key] { return counter }
            let counter = Counter(label: label, dimensions: [(dimension, key)], factory: factory)
            instruments[keyPath: table][key] = counter
            return counter
        }
    }

    /// A gauge named `label`, set to what `read` says each time the metrics are scraped.
    func sample(_ label: String, _ read: @escaping @Sendable () -> Double) {
        let gauge = Gauge(label: label, dimensions: [], factory: factory)
        samplers.withLock { $0.append((gauge, read)) }
    }

    /// Every metric, in Prometheus's text exposition format (version 0.0.4).
    func exposition() -> [UInt8] {
        for (gauge, read) in samplers.withLock({ $0 }) { gauge.record(read()) }
        return registry.emitToBuffer()
    }

    /// The content type of ``exposition()``.
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"
}

extension Duration {
    /// The whole nanoseconds (saturating).
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max : product.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue
    }
}

/// Counts every answer of the API router, by route pattern, method and status, with its time
/// (the outermost middleware, so it sees the problem documents the others made).
struct MetricsMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext
    let metrics: ServerMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        let response = try await next(request, context)
        // Hummingbird names a path no route has (or a method a route does not take) "NotFound".
        let route = context.endpointPath.flatMap { $0 == "NotFound" ? nil : $0 } ?? "unmatched"
        metrics.request(route: route, method: request.method, status: response.status.code, duration: ContinuousClock.now - start)
        return response
    }
}
