import ArgumentParser
import SignetCore

/// `signet hash --check`: checks the files named in checksum lists (``ChecksumList``) and
/// reports as `sha256sum --check` does.
struct ChecksumListChecker {
    let algorithm: DigestAlgorithm?
    let insecure: Bool
    let quiet: Bool
    let ignoreMissing: Bool
    let strict: Bool

    private var mismatched = 0
    private var unreadable = 0
    private var improper = 0

    init(algorithm: DigestAlgorithm?, insecure: Bool, quiet: Bool, ignoreMissing: Bool, strict: Bool) {
        self.algorithm = algorithm
        self.insecure = insecure
        self.quiet = quiet
        self.ignoreMissing = ignoreMissing
        self.strict = strict
    }

    mutating func run(lists: [String]) async throws {
        var malformedList: SignetCoreError?
        for list in lists {
            do {
                try await check(list: list)
            } catch let error as SignetCoreError {
                Console.error(CLIHints.message(for: error))
                if malformedList == nil { malformedList = error }
            }
        }
        if improper > 0 {
            Console.warning("\(improper) line\(improper == 1 ? " is" : "s are") improperly formatted")
        }
        if unreadable > 0 {
            Console.warning("\(unreadable) listed file\(unreadable == 1 ? "" : "s") could not be read")
        }
        if mismatched > 0 {
            Console.warning("\(mismatched) computed checksum\(mismatched == 1 ? "" : "s") did NOT match")
        }
        if let malformedList { throw ExitCode(ExitStatus.code(for: malformedList.category)) }
        if strict, improper > 0 { throw ExitCode(ExitStatus.malformedInput) }
        if mismatched > 0 || unreadable > 0 { throw ExitCode(ExitStatus.checkFailed) }
    }

    private mutating func check(list path: String) async throws {
        let list = try ChecksumList(path: path, algorithm: algorithm, allowInsecure: insecure)
        improper += list.improperLines.count
        if strict {
            for number in list.improperLines { Console.error("\(list.source): line \(number): improperly formatted checksum line") }
        }
        let total = FileSize.total(list.entries.map(\.line.path))
        let bar = ProgressBar.make(label: "checking", total: total, quiet: quiet)
        let checked = await list.check(skipMissing: ignoreMissing, progress: bar?.callback) { entry, outcome in
            bar?.finish()
            let name = ChecksumLine.displayName(entry.line.path)
            switch outcome {
            case .ok: if !quiet { Console.write("\(PrintableText.terminalSafe(name)): OK\n") }
            case .mismatch:
                mismatched += 1
                Console.write("\(PrintableText.terminalSafe(name)): FAILED\n")
            case .unreadable(let error):
                unreadable += 1
                Console.error(error.description)
                Console.write("\(PrintableText.terminalSafe(name)): FAILED open or read\n")
            }
        }
        bar?.finish()
        if ignoreMissing, checked.isEmpty {
            throw SignetCoreError.mismatch(detail: "\(list.source): no file was verified")
        }
    }
}
