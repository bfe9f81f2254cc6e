import Crypto
import Foundation
import SignetCore
import SignetTestSupport
import SignetX509
import SignetX509TestSupport
import SwiftASN1
import Testing
import X509

/// The gaps an attacker's review of `signet cert verify` found in `ChainVerifier`, each now
/// refused the way the refusals around it are (`chainInvalid` for the chain, `hostnameMismatch`
/// for the name; `cert verify` exits 1):
///
/// - a version 1 certificate (no extensions, as `openssl x509 -req` makes one) used as an
///   intermediate CA — openssl: error 79, invalid CA certificate;
/// - a DNS SAN with a trailing dot (`a.evil.com.`, `evil.com.`, `*.evil.com.`, `localhost.`)
///   under an excluded subtree, which Signet matches to the host without the dot;
/// - a leaf without SANs whose CN, outside the issuer's permitted subtree, is a BMPString,
///   UniversalString or T61String instead of a UTF8String — openssl: error 47 for each;
/// - a wildcard with an empty label, `*..co.uk`, for `a..co.uk`.
///
/// The corpus cases used here run through openssl too in ``OpenSSLDifferentialTests``.
@Suite("X509: the chain-validation gaps of the review are closed")
struct ChainReviewGapTests {
    @Test("a version 1 intermediate is no CA: refused as a chain (server and any, with and without a host) by ChainVerifier and cert verify; as root or leaf it is fine")
    func versionOneIntermediate() async throws {
        let folder = try TemporaryFolder(prefix: "signet-gap-v1")
        defer { folder.remove() }
        let corpus = try await OpenSSLCorpus.make(families: [.keyUsage], extensions: try OpenSSLDifferentialTests.extensionsFile(), in: folder.url)
        let testCase = try #require(corpus.testCase(named: "ku/ca-version-1/server"))
        let (leaf, intermediates, roots) = try OpenSSLDifferentialTests.certificates(of: testCase)
        #expect(intermediates.map(\.version) == [.v1], "the intermediate should be version 1: \(intermediates)")
        #expect(intermediates.first?.extensions.isEmpty == true)
        let verifier = ChainVerifier(anchors: .certificates(roots), validationTime: testCase.time)
        let runs: [(String?, CertificatePurpose)] = [(nil, .server), ("www.example.com", .server), (nil, .any)]
        for (hostname, purpose) in runs {
            let error = await Self.refusal(verifier, leaf: leaf, intermediates: intermediates, hostname: hostname, purpose: purpose)
            #expect(error?.code == "chainInvalid", "host \(hostname ?? "none"), purpose \(purpose): \(error.map { "\($0)" } ?? "accepted")")
        }
        try Self.requireSignetBinary()
        let result = try await SignetBinary.runAsync(OpenSSLDifferentialTests.signetArguments(testCase) + ["--hostname", "www.example.com"], in: folder.url)
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("not trusted"), "\(result)")
        #expect(result.out.isEmpty, "\(result)")

