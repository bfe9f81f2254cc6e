import Foundation
import SignetCore
import SignetTestSupport
import SignetX509
import SignetX509TestSupport
import Testing
import X509

extension Tag {
    /// Tests that hold Signet's verdicts to another implementation's, run live.
    @Tag static var differential: Self
}

/// Issue 29: for every case of the corpus (``OpenSSLCorpus``: EKU × purposes, key usage, name
/// constraints, host names and wildcards, path length, validity, cross-signed meshes),
/// `ChainVerifier.verify(…, allowCommonNameFallback: true)` (openssl falls back to the CN) must
/// reach the verdict `openssl verify -purpose sslserver|sslclient|any -CAfile … -untrusted …
/// [-verify_hostname H | -verify_ip A] -attime T` reaches, run live — except the documented
/// divergences of ``divergences`` (docs/certificates.md), each asserted the way it goes.
/// When both refuse, the kind of refusal must agree too: a name mismatch alone for openssl
/// (errors 62, 64) is `hostnameMismatch` for Signet, a chain error never is.
@Suite("X509: chain verdicts equal openssl verify -purpose's (Differential)", .tags(.differential))
struct OpenSSLDifferentialTests {
    /// Where Signet knowingly decides otherwise than OpenSSL 3.0.
    enum Divergence: Sendable {
        /// openssl accepts; Signet refuses with `signetCode`, for `reason`.
        case opensslAccepts(signetCode: SignetErrorCode<X509Error>, reason: String)
        /// Signet accepts; openssl refuses, for `reason`.
        case signetAccepts(reason: String)
        /// openssl refuses; Signet may go either way, for `reason` (only its time is checked).
        case opensslRefusesSignetEither(reason: String)
        /// Both refuse, Signet with `signetCode` whatever openssl's errors, for `reason` (openssl
        /// refuses only the name where Signet refuses the chain).
        case bothRefuse(signetCode: SignetErrorCode<X509Error>, reason: String)
    }

    /// The documented divergences, by case name.
    static let divergences: [String: Divergence] = {
        var table: [String: Divergence] = [:]
        let sgc = "Signet does not honour the legacy Microsoft Server Gated Crypto usage (msSGC) for TLS servers; OpenSSL 3.0 still takes it for sslserver"
        for ca in ["none", "server"] {
            table["eku/leaf-sgc/ca-\(ca)/root-none/server"] = .opensslAccepts(signetCode: "chainInvalid", reason: sgc)
        }
        let rootWithoutBasicConstraints =
            "OpenSSL takes a v3 self-signed anchor without basicConstraints whose key usage allows keyCertSign as a CA; swift-certificates requires CA:TRUE on every issuer, the anchor included"
        for purpose in ["server", "any"] {
            table["ku/root-no-basicConstraints/\(purpose)"] = .opensslAccepts(signetCode: "chainInvalid", reason: rootWithoutBasicConstraints)
        }
        let constrainedCN =
            "OpenSSL falls back to the CN whenever the leaf has no DNS name; Signet never does when a certificate of the path carries name constraints"
        for place in ["permitted-on-ca", "excluded-on-ca", "permitted-on-root", "excluded-on-root"] {
            table["nc/\(place)/cn-in/dns-www.example.com/server"] = .opensslAccepts(signetCode: "hostnameMismatch", reason: constrainedCN)
        }
        table["nc/rfc822Name/dns-www.example.com/server"] = .opensslAccepts(
            signetCode: "chainInvalid", reason: "swift-certificates refuses every chain that carries an rfc822Name name constraint (not supported upstream)")
        table["nc/directoryName/subject-in/server"] = .opensslAccepts(
            signetCode: "chainInvalid", reason: "swift-certificates refuses every chain that carries a directoryName name constraint (not supported upstream)")
        table["names/san-wildcard-co.uk/dns-bank.co.uk/server"] = .opensslAccepts(
            signetCode: "hostnameMismatch",
            reason: "co.uk is a public suffix: a wildcard over it matches nothing for Signet, as for browsers; OpenSSL only wants two labels after the *")
        table["names/san-wildcard-partial/dns-foo.example.com/server"] = .opensslAccepts(
            signetCode: "hostnameMismatch", reason: "Signet takes a wildcard only as the whole left-most label; OpenSSL matches f*.example.com")
        let trailingDot =
            "Signet matches a DNS name with a trailing dot to the host without it and holds it to the name constraints without it; OpenSSL's nc_dns compares it with its dot, so an excluded subtree misses it, and its host check refuses the name"
        for (label, host) in [("a.evil.com-dot", "a.evil.com"), ("evil.com-dot", "evil.com"), ("wildcard.evil.com-dot", "a.evil.com"), ("localhost-dot", "localhost")] {
            table["nc/excluded-evil/san-\(label)/no-host/server"] = .opensslAccepts(signetCode: "chainInvalid", reason: trailingDot)
            table["nc/excluded-evil/san-\(label)/dns-\(host)/server"] = .bothRefuse(signetCode: "chainInvalid", reason: trailingDot)
        }
        table["names/san-www/dns-www.example.com./server"] = .signetAccepts(
            reason: "Signet ignores one trailing dot of the host, as curl and browsers do; OpenSSL refuses www.example.com. against DNS:www.example.com")
        table["names/san-www-dot/dns-www.example.com/server"] = .signetAccepts(
            reason: "Signet ignores one trailing dot of a presented name, as curl does; OpenSSL refuses www.example.com against DNS:www.example.com.")
        let nameOnlyBuilder =
            "without key identifiers OpenSSL's builder takes the first same-named issuer and fails its signature (error 7); Signet's bounded search may or may not reach the anchor within its budget"
        for width in 4...7 {
            table["mesh/w\(width)-noaki/root-key4/server"] = .opensslRefusesSignetEither(reason: nameOnlyBuilder)
            for purpose in ["server", "client", "any"] {
                table["mesh/w\(width)-noaki/root-key4-clientAuth/\(purpose)"] = .opensslRefusesSignetEither(reason: nameOnlyBuilder)
            }
        }
        return table
    }()

