import Foundation
import HTTPTypes
import SignetCore
@testable import SignetHTTP
import SignetTestSupport
import Testing

@Suite("InMemoryNonceCache")
struct NonceCacheTests {
    @Test("a nonce is accepted once per key id")
    func secondInsert() async throws {
        let clock = ManualClock(HTTPTestSupport.now)
        let cache = InMemoryNonceCache(capacity: 10, clock: clock.wallClock)
        let until = clock.now.addingTimeInterval(60)
        #expect(try await cache.insert(nonce: "n1", keyID: "k1", until: until))
        #expect(try await cache.insert(nonce: "n1", keyID: "k1", until: until) == false)
        #expect(try await cache.insert(nonce: "n1", keyID: "k2", until: until))
        #expect(try await cache.insert(nonce: "n2", keyID: "k1", until: until))
        // Key id and nonce are kept apart: ("k", "1n2") is not ("k1", "n2").
        #expect(try await cache.insert(nonce: "1n2", keyID: "k", until: until))
        #expect(cache.count == 4)
        #expect(cache.capacity == 10)
        #expect(InMemoryNonceCache(capacity: 0).capacity == 1)
    }

    @Test("an expired entry is forgotten: its nonce is accepted again and the count drops")
    func expiry() async throws {
        let clock = ManualClock(HTTPTestSupport.now)
        let cache = InMemoryNonceCache(capacity: 10, clock: clock.wallClock)
        #expect(try await cache.insert(nonce: "a", keyID: "k", until: clock.now.addingTimeInterval(10)))
        #expect(try await cache.insert(nonce: "b", keyID: "k", until: clock.now.addingTimeInterval(100)))
        clock.advance(by: 9)
        #expect(try await cache.insert(nonce: "a", keyID: "k", until: clock.now.addingTimeInterval(10)) == false)
        clock.advance(by: 1)  // now equals a's expiry: it has expired
        #expect(try await cache.insert(nonce: "a", keyID: "k", until: clock.now.addingTimeInterval(10)))
        #expect(cache.count == 2)
        clock.advance(by: 200)
        #expect(try await cache.insert(nonce: "c", keyID: "k", until: clock.now.addingTimeInterval(10)))
        #expect(cache.count == 1)
        #expect(try await cache.insert(nonce: "b", keyID: "k", until: clock.now.addingTimeInterval(10)))
    }

    @Test("a nonce inserted again after expiring does not hold back the sweep of the ones after it, and a replay keeps the first expiry")
    func reinsertedNonce() async throws {
        let clock = ManualClock(HTTPTestSupport.now)
        let cache = InMemoryNonceCache(capacity: 10, clock: clock.wallClock)
        let start = clock.now
        #expect(try await cache.insert(nonce: "x", keyID: "k", until: start.addingTimeInterval(100)))
        #expect(try await cache.insert(nonce: "a", keyID: "k", until: start.addingTimeInterval(10)))
        #expect(try await cache.insert(nonce: "b", keyID: "k", until: start.addingTimeInterval(20)))
        clock.advance(by: 15)
        // a has expired (x, ahead of it, has not) and comes again, now until 215.
        #expect(try await cache.insert(nonce: "a", keyID: "k", until: start.addingTimeInterval(215)))
        #expect(cache.count == 3)
        // A replay of a that asks for longer is refused and changes nothing.
        #expect(try await cache.insert(nonce: "a", keyID: "k", until: start.addingTimeInterval(5000)) == false)
        clock.advance(by: 135)
        // At 150 x and b have expired: both swept, though a's first entry, between them,
        // expired while a is held again.
        #expect(try await cache.insert(nonce: "c", keyID: "k", until: start.addingTimeInterval(1000)))
        #expect(cache.count == 2)
        #expect(try await cache.insert(nonce: "a", keyID: "k", until: start.addingTimeInterval(1000)) == false)
        clock.advance(by: 65)
        // At 215 a's second expiry, not the replay's, has come.
        #expect(try await cache.insert(nonce: "a", keyID: "k", until: start.addingTimeInterval(1000)))
        #expect(cache.count == 2)
    }

