import ArgumentParser
import SignetCore
import SignetX509
import X509

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `signet cert`: certificates, CSRs, a small CA, pins and PKCS#12, interoperable with openssl.
struct CertCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cert",
        abstract: "Certificates: self-signed, CSRs, a small CA, inspection, chain verification, pins, PKCS#12.",
        discussion: """
        Certificates and CSRs are read as PEM or DER (detected) and written as PEM unless \
        --format der. Every signature is made through the key given with --key or --ca-key: a \
        key file, '-', or vault:SERVICE/ACCOUNT. RSA keys sign with rsa-v1_5-sha256, EC keys with \
        ECDSA and their curve's hash, Ed25519 keys with Ed25519.
        Exit codes: 0 success; 1 a check failed (a chain, hostname or pin that does not verify, \
        a CSR whose signature does not verify, a PKCS#12 MAC that does not verify); 2 usage; \
        3 malformed input; 4 I/O or network failure.
        """,
        subcommands: [CertSelfSigned.self, CertCSR.self, CertIssue.self, CertShow.self, CertVerify.self, CertPin.self, CertP12.self]
    )
}

/// Output of a certificate or CSR: the file and --force, and its encoding.
struct CertOutputOptions: ParsableArguments {
    @OptionGroup var file: OutputOptions<OutputHelpText>
    enum OutputHelpText: OutputHelp {
        static let help = ArgumentHelp("Where to write it ('-': standard output).", valueName: "FILE")
    }

    @Option(help: ArgumentHelp("pem (default) or der.", valueName: "FORMAT"))
    var format: X509Encoding = .pem

    func checkOutput() throws {
        try file.refuseExisting()
    }

    func write(_ bytes: [UInt8]) throws {
        try file.write(bytes, binary: format == .der, permissions: .standard)
    }
}

extension X509Encoding: ExpressibleByArgument {}

/// The subject and SANs of a new certificate or CSR.
struct CertSubjectOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The subject, most specific first: \"CN=api.example.com,O=Example\\, Inc.,C=GB\".", valueName: "DN"))
    var subject: String

    @Option(name: .customLong("san"), help: ArgumentHelp(
        "Subject alternative names: DNS:name,IP:address,email:address,URI:uri (repeatable).", valueName: "LIST"))
    var alternativeNames: [String] = []

    func distinguishedName() throws -> DistinguishedName { try SubjectParsing.distinguishedName(subject) }

    func names() throws -> [GeneralName] {
        try alternativeNames.flatMap { try SubjectParsing.alternativeNames($0) }
    }
}

struct CertSelfSigned: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "self-signed",
        abstract: "Make a self-signed certificate (a server/client leaf, or a CA with --ca).",
        discussion: "The certificate's pin (sha256/<base64> of its key) is printed on standard error.")

    @Option(help: ArgumentHelp("The key that signs, and whose certificate it is.", valueName: "KEY"))
    var key: String

    @OptionGroup var subject: CertSubjectOptions

    @Option(help: ArgumentHelp("Days of validity, from now.", valueName: "N"))
    var days = 365

    @Flag(help: "Make a CA certificate (CA:TRUE, certificate and CRL signing) instead of a leaf.")
    var ca = false

    @OptionGroup var output: CertOutputOptions
    @OptionGroup var keyAccess: KeyAccessOptions
    @OptionGroup var quietOption: QuietOption

    func run() async throws {
        try output.checkOutput()
        let signer = try await keyAccess.resolver.signer(key)
        let certificate = try await CertificateFactory.selfSigned(
            signer: signer, subject: try subject.distinguishedName(), alternativeNames: try subject.names(),
            days: days, profile: ca ? .ca : .server)
        try output.write(try X509Files.encode(certificate, as: output.format))
        Console.note("pin \(certificate.publicKey.fingerprint)", quiet: quietOption.quiet)
    }
}

struct CertCSR: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "csr",
        abstract: "Make a certificate signing request (PKCS#10), its SANs as an extension request.")

    @Option(help: ArgumentHelp("The key the certificate is wanted for; it signs the request.", valueName: "KEY"))
    var key: String

    @OptionGroup var subject: CertSubjectOptions
    @OptionGroup var output: CertOutputOptions
    @OptionGroup var keyAccess: KeyAccessOptions

    func run() async throws {
        try output.checkOutput()
        let signer = try await keyAccess.resolver.signer(key)
        let csr = try await CertificateFactory.csr(signer: signer, subject: try subject.distinguishedName(), alternativeNames: try subject.names())
        try output.write(try X509Files.encode(csr, as: output.format))
    }
}

struct CertIssue: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "issue",
        abstract: "Issue a certificate for a CSR, signed by a CA (whose certificate and key are given).",
        discussion: """
        The CSR's signature is checked first (exit 1 when it does not verify). Its subject and \
        SANs are copied; a server certificate needs at least one SAN. The serial is 16 random \
        bytes; subject and authority key identifiers are set; the certificate never outlives \
        the CA's.
        """)

    @Option(name: .customLong("ca-cert"), help: ArgumentHelp("The CA's certificate.", valueName: "CA"))
    var caCertificate: String

    @Option(name: .customLong("ca-key"), help: ArgumentHelp("The CA's key: a file, '-' or vault:SERVICE/ACCOUNT.", valueName: "CAKEY"))
    var caKey: String

    @Argument(help: ArgumentHelp("The certificate signing request.", valueName: "CSR"))
    var csr: String

    @Option(help: ArgumentHelp("Days of validity, from now (default: 365, or until the CA certificate expires if that is sooner).", valueName: "N"))
    var days: Int?

    @Flag(help: "The profile: --server (serverAuth), --client (clientAuth) or --ca (an intermediate CA).")
    var profile: CertificateProfile = .server

    @OptionGroup var output: CertOutputOptions
    @OptionGroup var keyAccess: KeyAccessOptions

    func run() async throws {
        try output.checkOutput()
        let request = try X509Files.readCSR(path: csr)
        let caCertificates = try X509Files.readCertificates(path: caCertificate)
        guard caCertificates.count == 1 else {
            throw X509Error.invalidArgument(detail: "\(caCertificate): holds \(caCertificates.count) certificates; give the CA's alone")
        }
        let signer = try await keyAccess.resolver.signer(caKey)
        let certificate = try await CertificateFactory.issue(
            csr: request, csrSource: X509Files.displayName(csr), caCertificate: caCertificates[0], caSigner: signer,
            profile: profile, days: days)
        try output.write(try X509Files.encode(certificate, as: output.format))
    }
}

extension CertificateProfile: EnumerableFlag {}

struct CertShow: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Describe a certificate (or each certificate of a chain) or a CSR.",
        discussion: "With --json: an array of objects for a certificate file, one object for a CSR.")

    @Argument(help: ArgumentHelp("A certificate, chain or CSR, PEM or DER ('-': standard input).", valueName: "CERT|CSR"))
    var file: String

    @Flag(help: "Print JSON.")
    var json = false

    func run() throws {
        switch try X509Files.read(path: file) {
        case .csr(let csr):
            let description = CertificateDescription(csr)
            Console.write(json ? description.json : description.text)
        case .certificates(let certificates):
            let descriptions = certificates.map(CertificateDescription.init)
            if json {
                Console.write("[" + descriptions.map { String($0.json.dropLast()) }.joined(separator: ",") + "]\n")
            } else {
                Console.write(descriptions.map(\.text).joined(separator: "\n"))
            }
        }
    }
}
