import ArgumentParser
import SignetCore

/// `signet hash --check`: verifies the files named in checksum lists, reporting as
/// `sha256sum --check` does.
struct ChecksumListChecker {
    /// The largest checksum list read.
    static let maximumListSize = 64 << 20

    let algorithm: DigestAlgorithm?
    let insecure: Bool
    let quiet: Bool
    let ignoreMissing: Bool
    let strict: Bool

    private var mismatched = 0
    private var unreadable = 0
    private var improper = 0
    private var verified = 0

    init(algorithm: DigestAlgorithm?, insecure: Bool, quiet: Bool, ignoreMissing: Bool, strict: Bool) {
        self.algorithm = algorithm
        self.insecure = insecure
        self.quiet = quiet
        self.ignoreMissing = ignoreMissing
        self.strict = strict
    }

    private struct Entry {
        var line: ChecksumLine
        var algorithm: DigestAlgorithm
    }

    mutating func run(lists: [String]) async throws {
        var malformedList: SignetCoreError?
        for list in lists {
            do throws(SignetCoreError) {
                try await check(list: list)
            } catch {
                Console.error(error.description)
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

    private mutating func check(list: String) async throws(SignetCoreError) {
        let bytes = try FileInput.readAll(path: list, limit: Self.maximumListSize)
        let listName = list == "-" ? "standard input" : list
        var entries: [Entry] = []
        var lineNumber = 0
        for rawLine in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            lineNumber += 1
            if rawLine.isEmpty || rawLine.first == UInt8(ascii: "#") { continue }
            guard let text = String(validating: rawLine, as: UTF8.self),
                let line = ChecksumLine.parse(Substring(text))
            else {
                improper += 1
                if strict { Console.error("\(listName): line \(lineNumber): improperly formatted checksum line") }
                continue
            }
            guard let entryAlgorithm = try resolveAlgorithm(for: line, listName: listName, lineNumber: lineNumber) else {
                improper += 1
                continue
            }
            entries.append(Entry(line: line, algorithm: entryAlgorithm))
        }
        guard !entries.isEmpty else {
            throw SignetCoreError.malformed(source: listName, detail: "no properly formatted checksum lines found")
        }
        if ignoreMissing {
            entries.removeAll { !AtomicFile.exists($0.line.path) }
        }
        let jobs = entries.map { (path: $0.line.path, algorithm: $0.algorithm) }
        let bar = ProgressBar.make(label: "checking", total: FileSize.total(jobs.map(\.path)), quiet: quiet)
        await FileDigester.digest(jobs: jobs, progress: bar?.callback) { index, result in
            bar?.finish()
            report(entries[index], result)
        }
        bar?.finish()
        if ignoreMissing, verified == 0 {
            throw SignetCoreError.mismatch(detail: "\(listName): no file was verified")
        }
    }

    private mutating func report(_ entry: Entry, _ result: Result<MessageDigest, SignetCoreError>) {
        let name = ChecksumLine.displayName(entry.line.path)
        switch result {
        case .success(let digest):
            verified += 1
            if ConstantTime.equals(digest.bytes, entry.line.digest) {
                if !quiet { Console.write("\(name): OK\n") }
            } else {
                mismatched += 1
                Console.write("\(name): FAILED\n")
            }
        case .failure(let error):
            unreadable += 1
            Console.error(error.description)
            Console.write("\(name): FAILED open or read\n")
        }
    }

    /// The algorithm for one line: named by a `--tag` line, given with `-a`, or inferred
    /// from the digest length. Nil when the line's digest fits none.
    private func resolveAlgorithm(for line: ChecksumLine, listName: String, lineNumber: Int) throws(SignetCoreError) -> DigestAlgorithm? {
        let found: DigestAlgorithm?
        if let tagged = line.taggedAlgorithm {
            found = tagged
        } else if let algorithm {
            found = line.digest.count == algorithm.byteCount ? algorithm : nil
        } else {
            found = DigestAlgorithm.inferred(fromByteCount: line.digest.count, among: DigestAlgorithm.allCases)
        }
        guard let found else { return nil }
        if found.isInsecure, !insecure {
            throw SignetCoreError.invalidArgument(
                detail: "\(listName): line \(lineNumber) is a \(found.rawValue) checksum; \(found.rawValue) is broken, pass --insecure to check it anyway")
        }
        return found
    }
}
