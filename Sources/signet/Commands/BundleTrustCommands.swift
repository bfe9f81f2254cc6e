import ArgumentParser
import Foundation
import SignetBundle
import SignetCore

struct BundleInspect: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Show what a bundle says about itself (nothing is verified; use 'verify' for that).")

    @Flag(help: "Print JSON.")
    var json = false

    @Argument(help: ArgumentHelp("The bundle.", valueName: "BUNDLE"))
    var bundle: String

    func run() async throws {
        let contents = try BundleContents(path: bundle)
        let manifest = contents.manifest
        if json {
            let value: [String: Any] = [
                "name": manifest.name, "version": manifest.version, "created": BundleDate.format(manifest.created),
                "expires": manifest.expires.map(BundleDate.format) ?? NSNull(),
                "files": manifest.files.map { ["path": $0.path, "size": $0.size, "sha256": Hex.encode($0.sha256)] as [String: Any] },
                "signatures": contents.signatures.map { ["keyid": $0.keyID.description, "alg": $0.algorithm.rawValue] },
                "verified": false,
            ]
            let data = try JSONSerialization.data(withJSONObject: value, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
            // JSONSerialization escapes C0 controls; DEL and C1 controls (a C1 CSI starts a
            // terminal escape sequence) are escaped here too, which JSON allows.
            Console.write(Console.terminalSafeJSON(String(decoding: data, as: UTF8.self)) + "\n")
            return
        }
        var lines = [
            "bundle:    \(PrintableText.terminalSafe(bundle)) (NOT verified)",
            "name:      \(PrintableText.terminalSafe(manifest.name))",
            "version:   \(manifest.version)",
            "created:   \(BundleDate.format(manifest.created))",
            "expires:   \(manifest.expires.map(BundleDate.format) ?? "never")",
            "signature: " + (contents.signatures.isEmpty ? "none" : contents.signatures.map { "\($0.keyID) (\($0.algorithm.rawValue))" }.joined(separator: "\n           ")),
            "files:     \(manifest.files.count), \(manifest.files.reduce(Int64(0)) { $0 + $1.size }) bytes",
        ]
        // Nothing here is verified, so a path is shown with its control characters escaped.
        lines += manifest.files.map { "  \(Hex.encode($0.sha256))  \($0.size)  \(BundleError.printable($0.path))" }
        Console.write(lines.joined(separator: "\n") + "\n")
    }
}

/// `signet bundle trust`: the trust root clients pin, and its rotation.
struct BundleTrustCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trust",
        abstract: "Make, rotate and update the trust root that clients pin.",
        discussion: """
        A trust root lists the public keys that may sign bundles and how many must (the \
        threshold). 'rotate' writes the next root (version + 1) signed by keys of the current \
        one; 'update' accepts it only if a threshold of the current root's keys signed it.
        """,
        subcommands: [BundleTrustInit.self, BundleTrustRotate.self, BundleTrustUpdate.self]
    )
}

/// Reads public keys for a trust root.
private func trustedKeys(_ sources: [String], resolver: KeySourceResolver) async throws -> [TrustedKey] {
    var keys: [TrustedKey] = []
    for source in sources { keys.append(try TrustedKey(publicKey: try await resolver.publicKey(source))) }
    return keys
}

struct BundleTrustInit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "init", abstract: "Write a first trust root (version 1).")

    @Option(name: .customLong("key"), help: ArgumentHelp("A public key to trust (repeat for several).", valueName: "PUB"))
    var keys: [String] = []

    @Option(help: ArgumentHelp("How many of the keys must sign a bundle (default 1).", valueName: "K"))
    var threshold: Int = 1

    @OptionGroup var output: OutputOptions<OutputHelpText>
    enum OutputHelpText: OutputHelp {
        static let help = ArgumentHelp("Where to write the trust root.", valueName: "TRUST")
    }

    @OptionGroup var keyAccess: KeyAccessOptions
    @OptionGroup var quietOption: QuietOption

    func validate() throws {
        if keys.isEmpty { throw ValidationError("give at least one --key") }
    }

    func run() async throws {
        let root = try TrustRoot(threshold: threshold, keys: try await trustedKeys(keys, resolver: keyAccess.resolver))
        try output.writeFile(root.fileBytes)
        Console.note("\(output.path): trust root version 1, \(root.keys.count) key(s), threshold \(root.threshold)", quiet: quietOption.quiet)
    }
}

struct BundleTrustRotate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rotate", abstract: "Write the next trust root, signed by keys of the current one.")

    @Option(help: ArgumentHelp("The current trust root.", valueName: "CURRENT"))
    var trust: String

    @Option(name: .customLong("key"), help: ArgumentHelp("A public key of the next root (repeat).", valueName: "PUB"))
    var keys: [String] = []

    @Option(help: ArgumentHelp("The next root's threshold (default 1).", valueName: "K"))
    var threshold: Int = 1

    @Option(name: .customLong("sign"), help: ArgumentHelp("A private key of the current root that signs the rotation (repeat).", valueName: "PRIV"))
    var signingKeys: [String] = []

    @OptionGroup var output: OutputOptions<OutputHelpText>
    enum OutputHelpText: OutputHelp {
        static let help = ArgumentHelp("Where to write the next root.", valueName: "NEXT")
    }

    @OptionGroup var keyAccess: KeyAccessOptions
    @OptionGroup var quietOption: QuietOption

    func validate() throws {
        if keys.isEmpty { throw ValidationError("give at least one --key for the next root") }
        if signingKeys.isEmpty { throw ValidationError("give at least one --sign key of the current root") }
    }

    func run() async throws {
        let current = try TrustRoot.load(path: trust)
        try output.refuseExistingFile()
        let resolver = keyAccess.resolver
        var signers: [any Signer] = []
        for key in signingKeys {
            let publicKey = try await resolver.publicKey(key)
            let pinned = current.keys.first { $0.keyID == publicKey.fingerprint }
            signers.append(try await resolver.signer(key, algorithm: pinned?.algorithm))
        }
        let next = try await current.rotated(to: try await trustedKeys(keys, resolver: resolver), threshold: threshold, signedBy: signers)
        try output.writeFile(next.fileBytes)
        Console.note("\(output.path): trust root version \(next.version), \(next.keys.count) key(s), threshold \(next.threshold), signed by \(signers.count) key(s) of version \(current.version)", quiet: quietOption.quiet)
    }
}

struct BundleTrustUpdate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "update",
        abstract: "Replace the pinned trust root by the next one, if the current root's keys signed it (exit 1 otherwise).")

    @Option(help: ArgumentHelp("The pinned trust root, replaced atomically on success.", valueName: "TRUST"))
    var trust: String

    @OptionGroup var quietOption: QuietOption

    @Argument(help: ArgumentHelp("The next trust root.", valueName: "NEXT"))
    var next: String

    func run() async throws {
        let current = try TrustRoot.load(path: trust)
        let candidate = try TrustRoot.load(path: next)
        try current.accepts(candidate, source: next)
        try AtomicFile.write(candidate.fileBytes, to: trust, permissions: .standard, overwrite: true)
        Console.note("\(trust): now trust root version \(candidate.version) (\(candidate.keys.count) key(s), threshold \(candidate.threshold))", quiet: quietOption.quiet)
    }
}