    @Test(
        "full of unexpired nonces it refuses new ones but still spots replays; once they expire it accepts again (whatever room was reserved: the default, none, less, more)",
        arguments: [nil, -1, 0, 2, 1000])
    func capacity(reserving reserved: Int?) async throws {
        let clock = ManualClock(HTTPTestSupport.now)
        let cache = InMemoryNonceCache(capacity: 4, reserving: reserved, clock: clock.wallClock)
        let until = clock.now.addingTimeInterval(100)
        try await Self.fill(cache, "n", 0..<4, lasting: 100, clock: clock)
        await #expect(throws: HTTPSignatureError.replayCacheFull(detail: "4 recent nonces are held, the most this server keeps")) { try await cache.insert(nonce: "n4", keyID: "k", until: until) }
        #expect(try await cache.insert(nonce: "n0", keyID: "k", until: until) == false)
        #expect(cache.count == 4)
        clock.advance(by: 99)
        await #expect(throws: HTTPSignatureError.replayCacheFull(detail: "4 recent nonces are held, the most this server keeps")) { try await cache.insert(nonce: "n4", keyID: "k", until: until) }
        clock.advance(by: 1)
        #expect(try await cache.insert(nonce: "n4", keyID: "k", until: clock.now.addingTimeInterval(100)))
        #expect(cache.count == 1)
    }

    @Test("a flood of ten times the capacity, with time moving on, keeps the count within the capacity")
    func flood() async throws {
        let clock = ManualClock(HTTPTestSupport.now)
        // Short-lived nonces: every insert succeeds and only the unexpired ones are held.
        let cache = InMemoryNonceCache(capacity: 16, clock: clock.wallClock)
        for index in 0..<160 {
            #expect(try await cache.insert(nonce: "n\(index)", keyID: "k", until: clock.now.addingTimeInterval(8)), "insert \(index)")
            let count = cache.count
            #expect(count <= 8, "after insert \(index) the cache holds \(count)")
            clock.advance(by: 1)
        }
        // Long-lived nonces: the first `capacity` are held, the rest refused, never more held.
        let full = InMemoryNonceCache(capacity: 16, clock: clock.wallClock)
        for index in 0..<160 {
            let until = clock.now.addingTimeInterval(1000)
            if index < 16 {
                #expect(try await full.insert(nonce: "m\(index)", keyID: "k", until: until))
            } else {
                await #expect(throws: HTTPSignatureError.replayCacheFull(detail: "16 recent nonces are held, the most this server keeps")) { try await full.insert(nonce: "m\(index)", keyID: "k", until: until) }
            }
            #expect(full.count <= 16)
            clock.advance(by: 1)
        }
        #expect(full.count == 16)
        clock.advance(by: 1000)
        #expect(try await full.insert(nonce: "m0", keyID: "k", until: clock.now.addingTimeInterval(1000)))
        #expect(full.count == 1)
    }

    @Test("after thousands of expired entries are pruned, the live ones are still refused as replays and the rest forgotten")
    func pruning() async throws {
        let clock = ManualClock(HTTPTestSupport.now)
        let cache = InMemoryNonceCache(capacity: 5000, clock: clock.wallClock)
        // 3,000 that expire, then 3,000 that do not: inserting the second lot sweeps the first
        // and compacts the insertion order (more than 1,024 swept, over half of it).
        try await Self.fill(cache, "old", 0..<3000, lasting: 10, clock: clock)
        clock.advance(by: 10)
        try await Self.fill(cache, "new", 0..<3000, lasting: 100, clock: clock)
        #expect(cache.count == 3000)
        for index in stride(from: 0, to: 3000, by: 97) {
            #expect(try await cache.insert(nonce: "new\(index)", keyID: "k", until: clock.now.addingTimeInterval(100)) == false, "new\(index)")
        }
        // Full: a sweep of everything finds nothing expired, so a new nonce is refused.
        try await Self.fill(cache, "new", 3000..<5000, lasting: 100, clock: clock)
        await #expect(throws: HTTPSignatureError.replayCacheFull(detail: "5000 recent nonces are held, the most this server keeps")) {
            try await cache.insert(nonce: "one-more", keyID: "k", until: clock.now.addingTimeInterval(100))
        }
        // The old ones were forgotten: accepted again, once time lets the new ones go.
        clock.advance(by: 100)
        #expect(try await cache.insert(nonce: "old0", keyID: "k", until: clock.now.addingTimeInterval(10)))
        #expect(cache.count == 1)
    }

    @Test("full, with a long-lived nonce first, it drops the expired ones behind it for a new nonce and still refuses the long-lived one")
    func fullBehindALongLivedNonce() async throws {
        let clock = ManualClock(HTTPTestSupport.now)
        let cache = InMemoryNonceCache(capacity: 2000, clock: clock.wallClock)
        // The first nonce outlives the others, so sweeping from the front stops at it.
        #expect(try await cache.insert(nonce: "long", keyID: "k", until: clock.now.addingTimeInterval(1000)))
        try await Self.fill(cache, "short", 1..<2000, lasting: 10, clock: clock)
        await #expect(throws: HTTPSignatureError.replayCacheFull(detail: "2000 recent nonces are held, the most this server keeps")) {
            try await cache.insert(nonce: "refused", keyID: "k", until: clock.now.addingTimeInterval(10))
        }
        clock.advance(by: 10)
        // Full, but the short-lived ones have expired behind the long-lived one: dropped, room made.
        #expect(try await cache.insert(nonce: "new", keyID: "k", until: clock.now.addingTimeInterval(10)))
        #expect(cache.count == 2)
        #expect(try await cache.insert(nonce: "long", keyID: "k", until: clock.now.addingTimeInterval(10)) == false)
        #expect(try await cache.insert(nonce: "new", keyID: "k", until: clock.now.addingTimeInterval(10)) == false)
        #expect(try await cache.insert(nonce: "short5", keyID: "k", until: clock.now.addingTimeInterval(10)))
        #expect(cache.count == 3)
    }

    /// Inserts the nonces PREFIX0, PREFIX1, … for `range` under key id `k`, each lasting
    /// `seconds`, and expects every one accepted.
    static func fill(_ cache: InMemoryNonceCache, _ prefix: String, _ range: Range<Int>, lasting seconds: TimeInterval, clock: ManualClock) async throws {
        for index in range {
            #expect(try await cache.insert(nonce: "\(prefix)\(index)", keyID: "k", until: clock.now.addingTimeInterval(seconds)), "\(prefix)\(index)")
        }
    }

    @Test("of many concurrent inserts of one nonce exactly one succeeds")
    func concurrentInserts() async throws {
        let cache = InMemoryNonceCache(capacity: 100, clock: fixedClock(HTTPTestSupport.now))
        let until = Date(timeIntervalSince1970: TimeInterval(HTTPTestSupport.now + 60))
        let results = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<50 {
                group.addTask { try await cache.insert(nonce: "same", keyID: "k", until: until) }
            }
            var all: [Bool] = []
            for try await result in group { all.append(result) }
            return all
        }
        #expect(results.count == 50)
        #expect(results.filter({ $0 }).count == 1)
        #expect(cache.count == 1)
    }
}

