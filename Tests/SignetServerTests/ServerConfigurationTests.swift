import SignetServer
import SignetTestSupport
import Testing

/// Intervals the server counts in whole seconds are refused at start-up when they are shorter
/// than one: a session would end at once, and every attempt would open a new rate-limit window.
@Suite struct ServerConfigurationTests {
    @Test func intervalsUnderASecondAreRefused() async throws {
        let cases: [(String, @Sendable (inout ServerConfiguration) -> Void)] = [
            ("a session must last at least one second", { $0.sessionLifetime = .milliseconds(500) }),
            ("the rate-limit window must be at least one second", { $0.rateLimitWindow = .zero }),
        ]
        for (detail, configure) in cases {
            let error = try await thrownAsync(ServerError.self) { try await TestServer.with(configure: configure) { _ in } }
            #expect(error == .configuration(detail: detail))
        }
    }
}
