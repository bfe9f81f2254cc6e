import ArgumentParser
import Foundation
import SignetBundle
import SignetCore

/// `signet bundle`: signed resource bundles (docs/formats/bundle.md).
struct BundleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bundle",
        abstract: "Signed resource bundles: publish, verify against a pinned trust root, extract safely, re-check at rest.",
        discussion: """
        A bundle is a zip of files plus a signed manifest (name, version, dates, each file's size \
        and SHA-256). Clients pin a trust root (keys and a threshold), refuse rollback and \
        expiry, and extract only complete, verified trees. Exit codes: 0 verified; 1 a check \
        failed (signature, digest, rollback, expiry, changed at rest); 2 usage; 3 malformed or \
        unsafe bundle; 4 I/O.
        """,
        subcommands: [
            BundleCreate.self, BundleVerify.self, BundleExtract.self, BundleCheck.self, BundleInspect.self, BundleTrustCommand.self,
        ]
    )
}

/// The trust root, the product expected, and the moment expiry is judged at: what verify,
/// extract and check share.
struct BundleTrustOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The pinned trust root (from 'signet bundle trust init').", valueName: "TRUST"))
    var trust: String

    @Option(help: ArgumentHelp("The product expected: a bundle of any other name is refused (exit 1), however well signed.", valueName: "NAME"))
    var name: String?

    @Option(help: ArgumentHelp("Judge expiry as of DATE instead of now (ISO 8601), for audits.", valueName: "DATE"))
    var at: String?

    func load() throws -> TrustRoot { try TrustRoot.load(path: trust) }

    func moment() throws -> Date { try at.map { try BundleDate.parseArgument($0, option: "--at") } ?? Date() }

    func verifier() throws -> BundleVerifier {
        BundleVerifier(trust: try load(), now: try moment(), expectedName: name)
    }
}

struct BundleStateOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Folder keeping the last accepted release of each bundle name (created if missing).", valueName: "DIR"))
    var state: String
}

struct BundleCreate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create",
        abstract: "Make a signed bundle of a folder's files (paths relative to it) or of single files.")

    @Option(name: .customLong("key"), help: ArgumentHelp("A signing key (repeat for several signatures).", valueName: "KEY"))
    var keys: [String] = []

    @Option(help: ArgumentHelp("The bundle's name (A–Z a–z 0–9 . _ -); rollback protection is per name.", valueName: "NAME"))
    var name: String

    @Option(help: ArgumentHelp("The release number; each must be greater than the last a client accepted.", valueName: "N"))
    var version: Int64

    @Option(help: ArgumentHelp("When the bundle stops being accepted (ISO 8601, e.g. 2031-01-01T00:00:00Z).", valueName: "DATE"))
    var expires: String?

    @Flag(help: "Allow an --expires that has already passed (for tests).")
    var allowExpired = false

    @OptionGroup var output: OutputOptions<OutputHelpText>
    enum OutputHelpText: OutputHelp {
        static let help = ArgumentHelp("The bundle to write.", valueName: "OUT.bundle")
    }

    @OptionGroup var keyAccess: KeyAccessOptions
    @OptionGroup var quietOption: QuietOption

    @Argument(help: ArgumentHelp("A folder (its files, at paths relative to it) or files.", valueName: "DIR|FILE"))
    var inputs: [String]

    func validate() throws {
        if keys.isEmpty { throw ValidationError("give at least one --key") }
        if inputs.isEmpty { throw ValidationError("give a folder or files to bundle") }
    }

    func run() async throws {
        let expiry = try expires.map { try BundleDate.parseArgument($0, option: "--expires") }
        if let expiry, expiry <= Date(), !allowExpired {
            throw BundleError.invalidArgument(detail: "--expires \(expires!) has already passed (use --allow-expired to make such a bundle anyway)")
        }
        try output.refuseExistingFile()
        var signers: [any Signer] = []
        for key in keys { signers.append(try await keyAccess.resolver.signer(key)) }
        let creator = BundleCreator(name: name, version: version, expires: expiry)
        let total = try creator.collect(inputs).reduce(Int64(0)) { $0 + (FileSize.of($1.source) ?? 0) }
        let bar = ProgressBar.make(label: "bundling", total: total, quiet: quietOption.quiet)
        defer { bar?.finish() }
        let manifest = try await creator.create(inputs: inputs, signers: signers, output: output.path, overwrite: output.force, progress: bar?.callback)
        bar?.finish()
        Console.note("\(output.path): \(manifest.name) version \(manifest.version), \(manifest.files.count) file(s), \(signers.count) signature(s)", quiet: quietOption.quiet)
    }
}