    /// The codes of a refusal; anything else is a failure of the test's own making.
    static let verdictCodes: Set<SignetErrorCode<X509Error>> = ["chainInvalid", "hostnameMismatch", "pathBuildingLimit"]

    /// openssl's X509_V_ERR_HOSTNAME_MISMATCH and X509_V_ERR_IP_ADDRESS_MISMATCH.
    static let nameMismatchErrors: Set<Int> = [62, 64]

    @Test("each family: Signet's verdict is openssl verify's, or a documented divergence", arguments: OpenSSLCorpus.Family.allCases)
    func verdicts(family: OpenSSLCorpus.Family) async throws {
        let openssl = try Self.opensslPath()
        let extensions = try Self.extensionsFile()
        let folder = try TemporaryFolder(prefix: "signet-differential")
        defer { folder.remove() }
        let corpus = try await OpenSSLCorpus.make(families: [family], extensions: extensions, in: folder.url)
        try #require(!corpus.cases.isEmpty, "the \(family) family has no cases")
        for outcome in try await Self.evaluate(corpus.cases, openssl: openssl, in: folder.url) {
            Self.judge(outcome)
        }
    }

    @Test("every documented divergence names a case, and case names are unique")
    func divergencesNameCases() {
        let names = OpenSSLCorpus.caseNames()
        let unique = Set(names)
        #expect(unique.count == names.count, "two cases share a name")
        for name in Self.divergences.keys.sorted() {
            #expect(unique.contains(name), "the divergence \(name) is not a case of the corpus")
        }
    }

    @Test("without allowCommonNameFallback a leaf named only by its CN is refused for that name, which openssl accepts")
    func commonNameFallbackIsOffByDefault() async throws {
        let openssl = try Self.opensslPath()
        let extensions = try Self.extensionsFile()
        let folder = try TemporaryFolder(prefix: "signet-differential-cn")
        defer { folder.remove() }
        let corpus = try await OpenSSLCorpus.make(families: [.names], extensions: extensions, in: folder.url)
        for name in [
            "names/cn-www/dns-www.example.com/server", "names/cn-wildcard/dns-a.example.com/server",
            "names/san-ip-cn-www/dns-www.example.com/server",
        ] {
            let testCase = try #require(corpus.testCase(named: name), "no case \(name)")
            let verdict = try await ProcessRunner.runAsync(openssl, testCase.opensslVerifyArguments, in: folder.url)
            #expect(verdict.status == 0, "\(name): openssl should accept (it falls back to the CN): \(verdict)")
            let (leaf, intermediates, roots) = try Self.certificates(of: testCase)
            let verifier = ChainVerifier(anchors: .certificates(roots), validationTime: testCase.time)
            let error = try await thrownAsync(X509Error.self) {
                try await verifier.verify(leaf: leaf, intermediates: intermediates, hostname: testCase.hostname, purpose: testCase.purpose)
            }
            #expect(error.code == "hostnameMismatch", "\(name): \(error)")
            let chain = try await verifier.verify(
                leaf: leaf, intermediates: intermediates, hostname: testCase.hostname, purpose: testCase.purpose, allowCommonNameFallback: true)
            #expect(chain.count == 3, "\(name): \(chain.map { $0.subject.description })")
        }
    }

