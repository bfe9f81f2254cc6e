import Foundation
import SignetTestSupport
import SignetX509

/// The differential corpus of issue 29: certificates made with the `openssl` command (P-256
/// keys; openssl, not `CertificateFactory`, because the corpus needs what Signet refuses to
/// make: `*.com`, CAs without keyCertSign, rfc822Name constraints) and the cases that check a
/// leaf against them, each to be run through `openssl verify -purpose …` and `ChainVerifier`
/// (SignetX509Tests/OpenSSLDifferentialTests.swift; docs/plans/certificate-validation.md §3).
///
/// The extension sections are the vector file `SignetX509Tests/Vectors/differential/ext.cnf`,
/// which ``make(families:extensions:in:concurrency:)`` copies into the folder. Every key and
/// certificate is made once per corpus and shared by the cases that need it; a corpus holds
/// only the certificates its families' cases use.
public struct OpenSSLCorpus: Sendable {
    /// A group of cases, generated together.
    public enum Family: String, CaseIterable, Sendable, CustomStringConvertible {
        /// Extended key usage of leaf × intermediate × root, for the three purposes.
        case extendedKeyUsage = "eku"
        /// Key usage of the leaf, of a CA and of the root; CAs without basic constraints;
        /// version 1 certificates (no extensions).
        case keyUsage = "ku"
        /// Name constraints on an intermediate and on the root × SAN and CN variants × host;
        /// SANs with a trailing dot.
        case nameConstraints = "nc"
        /// Host names, wildcards and IP addresses.
        case names
        /// pathLenConstraint, and a self-issued rollover CA.
        case pathLength = "pathlen"
        /// Expired and not yet valid leaves, intermediates and roots.
        case validity
        /// Cross-signed meshes of W = 4…7 same-named CAs, with and without key identifiers.
        case mesh

        public var description: String { rawValue }
    }

    /// The name a case checks the leaf for.
    public enum Reference: Sendable, Equatable, CustomStringConvertible {
        /// A DNS name (`openssl verify -verify_hostname`).
        case dns(String)
        /// An IP address (`openssl verify -verify_ip`).
        case ip(String)

        /// The name itself.
        public var value: String {
            switch self {
            case .dns(let name): return name
            case .ip(let address): return address
            }
        }

        /// `dns-NAME` or `ip-ADDRESS`, as in case names.
        public var description: String {
            switch self {
            case .dns(let name): return "dns-" + name
            case .ip(let address): return "ip-" + address
            }
        }
    }

    /// One check: a leaf, the intermediates offered, the trust anchors, the purpose, the name
    /// and the time.
    public struct Case: Sendable, CustomStringConvertible {
        /// `family/what/…/purpose`, unique in the corpus.
        public let name: String
        /// The family the case belongs to.
        public let family: Family
        /// The path of the leaf (one PEM certificate).
        public let leaf: String
        /// The path of the intermediates offered (PEM), nil when there are none.
        public let untrusted: String?
        /// The path of the trust anchors (PEM).
        public let roots: String
        /// What the leaf must be good for.
        public let purpose: CertificatePurpose
        /// The name the leaf must be for, nil for none.
        public let reference: Reference?
        /// The time of the check, in whole seconds (`-attime`, `validationTime`).
        public let time: Date

        public var description: String { name }

        /// The DNS name or IP address to pass as `hostname`, nil for none.
        public var hostname: String? { reference?.value }

        /// `sslserver`, `sslclient` or `any`.
        public var opensslPurpose: String {
            switch purpose {
            case .server: return "sslserver"
            case .client: return "sslclient"
            case .any: return "any"
            }
        }

        /// The arguments of the `openssl verify` run of the case (without `openssl`).
        public var opensslVerifyArguments: [String] {
            var arguments = ["verify", "-purpose", opensslPurpose, "-CAfile", roots]
            if let untrusted { arguments += ["-untrusted", untrusted] }
            switch reference {
            case .dns(let name)?: arguments += ["-verify_hostname", name]
            case .ip(let address)?: arguments += ["-verify_ip", address]
            case nil: break
            }
            arguments += ["-attime", String(Int(time.timeIntervalSince1970)), leaf]
            return arguments
        }
    }