@Suite("LegacyHMACProfile (METHOD&URL&BODY&TIMESTAMP, HMAC-SHA512)")
struct LegacyHMACProfileTests {
    static let secret = SecretBytes(Array("legacy-shared-secret".utf8))
    /// Computed with python3:
    /// `base64.b64encode(hmac.new(b"legacy-shared-secret", b'POST&https://api.example.com/x&{"a":1}&1700000000', hashlib.sha512).digest())`
    static let expectedMAC = "leCG86Yu1uZnrgeO6xIlojAVibzTLVpBp3TSAh7+hCznASCcjYa2poSAQUJhei7w0bC9BIInAcc/mz68t0YI8Q=="
    static let url = "https://api.example.com/x"
    static let body = Array("{\"a\":1}".utf8)
    static let timestampField = HTTPField.Name("X-Timestamp")!
    static let now = HTTPTestSupport.now

    static func profile(at seconds: Int64 = HTTPTestSupport.now, secret: SecretBytes = LegacyHMACProfileTests.secret) -> LegacyHMACProfile {
        var profile = LegacyHMACProfile(secret: secret, accepting: .queryBodyAmbiguityAndReplay)
        profile.clock = fixedClock(seconds)
        return profile
    }

    /// The request signed at ``now``.
    static func signed() throws -> HTTPRequest {
        var request = HTTPRequest(method: .post, scheme: "https", authority: "api.example.com", path: "/x")
        try profile().sign(&request, url: url, body: body)
        return request
    }

    static func error(
        _ request: HTTPRequest, at seconds: Int64 = HTTPTestSupport.now, url: String = LegacyHMACProfileTests.url,
        body: [UInt8] = LegacyHMACProfileTests.body
    ) throws -> HTTPSignatureError {
        try #require(throws: HTTPSignatureError.self) { try profile(at: seconds).verify(request, url: url, body: body) }
    }