struct BundleVerify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Verify a bundle against a trust root and record its version (exit 0 valid, 1 refused).",
        discussion: """
        Rollback rule (as TUF states it): a version lower than the last one accepted under the \
        bundle's name in --state is refused; the same version is accepted again only when its \
        manifest is byte-identical, never for other content. The release is recorded only when \
        everything passed.
        """)

    @OptionGroup var trustOptions: BundleTrustOptions
    @OptionGroup var stateOptions: BundleStateOptions
    @OptionGroup var quietOption: QuietOption

    @Argument(help: ArgumentHelp("The bundle.", valueName: "BUNDLE"))
    var bundle: String

    func run() async throws {
        let verifier = try trustOptions.verifier()
        let bar = ProgressBar.make(label: "verifying", total: FileSize.of(bundle), quiet: quietOption.quiet)
        defer { bar?.finish() }
        let verified = try await verifier.verify(path: bundle, state: BundleState(folder: stateOptions.state), progress: bar?.callback)
        bar?.finish()
        Console.note(
            "\(bundle): OK — \(verified.manifest.name) version \(verified.manifest.version), \(verified.manifest.files.count) file(s), signed by \(verified.signedBy.count) trusted key(s)",
            quiet: quietOption.quiet)
    }
}

struct BundleExtract: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "extract",
        abstract: "Verify a bundle, then extract it into DEST atomically.",
        discussion: """
        Files go to a temporary folder beside DEST, each checked as it is written; only a \
        complete, verified tree is renamed into place. DEST may be missing, an empty folder or \
        an earlier extraction (replaced). An earlier extraction is a floor whatever --state \
        says: the bundle must have its name and must not be older (the same version only with \
        a byte-identical manifest, which repairs a damaged tree). Each file gets user.signet.sha256 and \
        user.signet.manifest-sha256 attributes where the file system allows; DEST/.signet/ \
        keeps the signed manifest for 'signet bundle check'.
        """)

    @OptionGroup var trustOptions: BundleTrustOptions
    @OptionGroup var stateOptions: BundleStateOptions
    @OptionGroup var quietOption: QuietOption

    @Argument(help: ArgumentHelp("The bundle.", valueName: "BUNDLE"))
    var bundle: String

    @Argument(help: ArgumentHelp("The folder to extract into.", valueName: "DEST"))
    var destination: String

    func run() async throws {
        let verifier = try trustOptions.verifier()
        let bar = ProgressBar.make(label: "extracting", total: FileSize.of(bundle), quiet: quietOption.quiet)
        defer { bar?.finish() }
        let verified = try await BundleExtractor(verifier: verifier).extract(
            path: bundle, to: destination, state: BundleState(folder: stateOptions.state), progress: bar?.callback)
        bar?.finish()
        Console.note("\(destination): \(verified.manifest.name) version \(verified.manifest.version), \(verified.manifest.files.count) file(s) extracted and verified", quiet: quietOption.quiet)
    }
}

struct BundleCheck: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Re-verify an extracted folder at rest (exit 1 naming every changed, missing or added file).",
        discussion: """
        The kept manifest must still be signed under the trust root, not expired (as of now or \
        --at), of the --name given, and not a rollback against --state when one is given (the \
        state is only read). Exit 1 names the reason or every changed file.
        """)

    @OptionGroup var trustOptions: BundleTrustOptions
    @OptionGroup var quietOption: QuietOption

    @Option(help: ArgumentHelp("A state folder to check the tree against for rollback (only read).", valueName: "DIR"))
    var state: String?

    @Argument(help: ArgumentHelp("A folder made by 'signet bundle extract'.", valueName: "DEST"))
    var destination: String

    func run() async throws {
        let checker = BundleChecker(verifier: BundleVerifier(trust: try trustOptions.load(), now: try trustOptions.moment(), expectedName: trustOptions.name))
        let manifest = try await checker.check(folder: destination, state: state.map(BundleState.init(folder:)))
        Console.note("\(destination): OK — \(manifest.name) version \(manifest.version), \(manifest.files.count) file(s) unchanged", quiet: quietOption.quiet)
    }
}

/// Bundles and trust roots go to files only: for them `-o -` names a file called "-", not
/// standard output.
extension OutputOptions {
    /// Refuses an existing output file unless --force: checked before any work.
    func refuseExistingFile() throws {
        if !force, AtomicFile.exists(path) { throw BundleError.outputExists(path: path) }
    }

    /// Writes `bytes` to the output file atomically (0644), over an existing one only with --force.
    func writeFile(_ bytes: [UInt8]) throws {
        try AtomicFile.write(bytes, to: path, permissions: .standard, overwrite: force)
    }
}
