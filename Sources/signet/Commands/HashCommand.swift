import ArgumentParser
import SignetCore

/// `signet hash`: sha256sum-compatible digests of files and standard input.
struct HashCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hash",
        abstract: "Print or check SHA-2 digests (sha256sum-compatible).",
        discussion: """
        Without --check, prints one line per FILE as sha256sum does ('-' or no FILE reads \
        standard input). With --check, each FILE is a checksum list as written by signet hash \
        or sha256sum (GNU or --tag lines); each listed file is reported OK or FAILED, and the \
        exit code is 1 if any failed. Several files are hashed in parallel, one per core.
        MD5 and SHA-1 are broken for security and need --insecure.
        """
    )

    @Option(name: .shortAndLong, help: ArgumentHelp("Digest: sha256, sha384, sha512 (md5, sha1 with --insecure).", valueName: "ALG"))
    var algorithm: DigestAlgorithm?

    @Flag(help: "Allow the broken md5 and sha1 digests, for legacy uses such as Gravatar.")
    var insecure = false

    @Flag(name: .shortAndLong, help: "Read checksum lists from the FILEs and check them.")
    var check = false

    @Flag(help: "Print BSD-style lines: 'SHA256 (FILE) = HEX'.")
    var tag = false

    @Flag(name: .customLong("ignore-missing"), help: "With --check, skip listed files that do not exist.")
    var ignoreMissing = false

    @Flag(help: "With --check, fail (exit 3) on any improperly formatted line.")
    var strict = false

    @OptionGroup var output: QuietOption

    @Argument(help: ArgumentHelp("Files to hash, or checksum lists with --check ('-' is standard input).", valueName: "FILE"))
    var files: [String] = []

    func validate() throws {
        if tag && check { throw ValidationError("--tag applies when printing digests, not with --check") }
        if (ignoreMissing || strict) && !check { throw ValidationError("--ignore-missing and --strict apply only with --check") }
        if files.filter({ $0 == "-" }).count > 1 { throw ValidationError("standard input ('-') can be read only once") }
    }

    func run() async throws {
        if let algorithm, algorithm.isInsecure, !insecure {
            throw SignetCoreError.insecureAlgorithm(source: "-a", algorithm: algorithm.rawValue)
        }
        if check {
            var checker = ChecksumListChecker(algorithm: algorithm, insecure: insecure, quiet: output.quiet,
                                              ignoreMissing: ignoreMissing, strict: strict)
            try await checker.run(lists: files.isEmpty ? ["-"] : files)
        } else {
            try await printDigests(algorithm: algorithm ?? .sha256)
        }
    }

    private func printDigests(algorithm: DigestAlgorithm) async throws {
        let paths = files.isEmpty ? ["-"] : files
        let bar = ProgressBar.make(label: "hashing", total: FileSize.total(paths), quiet: output.quiet)
        var firstFailure: (any SignetError)?
        await FileDigester.digest(paths: paths, algorithm: algorithm, progress: bar?.callback) { index, result in
            switch result {
            case .success(let digest):
                bar?.finish()
                let line = tag ? ChecksumLine.formatTagged(algorithm: algorithm, hex: digest.hex, path: paths[index])
                    : ChecksumLine.format(hex: digest.hex, path: paths[index])
                Console.write(line + "\n")
            case .failure(let error):
                bar?.finish()
                Console.error(String(describing: error))
                if firstFailure == nil { firstFailure = error as? any SignetError ?? SignetCoreError.io(path: paths[index], detail: String(describing: error)) }
            }
        }
        bar?.finish()
        if let firstFailure { throw ExitCode(ExitStatus.code(for: firstFailure.category)) }
    }
}