    /// The folder holding keys (`KEY.key`), certificates (`NAME.pem`) and bundles.
    public let folder: URL
    /// The time cases are checked at unless they say otherwise: a minute after the last
    /// certificate was made, in whole seconds.
    public let time: Date
    /// The cases of the families asked for, in a stable order.
    public let cases: [Case]

    /// The PEM file of the corpus certificate `name` (as the cases name them, e.g. `ca`,
    /// `nc-leaf-cn-out.permitted-on-ca`, `mesh-aki-leaf`).
    public func certificateFile(_ name: String) -> String {
        folder.appendingPathComponent(name + ".pem").path
    }

    /// The private key file (PKCS#8 PEM) of the corpus certificate `name`.
    public func keyFile(_ name: String) -> String {
        folder.appendingPathComponent(CorpusSpec.standard.certificate(name).key + ".key").path
    }

    /// The case named `name`, nil when the corpus has none.
    public func testCase(named name: String) -> Case? {
        cases.first { $0.name == name }
    }

    /// The names of the cases of `families`, without generating anything.
    public static func caseNames(of families: [Family] = Family.allCases) -> [String] {
        CorpusSpec.standard.cases.filter { families.contains($0.family) }.map(\.name)
    }

    /// Makes, in `folder` (which must exist and should be empty), every key and certificate
    /// the cases of `families` use, with `openssl` (the first on `PATH`) running at most
    /// `concurrency` at once; `extensions` is the ext.cnf vector file.
    public static func make(
        families: [Family] = Family.allCases, extensions: URL, in folder: URL, concurrency: Int = 3
    ) async throws -> OpenSSLCorpus {
        let spec = CorpusSpec.standard
        let executable = try OpenSSLTool.locate()
        let tool = OpenSSLTool(executable: executable, folder: folder)
        let files = FileManager.default
        try files.createDirectory(at: folder.appendingPathComponent("issued"), withIntermediateDirectories: true)
        try Data(contentsOf: extensions).write(to: folder.appendingPathComponent("ext.cnf"))
        try Data().write(to: folder.appendingPathComponent("index.txt"))
        try Data("1000\n".utf8).write(to: folder.appendingPathComponent("serial.txt"))

        let selected = spec.cases.filter { families.contains($0.family) }
        let needed = spec.closure(of: selected)
        let start = Date()

        var keys: [String] = []
        var seenKeys = Set<String>()
        for certificate in needed where seenKeys.insert(certificate.key).inserted { keys.append(certificate.key) }
        try await tool.runAll(
            keys.map { ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", $0 + ".key"] },
            concurrency: concurrency)

        let depth = Dictionary(uniqueKeysWithValues: needed.map { ($0.name, spec.depth(of: $0.name)) })
        let deepest = depth.values.max() ?? 0
        for level in 0...deepest {
            let batch = needed.filter { depth[$0.name] == level }
            try await tool.runAll(
                batch.filter { $0.startDays == nil && !$0.version1 }.map { spec.requestArguments(for: $0) }, concurrency: concurrency)
            // openssl ca shares index.txt and serial.txt: one at a time; a version 1 certificate
            // is two steps (a CSR, then openssl x509 -req).
            for certificate in batch where certificate.startDays != nil || certificate.version1 {
                let steps = certificate.version1 ? spec.version1Arguments(for: certificate) : spec.futureArguments(for: certificate, from: start)
                for arguments in steps { try await tool.run(arguments) }
            }
        }

        let time = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + 60).rounded(.down))
        var bundles: [String: String] = [:]
        func bundle(_ names: [String]) throws -> String {
            let key = names.joined(separator: "+")
            if let path = bundles[key] { return path }
            let url = folder.appendingPathComponent("bundle-\(bundles.count + 1).pem")
            var pem = Data()
            for name in names { pem.append(try Data(contentsOf: folder.appendingPathComponent(name + ".pem"))) }
            try pem.write(to: url)
            bundles[key] = url.path
            return url.path
        }
        var cases: [Case] = []
        for planned in selected {
            var untrusted: String? = nil
            if !planned.untrusted.isEmpty { untrusted = try bundle(planned.untrusted) }
            let roots = try bundle(planned.roots)
            cases.append(
                Case(
                    name: planned.name, family: planned.family, leaf: folder.appendingPathComponent(planned.leaf + ".pem").path,
                    untrusted: untrusted, roots: roots, purpose: planned.purpose, reference: planned.reference,
                    time: time.addingTimeInterval(planned.offset)))
        }
        return OpenSSLCorpus(folder: folder, time: time, cases: cases)
    }
}

