import Foundation
import SignetCore
import SignetServer
import Testing

/// Expected hashes were computed with Python's hashlib.
@Suite("Gravatar")
struct GravatarTests {
    /// SHA-256 of "myemailaddress@example.com".
    static let sha256 = "84059b07d4be67b806386c0aad8070a23f18836bbaae342275dc0a83414c32ee"
    /// MD5 of "myemailaddress@example.com".
    static let md5 = "0bc83cb571cd1c50ba6f3e8a78ef1346"
    /// SHA-256 of " MyEmailAddress@example.com " as it stands (what a missing trim would give).
    static let untrimmedSHA256 = "000a5ecdd9b04c6fcb8ab3e2103aae2faf3612f5313f23196e56cc8bdb241ab5"

    // MARK: Hash

    @Test("the address is trimmed and lower-cased before SHA-256")
    func hashNormalises() {
        #expect(Gravatar.hash(email: " MyEmailAddress@example.com ") == Self.sha256)
        #expect(Gravatar.hash(email: " MyEmailAddress@example.com ") != Self.untrimmedSHA256)
        #expect(Gravatar.hash(email: "myemailaddress@example.com") == Self.sha256)
        #expect(Gravatar.hash(email: "\tMYEMAILADDRESS@EXAMPLE.COM\r\n") == Self.sha256)
        #expect(Gravatar.hash(email: "myemailaddress@example.com", using: .sha256) == Self.sha256)
    }

    @Test("the legacy MD5 form normalises the same way")
    func legacyMD5() {
        #expect(Gravatar.hash(email: " MyEmailAddress@example.com ", using: .legacyMD5) == Self.md5)
        #expect(Gravatar.hash(email: "myemailaddress@example.com", using: .legacyMD5) == Self.md5)
    }

    @Test("hashes are lower-case hex of the right length")
    func hashShape() {
        let lowerHex = Set("0123456789abcdef")
        let sha = Gravatar.hash(email: "Someone@Example.org")
        let md5 = Gravatar.hash(email: "Someone@Example.org", using: .legacyMD5)
        #expect(sha.count == 64)
        #expect(md5.count == 32)
        #expect(sha.allSatisfy { lowerHex.contains($0) })
        #expect(md5.allSatisfy { lowerHex.contains($0) })
        #expect(sha == Gravatar.hash(email: "someone@example.org"))
    }

    @Test("whitespace inside the address is kept (only the ends are trimmed)")
    func innerWhitespaceKept() {
        #expect(Gravatar.hash(email: "my email@example.com") != Gravatar.hash(email: "myemail@example.com"))
    }

    // MARK: URL

    @Test("the URL is https://gravatar.com/avatar/<hash> with no query by default")
    func plainURL() throws {
        let sha = try Gravatar.url(email: " MyEmailAddress@example.com ")
        let md5 = try Gravatar.url(email: "MyEmailAddress@example.com", using: .legacyMD5)
        #expect(sha == "https://gravatar.com/avatar/" + Self.sha256)
        #expect(md5 == "https://gravatar.com/avatar/" + Self.md5)
    }

    @Test("size and fallback become s= and d= query parameters")
    func queryParameters() throws {
        let base = "https://gravatar.com/avatar/" + Self.sha256
        let email = "myemailaddress@example.com"
        let cases: [(size: Int?, fallback: String?, expected: String)] = [
            (200, nil, base + "?s=200"),
            (nil, "identicon", base + "?d=identicon"),
            (80, "404", base + "?s=80&d=404"),
            (1, nil, base + "?s=1"),
            (2048, nil, base + "?s=2048"),
        ]
        for (size, fallback, expected) in cases {
            let url = try Gravatar.url(email: email, size: size, fallback: fallback)
            #expect(url == expected)
        }
        let legacy = try Gravatar.url(email: email, size: 64, fallback: "mp", using: .legacyMD5)
        #expect(legacy == "https://gravatar.com/avatar/" + Self.md5 + "?s=64&d=mp")
    }

    @Test("sizes outside 1…2048 are refused as usage errors", arguments: [0, -1, 2049, Int.max, Int.min])
    func badSize(_ size: Int) {
        let error = #expect(throws: SignetCoreError.self) {
            try Gravatar.url(email: "someone@example.org", size: size)
        }
        guard case .invalidArgument(let detail)? = error else {
            Issue.record("expected invalidArgument, got \(String(describing: error))")
            return
        }
        #expect(detail.contains("\(size)"))
        #expect(error?.category == .usage)
    }

    @Test("a fallback URL is percent-encoded into a single d= parameter")
    func fallbackURLIsEncoded() throws {
        let fallback = "https://example.com/avatar.png?x=1&s=5"
        let url = try Gravatar.url(email: "someone@example.org", size: 100, fallback: fallback)
        let components = try #require(URLComponents(string: url))
        #expect(components.scheme == "https")
        #expect(components.host == "gravatar.com")
        #expect(components.path == "/avatar/" + Gravatar.hash(email: "someone@example.org"))
        let items = components.queryItems ?? []
        #expect(items.map(\.name) == ["s", "d"])
        #expect(items.first { $0.name == "d" }?.value == fallback)
        let query = components.percentEncodedQuery ?? ""
        #expect(!query.contains("/") && !query.contains(":") && !query.contains("?"))
    }

    @Test("a fallback cannot inject other parameters")
    func fallbackCannotInject() throws {
        let url = try Gravatar.url(email: "someone@example.org", fallback: "mp&s=2048")
        let items = try #require(URLComponents(string: url)?.queryItems)
        #expect(items.count == 1)
        #expect(items.first?.name == "d")
        #expect(items.first?.value == "mp&s=2048")
    }
}