    @Test("signet cert verify --purpose, --allow-cn-fallback and --at exit as openssl verify -purpose does")
    func commandLine() async throws {
        let openssl = try Self.opensslPath()
        try #require(
            FileManager.default.isExecutableFile(atPath: SignetBinary.path), "no signet binary at \(SignetBinary.path) (swift build makes it)")
        let extensions = try Self.extensionsFile()
        let folder = try TemporaryFolder(prefix: "signet-differential-cli")
        defer { folder.remove() }
        let corpus = try await OpenSSLCorpus.make(families: [.keyUsage, .names, .validity], extensions: extensions, in: folder.url)
        let runs: [(String, [String])] = [
            ("ku/leaf-keyEncipherment/server", []),
            ("ku/leaf-keyEncipherment/client", []),
            ("ku/ca-version-1/server", []),
            ("ku/root-version-1/server", []),
            ("names/san-wildcard-empty-label/dns-a..co.uk/server", []),
            ("names/cn-www/dns-www.example.com/server", ["--allow-cn-fallback"]),
            ("names/san-wildcard/dns-a.b.example.com/server", []),
            ("validity/leaf-valid-1-day/in-7-days/server", []),
        ]
        for (name, extra) in runs {
            let testCase = try #require(corpus.testCase(named: name), "no case \(name)")
            let verdict = try await ProcessRunner.runAsync(openssl, testCase.opensslVerifyArguments, in: folder.url)
            let result = try await SignetBinary.runAsync(Self.signetArguments(testCase) + extra, in: folder.url)
            #expect(result.status == (verdict.status == 0 ? 0 : 1), "\(name): openssl exit \(verdict.status); signet \(result)")
            if result.status == 0 {
                #expect(result.out.contains("\(testCase.leaf): OK"), "\(name): \(result)")
            }
        }
        // The CN is a name only when asked for.
        let cnOnly = try #require(corpus.testCase(named: "names/cn-www/dns-www.example.com/server"))
        let refused = try await SignetBinary.runAsync(Self.signetArguments(cnOnly), in: folder.url)
        #expect(refused.status == 1, "\(refused)")
    }

    // MARK: - Running a case both ways

    /// What openssl and Signet said about one case.
    struct Outcome: Sendable {
        let testCase: OpenSSLCorpus.Case
        let openssl: RunResult
        /// Signet's refusal; nil when it accepted.
        let signetError: X509Error?
        /// How long Signet took.
        let elapsed: Duration

        var opensslAccepts: Bool { openssl.status == 0 }
        var signetAccepts: Bool { signetError == nil }

        /// The N of openssl's `error N at D depth lookup: …` lines.
        var opensslErrors: [Int] {
            (openssl.out + "\n" + openssl.stderr).split(whereSeparator: \.isNewline).compactMap { line -> Int? in
                let words = line.split(separator: " ")
                guard words.count >= 5, words[0] == "error", words[2] == "at", words[4] == "depth" else { return nil }
                return Int(words[1])
            }
        }

        var opensslSays: String {
            if opensslAccepts { return "OK" }
            let errors = opensslErrors
            return errors.isEmpty ? "refused (exit \(openssl.status))" : "refused (errors \(errors.map { String($0) }.joined(separator: ", ")))"
        }

        var signetSays: String {
            guard let signetError else { return "OK" }
            return "refused (\(signetError.code): \(signetError))"
        }

        /// The case and both verdicts, with the openssl command, for failure messages.
        var summary: String {
            "\(testCase.name): openssl \(opensslSays); Signet \(signetSays)\n  openssl \(testCase.opensslVerifyArguments.joined(separator: " "))"
        }
    }

    /// Runs every case, four at a time, in the order given.
    static func evaluate(_ cases: [OpenSSLCorpus.Case], openssl: String, in folder: URL) async throws -> [Outcome] {
        try await withThrowingTaskGroup(of: (Int, Outcome).self) { group in
            var outcomes: [(Int, Outcome)] = []
            var next = 0
            while next < cases.count || !group.isEmpty {
                if next < cases.count, next - outcomes.count < 4 {
                    let position = next
                    let testCase = cases[position]
                    next += 1
                    group.addTask {
                        let outcome = try await Self.outcome(of: testCase, openssl: openssl, in: folder)
                        return (position, outcome)
                    }
                } else if let finished = try await group.next() {
                    outcomes.append(finished)
                }
            }
            return outcomes.sorted { $0.0 < $1.0 }.map { $0.1 }
        }
    }

    /// Runs `openssl verify` and `ChainVerifier.verify` (with the CN fallback, as openssl) on one case.
    static func outcome(of testCase: OpenSSLCorpus.Case, openssl: String, in folder: URL) async throws -> Outcome {
        let verdict = try await ProcessRunner.runAsync(openssl, testCase.opensslVerifyArguments, in: folder)
        let (leaf, intermediates, roots) = try certificates(of: testCase)
        let verifier = ChainVerifier(anchors: .certificates(roots), validationTime: testCase.time)
        let clock = ContinuousClock()
        let started = clock.now
        var refusal: X509Error? = nil
        do {
            _ = try await verifier.verify(
                leaf: leaf, intermediates: intermediates, hostname: testCase.hostname, purpose: testCase.purpose, allowCommonNameFallback: true)
        } catch {
            refusal = try #require(error as? X509Error, "the verifier threw \(type(of: error)), not an X509Error: \(error)")
        }
        return Outcome(testCase: testCase, openssl: verdict, signetError: refusal, elapsed: clock.now - started)
    }

    /// Records an issue for every way `outcome` breaks the rules of the suite.
    static func judge(_ outcome: Outcome) {
        let summary = outcome.summary
        // A hang guard, not a speed expectation: the search is bounded and takes milliseconds.
        #expect(outcome.elapsed < .seconds(60), "\(summary)\n  Signet took \(outcome.elapsed)")
        if let error = outcome.signetError, !verdictCodes.contains(error.code) {
            Issue.record("\(summary)\n  Signet failed with \(error.code), which is not a verdict")
            return
        }
        switch divergences[outcome.testCase.name] {
        case nil:
            #expect(outcome.opensslAccepts == outcome.signetAccepts, "\(summary)")
            if let error = outcome.signetError, !outcome.opensslAccepts {
                let errors = Set(outcome.opensslErrors)
                if !errors.isEmpty, errors.isSubset(of: nameMismatchErrors) {
                    #expect(error.code == "hostnameMismatch", "\(summary)\n  openssl refused only the name")
                } else if errors.isDisjoint(with: nameMismatchErrors) {
                    #expect(error.code != "hostnameMismatch", "\(summary)\n  openssl refused the chain, not the name")
                }
            }
        case .opensslAccepts(let code, let reason)?:
            #expect(outcome.opensslAccepts, "\(summary)\n  documented divergence, openssl should accept: \(reason)")
            #expect(outcome.signetError?.code == code, "\(summary)\n  documented divergence, Signet should refuse with \(code): \(reason)")
        case .signetAccepts(let reason)?:
            #expect(!outcome.opensslAccepts, "\(summary)\n  documented divergence, openssl should refuse: \(reason)")
            #expect(outcome.signetAccepts, "\(summary)\n  documented divergence, Signet should accept: \(reason)")
        case .opensslRefusesSignetEither(let reason)?:
            #expect(!outcome.opensslAccepts, "\(summary)\n  documented divergence, openssl should refuse: \(reason)")
        case .bothRefuse(let code, let reason)?:
            #expect(!outcome.opensslAccepts, "\(summary)\n  documented divergence, openssl should refuse: \(reason)")
            #expect(outcome.signetError?.code == code, "\(summary)\n  documented divergence, Signet should refuse with \(code): \(reason)")
        }
        // A mesh Signet refuses is refused for its paths or its budget, never for a name.
        if outcome.testCase.family == .mesh, let error = outcome.signetError {
            #expect(error.code == "pathBuildingLimit" || error.code == "chainInvalid", "\(summary)")
        }
    }

    // MARK: - Helpers

    static func opensslPath() throws -> String {
        try #require(ProcessRunner.which("openssl"), "openssl is not installed (Scripts/test installs it)")
    }

    /// Vectors/differential/ext.cnf: the extension sections of the corpus.
    static func extensionsFile() throws -> URL {
        try TestVectors.url("differential/ext.cnf", in: .module)
    }

    /// The leaf, the intermediates and the anchors of a case.
    static func certificates(of testCase: OpenSSLCorpus.Case) throws -> (leaf: Certificate, intermediates: [Certificate], roots: [Certificate]) {
        let leaves = try X509Files.readCertificates(path: testCase.leaf)
        let leaf = try #require(leaves.first, "\(testCase.leaf) holds no certificate")
        var intermediates: [Certificate] = []
        if let untrusted = testCase.untrusted { intermediates = try X509Files.readCertificates(path: untrusted) }
        let roots = try X509Files.readCertificates(path: testCase.roots)
        return (leaf, intermediates, roots)
    }

    /// `cert verify` of a case, without the CN fallback.
    static func signetArguments(_ testCase: OpenSSLCorpus.Case) -> [String] {
        var arguments = [
            "cert", "verify", testCase.leaf, "--roots", testCase.roots, "--purpose", testCase.purpose.rawValue,
            "--at", ISO8601DateFormatter().string(from: testCase.time),
        ]
        if let untrusted = testCase.untrusted { arguments += ["--untrusted", untrusted] }
        if let hostname = testCase.hostname { arguments += ["--hostname", hostname] }
        return arguments
    }
}