    @Test("the documented, unfixable weakness: a query's tail moved into an &-separated body keeps the MAC (why the profile is opt-in)")
    func queryBodyAmbiguity() throws {
        var request = HTTPRequest(method: .post, scheme: "https", authority: "api.example.com", path: "/x?a=1&b=2")
        try Self.profile().sign(&request, url: "https://api.example.com/x?a=1&b=2", body: Array("c=3".utf8))
        var moved = request
        moved.path = "/x?a=1"
        try Self.profile().verify(moved, url: "https://api.example.com/x?a=1", body: Array("b=2&c=3".utf8))
        #expect(
            LegacyHMACProfile.stringToSign(method: "POST", url: "https://api.example.com/x?a=1&b=2", body: Array("c=3".utf8), timestamp: 1)
                == LegacyHMACProfile.stringToSign(method: "POST", url: "https://api.example.com/x?a=1", body: Array("b=2&c=3".utf8), timestamp: 1))
    }

    @Test("the string to sign is METHOD&URL&BODY&TIMESTAMP, byte for byte")
    func stringToSign() {
        let bytes = LegacyHMACProfile.stringToSign(method: "POST", url: Self.url, body: Self.body, timestamp: 1_700_000_000)
        #expect(bytes == Array("POST&https://api.example.com/x&{\"a\":1}&1700000000".utf8))
        let binary = LegacyHMACProfile.stringToSign(method: "PUT", url: "u", body: [0xFF, 0x00, 0x26], timestamp: 5)
        #expect(binary == Array("PUT&u&".utf8) + [0xFF, 0x00, 0x26] + Array("&5".utf8))
    }

    @Test("the MAC equals python3's hmac/hashlib/base64 HMAC-SHA512 of the string to sign")
    func mac() throws {
        #expect(try Self.profile().mac(method: "POST", url: Self.url, body: Self.body, timestamp: 1_700_000_000) == Self.expectedMAC)
        #expect(try Self.profile().mac(method: "POST", url: Self.url, body: Self.body, timestamp: 1_700_000_001) != Self.expectedMAC)
    }

    @Test("sign adds the timestamp and the MAC; verify accepts them within the window either way")
    func signAndVerify() throws {
        let request = try Self.signed()
        #expect(request.headerFields[Self.timestampField] == "1700000000")
        #expect(request.headerFields[.signature] == Self.expectedMAC)
        #expect(try Self.profile().verify(request, url: Self.url, body: Self.body) == Self.now)
        #expect(try Self.profile(at: Self.now + 300).verify(request, url: Self.url, body: Self.body) == Self.now)
        #expect(try Self.profile(at: Self.now - 300).verify(request, url: Self.url, body: Self.body) == Self.now)
    }

    @Test("a changed body, URL, method or timestamp, or another secret, fails with signatureInvalid")
    func tampered() throws {
        let request = try Self.signed()
        let invalid = HTTPSignatureError.signatureInvalid(label: "Signature")
        #expect(try Self.error(request, body: Array("{\"a\":2}".utf8)) == invalid)
        #expect(try Self.error(request, body: []) == invalid)
        #expect(try Self.error(request, url: "https://api.example.com/y") == invalid)
        var method = request
        method.method = .put
        #expect(try Self.error(method) == invalid)
        var stamp = request
        stamp.headerFields[Self.timestampField] = "1700000001"
        #expect(try Self.error(stamp) == invalid)
        let other = try #require(throws: HTTPSignatureError.self) {
            try Self.profile(secret: SecretBytes(Array("another-secret".utf8))).verify(request, url: Self.url, body: Self.body)
        }
        #expect(other == invalid)
    }

    @Test("a timestamp outside the window, either way, is refused")
    func window() throws {
        let request = try Self.signed()
        #expect(try Self.error(request, at: Self.now + 301) == .tooOld(created: Self.now, now: Self.now + 301, maxAge: 300))
        #expect(try Self.error(request, at: Self.now - 301) == .createdInFuture(created: Self.now, now: Self.now - 301, skew: 300))
    }

    @Test("a missing or malformed timestamp, or a missing or malformed signature, is refused")
    func malformed() throws {
        let request = try Self.signed()
        var noStamp = request
        noStamp.headerFields[Self.timestampField] = nil
        #expect(try Self.error(noStamp) == .missingParameter("X-Timestamp"))
        for bad in ["soon", "1700000000.5", "0x6553F100", "1234567890123", "", "0\(Self.now)", "+\(Self.now)"] {
            var stamp = request
            stamp.headerFields[Self.timestampField] = bad
            #expect(try Self.error(stamp).malformedFieldName == "X-Timestamp", "timestamp \"\(bad)\"")
        }
        var noSignature = request
        noSignature.headerFields[.signature] = nil
        #expect(try Self.error(noSignature).code == "missingSignature")
        let shortMAC = Base64.encode([UInt8](repeating: 7, count: 32))
        for bad in ["not base64!", shortMAC, String(Self.expectedMAC.dropLast(2)), "", "sig1=:\(Self.expectedMAC):"] {
            var signature = request
            signature.headerFields[.signature] = bad
            #expect(try Self.error(signature).malformedFieldName == "Signature", "signature \"\(bad)\"")
        }
        // An empty secret is the caller's mistake, reported as such.
        let empty = try #require(throws: HTTPSignatureError.self) {
            try Self.profile(secret: SecretBytes([UInt8]())).verify(request, url: Self.url, body: Self.body)
        }
        #expect(empty.code == "invalidArgument")
    }
}
