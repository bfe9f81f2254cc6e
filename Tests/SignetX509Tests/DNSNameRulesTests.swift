import SignetX509
import Testing

/// The name rules of docs/certificates.md, one by one: how a presented name matches a host,
/// which wildcards may be presented or issued (the public suffix list's snapshot), OpenSSL's
/// test of a CN as a DNS name, and its name-constraint subtree match.
@Suite("X509: DNS name rules")
struct DNSNameRulesTests {
    @Test(arguments: [
        ("www.example.com", "www.example.com", true),
        ("WWW.Example.COM", "www.example.com", true),
        ("www.example.com.", "www.example.com", true),
        ("*.example.com", "a.example.com", true),
        ("*.example.com", "a.b.example.com", false),
        ("*.example.com", "example.com", false),
        ("*.example.com", ".example.com", false),
        ("*.com", "bank.com", false),
        ("*", "localhost", false),
        ("*.co.uk", "bank.co.uk", false),
        ("*.bank.co.uk", "www.bank.co.uk", true),
        ("f*.example.com", "foo.example.com", false),
        ("www.*.example.com", "www.a.example.com", false),
        ("xn--*.example.com", "xn--bcher-kva.example.com", false),
        ("*.*.example.com", "a.b.example.com", false),
        // An empty label after the * is no base at all: *..co.uk covers nothing under co.uk.
        ("*..co.uk", "a..co.uk", false),
        ("*..example.com", "a..example.com", false),
        ("*.co.uk.", "bank.co.uk", false),
        ("www.example.com.", "www.example.com", true),
        ("*.example.com.", "a.example.com", true),
        // *.ck is a public suffix rule, www.ck its exception: www.ck is registrable.
        ("*.foo.ck", "a.foo.ck", false),
        ("*.www.ck", "a.www.ck", true),
        ("", "example.com", false),
    ])
    func presentedNameMatching(presented: String, host: String, expected: Bool) {
        let normalised = DNSNameRules.normalised(host)
        #expect(normalised.map { DNSNameRules.matches(presented: presented, host: $0) } ?? false == expected, "\(presented) vs \(host)")
    }

    @Test func aNonASCIIHostIsNotNormalised() {
        #expect(DNSNameRules.normalised("bücher.example") == nil)
        #expect(DNSNameRules.normalised("A.Example.") == "a.example")
    }

    @Test func publicSuffixes() {
        for suffix in ["com", "co.uk", "uk", "anything-unlisted", "foo.ck", "xn--55qx5d.cn"] {
            #expect(PublicSuffixList.isPublicSuffix(suffix), "\(suffix)")
        }
        for name in ["example.com", "bank.co.uk", "www.ck", "github.io"] {
            #expect(!PublicSuffixList.isPublicSuffix(name), "\(name)")
        }
        #expect(PublicSuffixList.snapshot.hasPrefix("20"))
    }

    @Test func wildcardsThatMayNotBeIssued() {
        for name in [
            "*.com", "*.co.uk", "*", "*.uk", "f*.example.com", "www.*.example.com", "*.*.example.com", "*.co.uk.", "*.CO.UK.", "*..co.uk",
            "*..example.com", "*.com.",
        ] {
            #expect(DNSNameRules.problemIssuing(name) != nil, "\(name)")
        }
        for name in ["*.example.com", "*.bank.co.uk", "www.example.com"] {
            #expect(DNSNameRules.problemIssuing(name) == nil, "\(name)")
        }
        #expect(DNSNameRules.problemIssuing("*.co.uk")?.contains("co.uk is a public suffix") == true)
    }

    @Test(arguments: [
        ("victim.test", true), ("www.example.com", true), ("www.example.com.", true), ("a_b.example", true),
        ("localhost", false), ("Victim Service", false), ("*.example.com", false), ("-a.example", false),
        ("a-.example", false), ("a..example", false), (".example.com", false), ("a.-b.example", false), ("", false),
        ("bücher.example", false),
    ])
    func commonNamesThatLookLikeDNSNames(value: String, expected: Bool) {
        #expect(DNSNameRules.commonNameIsDNSName(value) == expected, "\(value)")
    }

    @Test(arguments: [
        ("example.com", "example.com", true), ("example.com", "www.example.com", true), ("example.com", "wwwexample.com", false),
        (".example.com", "www.example.com", true), (".example.com", "example.com", false), ("", "anything.test", true),
        ("example.com", "victim.test", false), ("Example.COM", "WWW.example.com", true), ("example.com", "example.com.", true),
    ])
    func nameConstraintSubtrees(base: String, name: String, expected: Bool) {
        #expect(DNSNameRules.constraint(base, holds: name) == expected, "\(base) holds \(name)")
    }
}