        // The same certificates where a version 1 certificate is fine: as the trust anchor, and as the leaf.
        for name in ["ku/root-version-1/server", "ku/leaf-version-1/server"] {
            let fine = try #require(corpus.testCase(named: name))
            let (fineLeaf, fineIntermediates, fineRoots) = try OpenSSLDifferentialTests.certificates(of: fine)
            let error = await Self.refusal(
                ChainVerifier(anchors: .certificates(fineRoots), validationTime: fine.time), leaf: fineLeaf, intermediates: fineIntermediates,
                hostname: nil, purpose: .server)
            #expect(error == nil, "\(name): \(error.map { "\($0)" } ?? "")")
        }
    }

    @Test("a DNS SAN with a trailing dot is held to the excluded subtrees without it: refused as a chain, with and without the host")
    func trailingDotUnderExcludedSubtree() async throws {
        let folder = try TemporaryFolder(prefix: "signet-gap-dot")
        defer { folder.remove() }
        let corpus = try await OpenSSLCorpus.make(
            families: [.nameConstraints], extensions: try OpenSSLDifferentialTests.extensionsFile(), in: folder.url)
        let leaves = [("a.evil.com-dot", "a.evil.com"), ("evil.com-dot", "evil.com"), ("wildcard.evil.com-dot", "a.evil.com"), ("localhost-dot", "localhost")]
        for (label, host) in leaves + [("a.evil.com", "a.evil.com")] {
            for reference in ["no-host", "dns-\(host)"] {
                let name = "nc/excluded-evil/san-\(label)/\(reference)/server"
                let testCase = try #require(corpus.testCase(named: name), "no case \(name)")
                let (leaf, intermediates, roots) = try OpenSSLDifferentialTests.certificates(of: testCase)
                let verifier = ChainVerifier(anchors: .certificates(roots), validationTime: testCase.time)
                let error = await Self.refusal(verifier, leaf: leaf, intermediates: intermediates, hostname: testCase.hostname, purpose: .server)
                #expect(error?.code == "chainInvalid", "\(name): \(error.map { "\($0)" } ?? "accepted")")
            }
        }
        try Self.requireSignetBinary()
        for (label, host) in [("a.evil.com-dot", "a.evil.com"), ("localhost-dot", "localhost")] {
            let testCase = try #require(corpus.testCase(named: "nc/excluded-evil/san-\(label)/dns-\(host)/server"))
            let result = try await SignetBinary.runAsync(OpenSSLDifferentialTests.signetArguments(testCase), in: folder.url)
            #expect(result.status == 1, "\(label) for \(host): \(result)")
            #expect(result.stderr.contains("not trusted"), "\(label) for \(host): \(result)")
        }
    }

    /// The CN string types of the review, with their DER tags.
    static let commonNameTypes: [(String, UInt8)] = [("UTF8String", 0x0C), ("BMPString", 0x1E), ("UniversalString", 0x1C), ("T61String", 0x14)]

    @Test("a CN-only leaf outside the permitted subtree is refused whatever string type its CN is; inside it, accepted", arguments: commonNameTypes)
    func commonNameStringTypes(type: String, tag: UInt8) async throws {
        let openssl = try OpenSSLDifferentialTests.opensslPath()
        let folder = try TemporaryFolder(prefix: "signet-gap-cn")
        defer { folder.remove() }
        let chain = try CommonNameChain(commonNameTag: tag)
        try folder.write("root.pem", try X509Files.encode(chain.root, as: .pem))
        try folder.write("ca.pem", try X509Files.encode(chain.intermediate, as: .pem))
        let verifier = ChainVerifier(anchors: .certificates([chain.root]))
        for (commonName, inside) in [("victim.test", false), ("www.example.com", true)] {
            let leaf = try chain.leaf(commonName: commonName)
            try folder.write("leaf.pem", try X509Files.encode(leaf, as: .pem))
            // The CN is the type asked for, and openssl decides as Signet must.
            let shown = try await ProcessRunner.runAsync(
                openssl, ["x509", "-in", "leaf.pem", "-noout", "-subject", "-nameopt", "RFC2253,show_type"], in: folder.url)
            #expect(shown.out.contains("CN=\(type.uppercased()):\(commonName)"), "\(shown)")
            let verdict = try await ProcessRunner.runAsync(
                openssl, ["verify", "-purpose", "sslserver", "-CAfile", "root.pem", "-untrusted", "ca.pem", "leaf.pem"], in: folder.url)
            #expect((verdict.status == 0) == inside, "openssl, CN=\(commonName) as \(type): \(verdict)")
            if !inside {
                #expect((verdict.out + verdict.stderr).contains("error 47"), "openssl, CN=\(commonName) as \(type): \(verdict)")
            }

            let error = await Self.refusal(verifier, leaf: leaf, intermediates: [chain.intermediate], hostname: nil, purpose: .server)
            if inside {
                #expect(error == nil, "CN=\(commonName) as \(type): \(error.map { "\($0)" } ?? "")")
            } else {
                #expect(error?.code == "chainInvalid", "CN=\(commonName) as \(type): \(error.map { "\($0)" } ?? "accepted")")
                // Nor does asking for the name with the CN fallback let it through.
                do {
                    _ = try await verifier.verify(leaf: leaf, intermediates: [chain.intermediate], hostname: commonName, allowCommonNameFallback: true)
                    Issue.record("CN=\(commonName) as \(type) was accepted for \(commonName) with the CN fallback")
                } catch let error as X509Error {
                    #expect(error.code == "chainInvalid" || error.code == "hostnameMismatch", "\(error)")
                }
            }
        }
    }

    @Test("a wildcard with an empty label matches nothing: *..co.uk is not a..co.uk, *..example.com not a..example.com")
    func wildcardWithEmptyLabel() async throws {
        let folder = try TemporaryFolder(prefix: "signet-gap-wild")
        defer { folder.remove() }
        let corpus = try await OpenSSLCorpus.make(families: [.names], extensions: try OpenSSLDifferentialTests.extensionsFile(), in: folder.url)
        for name in ["names/san-wildcard-empty-label/dns-a..co.uk/server", "names/san-wildcard-empty-label-example/dns-a..example.com/server"] {
            let testCase = try #require(corpus.testCase(named: name), "no case \(name)")
            let (leaf, intermediates, roots) = try OpenSSLDifferentialTests.certificates(of: testCase)
            let verifier = ChainVerifier(anchors: .certificates(roots), validationTime: testCase.time)
            let error = await Self.refusal(verifier, leaf: leaf, intermediates: intermediates, hostname: testCase.hostname, purpose: .server)
            #expect(error?.code == "hostnameMismatch", "\(name): \(error.map { "\($0)" } ?? "accepted")")
        }
    }

    // MARK: - Helpers

    /// Signet's refusal of `leaf` through `intermediates`, nil when it accepts.
    static func refusal(
        _ verifier: ChainVerifier, leaf: Certificate, intermediates: [Certificate], hostname: String?, purpose: CertificatePurpose
    ) async -> X509Error? {
        do {
            _ = try await verifier.verify(leaf: leaf, intermediates: intermediates, hostname: hostname, purpose: purpose)
            return nil
        } catch let error as X509Error {
            return error
        } catch {
            Issue.record("the verifier threw \(type(of: error)), not an X509Error: \(error)")
            return nil
        }
    }

    static func requireSignetBinary() throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: SignetBinary.path), "no signet binary at \(SignetBinary.path) (swift build makes it)")
    }
}