// MARK: - What the corpus holds

/// One certificate of the corpus.
struct CertificateSpec: Sendable {
    /// The file name without `.pem`, and what cases call it.
    let name: String
    /// The `-subj` argument.
    let subject: String
    /// The certificate that signs it, nil for self-signed.
    let issuer: String?
    /// The section of ext.cnf (unused for a version 1 certificate).
    let section: String
    /// Days of validity.
    let days: Int
    /// The file name of its key without `.key` (leaves share one, mesh CAs share theirs).
    let key: String
    /// When set, its validity starts this many days after the corpus is made (openssl ca).
    let startDays: Int?
    /// Its serial number.
    let serial: Int
    /// A version 1 certificate: no extensions at all (`openssl x509 -req` from a CSR, as the
    /// old tutorials make them; `openssl req -x509` always makes version 3).
    let version1: Bool
}

/// One case before generation: names of corpus certificates, not paths.
struct CaseSpec: Sendable {
    let family: OpenSSLCorpus.Family
    let name: String
    let leaf: String
    let untrusted: [String]
    let roots: [String]
    let purpose: CertificatePurpose
    let reference: OpenSSLCorpus.Reference?
    /// Seconds after the corpus time.
    let offset: TimeInterval
}

/// Every certificate and case of the corpus, declared family by family.
struct CorpusSpec: Sendable {
    typealias Reference = OpenSSLCorpus.Reference

    private(set) var certificates: [CertificateSpec] = []
    private(set) var index: [String: Int] = [:]
    private(set) var cases: [CaseSpec] = []

    static let standard: CorpusSpec = {
        var spec = CorpusSpec()
        spec.cert("root", "/CN=Differential Root", section: "root")
        spec.cert("ca", "/CN=Differential CA", issuer: "root")
        spec.addExtendedKeyUsage()
        spec.addKeyUsage()
        spec.addNameConstraints()
        spec.addNames()
        spec.addPathLength()
        spec.addValidity()
        spec.addMesh()
        return spec
    }()

    static let day: TimeInterval = 86_400

    func certificate(_ name: String) -> CertificateSpec {
        guard let position = index[name] else { preconditionFailure("no corpus certificate named \(name)") }
        return certificates[position]
    }

    mutating func cert(
        _ name: String, _ subject: String, issuer: String? = nil, section: String = "ca", days: Int = 3650, key: String? = nil,
        startDays: Int? = nil, version1: Bool = false
    ) {
        precondition(index[name] == nil, "two corpus certificates named \(name)")
        if let issuer { precondition(index[issuer] != nil, "\(name): its issuer \(issuer) is declared after it") }
        precondition(startDays == nil || issuer != nil, "\(name): a certificate valid later needs an issuer (openssl ca)")
        precondition(startDays == nil || !version1, "\(name): a version 1 certificate is valid from now")
        index[name] = certificates.count
        certificates.append(
            CertificateSpec(
                name: name, subject: subject, issuer: issuer, section: section, days: days, key: key ?? name, startDays: startDays,
                serial: certificates.count + 1, version1: version1))
    }

