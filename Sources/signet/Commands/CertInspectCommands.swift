import ArgumentParser
import SignetBundle
import SignetCore
import SignetTLS
import SignetX509
import X509

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

struct CertVerify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Validate a certificate's chain to trusted roots (RFC 5280), and its name with --hostname.",
        discussion: """
        Certificates after the first in CERT are used as intermediates, like those of \
        --untrusted. Exit 0 and the validated chain on standard output when it verifies; exit 1 \
        naming why when it does not (untrusted, expired, not a CA, not for the purpose, wrong \
        name, bad signature, too many candidate paths).

        The rules are those of `openssl verify -purpose sslserver|sslclient|any`: the leaf's and \
        every CA's extended key usage must allow the purpose, every issuer's key usage must allow \
        certificate signing, and a CN that looks like a DNS name is held to the chain's name \
        constraints. With --hostname, the leaf's DNS names are matched (a wildcard only as the \
        whole left-most label, never over a public suffix: list snapshot \(PublicSuffixList.snapshot)); \
        its CN only with --allow-cn-fallback, when it has no DNS name and nothing in the chain \
        carries name constraints. The search for a path stops after \(PathBuildingLimits.default.maximumSignatureChecks) \
        signature checks, \(PathBuildingLimits.default.maximumDepth) certificates deep. See docs/certificates.md.
        """)

    @Argument(help: ArgumentHelp("The certificate (optionally followed by its intermediates).", valueName: "CERT"))
    var certificate: String

    @Option(help: ArgumentHelp("Trusted roots, PEM or DER (default: the system's).", valueName: "FILE"))
    var roots: String?

    @Option(help: ArgumentHelp("Intermediate certificates that may complete the chain; not trusted themselves.", valueName: "CHAIN"))
    var untrusted: String?

    @Option(help: ArgumentHelp("Also check the certificate is valid for this DNS name or IP address.", valueName: "H"))
    var hostname: String?

    @Option(help: ArgumentHelp("Check validity at DATE (ISO 8601) instead of now.", valueName: "DATE"))
    var at: String?

    @Option(help: ArgumentHelp("What the certificate must be good for: server (a TLS server, the default), client or any.", valueName: "PURPOSE"))
    var purpose: CertificatePurpose = .server

    @Flag(name: .customLong("allow-cn-fallback"), help: "With --hostname, also match the CN of a certificate that has no DNS name (browsers never do).")
    var allowCNFallback = false

    func run() async throws {
        let presented = try X509Files.readCertificates(path: certificate)
        var intermediates = Array(presented.dropFirst())
        if let untrusted { intermediates += try X509Files.readCertificates(path: untrusted) }
        let anchors: TrustAnchors = try roots.map { .certificates(try X509Files.readCertificates(path: $0)) } ?? .system
        let time = try at.map { try BundleDate.parseArgument($0, option: "--at") }
        let chain = try await ChainVerifier(anchors: anchors, validationTime: time)
            .verify(leaf: presented[0], intermediates: intermediates, hostname: hostname, purpose: purpose, allowCommonNameFallback: allowCNFallback)
        Console.write("\(PrintableText.escaped(X509Files.displayName(certificate))): OK\n")
        for (depth, link) in chain.enumerated() {
            Console.write("  \(depth) \(PrintableText.escaped(link.subject.description))\n")
        }
    }
}

extension CertificatePurpose: ExpressibleByArgument {}

struct CertPin: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pin",
        abstract: "Print the SPKI pin (sha256/<base64>) of a certificate's, CSR's or key's public key, or of every certificate a server presents.",
        discussion: """
        For a certificate file, one line per certificate: the pin, two spaces, the subject. For \
        https://host:port, every certificate the server presents, leaf first (nothing is \
        trusted or sent: the handshake is abandoned once they arrive). The same value as \
        openssl x509 -pubkey | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64.
        """)

    @Argument(help: ArgumentHelp("A certificate, CSR, key file, vault:SERVICE/ACCOUNT, or https://host:port.", valueName: "SOURCE"))
    var source: String

    @OptionGroup var keyAccess: KeyAccessOptions

    func run() async throws {
        if source.lowercased().hasPrefix("https://") {
            var authority = Substring(source.dropFirst("https://".count))
            if let slash = authority.firstIndex(of: "/") { authority = authority[..<slash] }
            let (host, port) = try PinnedHTTPSClient.hostAndPort(String(authority), defaultPort: 443)
            let certificates = try await TLSProbe.presentedCertificates(host: host, port: port)
            printPins(certificates)
            return
        }
        if !source.hasPrefix("vault:"), let document = try? X509Files.read(path: source) {
            switch document {
            case .certificates(let certificates): printPins(certificates)
            case .csr(let csr): Console.write("\(csr.publicKey.fingerprint)  \(PrintableText.terminalSafe(csr.subject.description))\n")
            }
            return
        }
        Console.write("\(try await keyAccess.resolver.publicKey(source).fingerprint)\n")
    }

    func printPins(_ certificates: [Certificate]) {
        Console.write(certificates.map { "\($0.publicKey.fingerprint)  \(PrintableText.terminalSafe($0.subject.description))\n" }.joined())
    }
}
