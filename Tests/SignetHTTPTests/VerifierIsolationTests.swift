import Foundation
import HTTPTypes
import SignetCore
@testable import SignetHTTP
import SignetTestSupport
import Synchronization
import Testing

/// A key store and a nonce cache in one, recording the isolation each call arrives with.
private final class IsolationProbe: HTTPSignatureKeyStore, NonceCache {
    let key: HTTPVerificationKey
    private let calls = Mutex<[(name: String, isolation: ObjectIdentifier?)]>([])

    init(key: HTTPVerificationKey) { self.key = key }

    var recorded: [(name: String, isolation: ObjectIdentifier?)] { calls.withLock { $0 } }

    nonisolated(nonsending) func verificationKey(for keyID: String) async throws -> HTTPVerificationKey? {
        record("verificationKey", #isolation)
        return key
    }

    nonisolated(nonsending) func insert(nonce: String, keyID: String, until expiry: Date) async throws(HTTPSignatureError) -> Bool {
        record("insert", #isolation)
        return true
    }

    private func record(_ name: String, _ isolation: isolated (any Actor)?) {
        let identity = isolation.map { ObjectIdentifier($0) }
        calls.withLock { $0.append((name, identity)) }
    }
}

/// An actor that verifies a request itself.
private actor Caller {
    func verify(_ request: HTTPRequest, with verifier: HTTPMessageVerifier) async throws -> VerifiedHTTPSignature {
        try await verifier.verify(request, body: nil)
    }
}

@Suite("HTTPMessageVerifier runs on its caller's executor")
struct VerifierIsolationTests {
    @Test("called from an actor, the verifier looks the key up and records the nonce on that actor, with no hop away")
    func callersIsolation() async throws {
        let fixture = try SigningFixture.make(.hmacSHA256)
        let probe = IsolationProbe(key: fixture.verificationKey)
        let verifier = HTTPMessageVerifier(keys: probe, nonceCache: probe, clock: fixedClock(HTTPTestSupport.now))
        var request = HTTPTestSupport.sampleRequest()
        _ = try await SignVerifyTests.signer(fixture).sign(&request)
        let caller = Caller()
        let verified = try await caller.verify(request, with: verifier)
        #expect(verified.keyID == "client-1")
        let recorded = probe.recorded
        #expect(recorded.map(\.name) == ["verificationKey", "insert"])
        #expect(recorded.allSatisfy { $0.isolation == ObjectIdentifier(caller) })
    }
}