/// A root, an intermediate permitting only DNS:example.com, and leaves without SANs whose CN
/// has the DER tag `commonNameTag` (made with swift-certificates: openssl's `req -subj` cannot
/// write a UniversalString).
struct CommonNameChain {
    let root: Certificate
    let intermediate: Certificate
    let intermediateKey: P256.Signing.PrivateKey
    let commonNameTag: UInt8
    let now: Date

    init(commonNameTag: UInt8) throws {
        let now = Date()
        self.now = now
        self.commonNameTag = commonNameTag
        let rootKey = P256.Signing.PrivateKey()
        intermediateKey = P256.Signing.PrivateKey()
        let rootName = try DistinguishedName { CommonName("Gap Root") }
        root = try Self.certificate(
            subject: rootName, key: rootKey.publicKey, issuer: rootName, issuerKey: rootKey, now: now,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            })
        intermediate = try Self.certificate(
            subject: try DistinguishedName { CommonName("Gap CA permitted example.com") }, key: intermediateKey.publicKey, issuer: rootName,
            issuerKey: rootKey, now: now,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                Critical(NameConstraints(permittedDNSDomains: ["example.com"]))
            })
    }

    /// A server leaf without SANs whose only subject attribute is CN=`commonName`, in the chain's string type.
    func leaf(commonName: String) throws -> Certificate {
        let value = try ASN1Any(derEncoded: Self.encoded(commonName, tag: commonNameTag))
        let subject = DistinguishedName([RelativeDistinguishedName(RelativeDistinguishedName.Attribute(type: .RDNAttributeType.commonName, value: value))])
        return try Self.certificate(
            subject: subject, key: P256.Signing.PrivateKey().publicKey, issuer: intermediate.subject, issuerKey: intermediateKey, now: now,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
            })
    }

    /// The DER of `text` as a string of `tag`: UTF-16BE for a BMPString, UTF-32BE for a
    /// UniversalString, the bytes for a UTF8String or (ASCII only) a T61String.
    static func encoded(_ text: String, tag: UInt8) -> [UInt8] {
        let content: [UInt8]
        switch tag {
        case 0x1E: content = text.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        case 0x1C: content = text.unicodeScalars.flatMap { scalar in [24, 16, 8, 0].map { UInt8((scalar.value >> $0) & 0xFF) } }
        default: content = Array(text.utf8)
        }
        precondition(content.count < 128, "a short-form length only")
        return [tag, UInt8(content.count)] + content
    }

    static func certificate(
        subject: DistinguishedName, key: P256.Signing.PublicKey, issuer: DistinguishedName, issuerKey: P256.Signing.PrivateKey, now: Date,
        extensions: Certificate.Extensions
    ) throws -> Certificate {
        try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PublicKey(key),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(30 * 86_400), issuer: issuer, subject: subject,
            extensions: extensions, issuerPrivateKey: Certificate.PrivateKey(issuerKey))
    }
}