    mutating func check(
        _ family: OpenSSLCorpus.Family, _ name: String, leaf: String, untrusted: [String], roots: [String],
        purposes: [CertificatePurpose] = [.server], reference: Reference? = nil, after offset: TimeInterval = 0
    ) {
        for certificate in [leaf] + untrusted + roots {
            precondition(index[certificate] != nil, "\(name): no corpus certificate named \(certificate)")
        }
        for purpose in purposes {
            cases.append(
                CaseSpec(
                    family: family, name: "\(family.rawValue)/\(name)/\(purpose.rawValue)", leaf: leaf, untrusted: untrusted,
                    roots: roots, purpose: purpose, reference: reference, offset: offset))
        }
    }

    /// The certificates `cases` use and their issuers, in declaration order.
    func closure(of cases: [CaseSpec]) -> [CertificateSpec] {
        var wanted = Set<String>()
        for testCase in cases {
            for name in [testCase.leaf] + testCase.untrusted + testCase.roots {
                var next: String? = name
                while let current = next, wanted.insert(current).inserted {
                    next = certificate(current).issuer
                }
            }
        }
        return certificates.filter { wanted.contains($0.name) }
    }

    /// 0 for a self-signed certificate, else one more than its issuer.
    func depth(of name: String) -> Int {
        var depth = 0
        var current = certificate(name)
        while let issuer = current.issuer {
            depth += 1
            current = certificate(issuer)
        }
        return depth
    }

    /// `openssl req -x509` for a certificate valid from now.
    func requestArguments(for spec: CertificateSpec) -> [String] {
        var arguments = [
            "req", "-new", "-x509", "-key", spec.key + ".key", "-subj", spec.subject, "-days", String(spec.days),
            "-set_serial", String(spec.serial), "-config", "ext.cnf", "-extensions", spec.section, "-out", spec.name + ".pem",
        ]
        if let issuer = spec.issuer {
            let signer = certificate(issuer)
            arguments += ["-CA", signer.name + ".pem", "-CAkey", signer.key + ".key"]
        }
        return arguments
    }

    /// `openssl req` (a CSR) then `openssl ca -startdate`, for a certificate valid only later.
    func futureArguments(for spec: CertificateSpec, from start: Date) -> [[String]] {
        guard let issuer = spec.issuer, let startDays = spec.startDays else { return [] }
        let signer = certificate(issuer)
        let notBefore = start.addingTimeInterval(Double(startDays) * Self.day)
        let notAfter = notBefore.addingTimeInterval(Double(spec.days) * Self.day)
        return [
            ["req", "-new", "-key", spec.key + ".key", "-subj", spec.subject, "-config", "ext.cnf", "-out", spec.name + ".csr"],
            [
                "ca", "-batch", "-config", "ext.cnf", "-name", "future_ca", "-cert", signer.name + ".pem", "-keyfile", signer.key + ".key",
                "-in", spec.name + ".csr", "-out", spec.name + ".pem", "-notext", "-startdate", Self.opensslTime(notBefore),
                "-enddate", Self.opensslTime(notAfter), "-extfile", "ext.cnf", "-extensions", spec.section, "-preserveDN",
            ],
        ]
    }

    /// `openssl req` (a CSR) then `openssl x509 -req` without extensions, signed by the issuer
    /// or, for a self-signed one, by its own key: a version 1 certificate valid from now.
    func version1Arguments(for spec: CertificateSpec) -> [[String]] {
        var sign = [
            "x509", "-req", "-in", spec.name + ".csr", "-days", String(spec.days), "-set_serial", String(spec.serial), "-sha256",
            "-out", spec.name + ".pem",
        ]
        if let issuer = spec.issuer {
            let signer = certificate(issuer)
            sign += ["-CA", signer.name + ".pem", "-CAkey", signer.key + ".key"]
        } else {
            sign += ["-signkey", spec.key + ".key"]
        }
        return [["req", "-new", "-key", spec.key + ".key", "-subj", spec.subject, "-config", "ext.cnf", "-out", spec.name + ".csr"], sign]
    }

    /// `YYYYMMDDHHMMSSZ`, as `openssl ca -startdate` takes it.
    static func opensslTime(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMddHHmmss'Z'"
        return formatter.string(from: date)
    }
}

// MARK: - The families


// MARK: - Running openssl
