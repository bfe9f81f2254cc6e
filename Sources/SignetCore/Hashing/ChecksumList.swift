/// A checksum list as `sha256sum`, `shasum` and `signet hash` write it — GNU lines
/// (`HEX  FILE`, `HEX *FILE`, escaped names) and BSD-tagged lines (`SHA256 (FILE) = HEX`) — and
/// the check of the files it names, as `sha256sum --check` does it.
///
/// Each line's algorithm is the one its tag names, else the one the caller chose, else the one
/// its digest's length gives. MD5 and SHA-1 lines are refused unless the caller allows insecure
/// digests. Blank lines and `#` comments are skipped; other lines that are not checksum lines
/// are counted in ``improperLines``.
///
/// ```swift
/// let list = try ChecksumList(path: "SHA256SUMS")
/// await list.check { entry, outcome in print(entry.line.path, outcome) }
/// ```
public struct ChecksumList: Sendable {
    /// One checksum line and the algorithm it is checked with.
    public struct Entry: Sendable, Equatable {
        /// The parsed line: digest, path and any tag.
        public let line: ChecksumLine
        /// The algorithm its file is hashed with.
        public let algorithm: DigestAlgorithm
        /// Its line number in the list, from 1.
        public let lineNumber: Int
    }

    /// What checking one entry found.
    public enum Outcome: Sendable, Equatable {
        /// The file's digest is the listed one (compared in constant time).
        case ok
        /// The file's digest differs.
        case mismatch
        /// The file could not be read.
        case unreadable(SignetCoreError)
    }

    /// The largest list read.
    public static let maximumSize = 64 << 20

    /// Where the list came from, for messages.
    public let source: String
    /// The checksum lines, in order.
    public let entries: [Entry]
    /// The numbers of the lines that are neither checksum lines nor blank or comments.
    public let improperLines: [Int]

    /// Parses a list's bytes.
    ///
    /// - Parameters:
    ///   - algorithm: the algorithm of untagged lines; nil to infer it from each digest's length.
    ///   - allowInsecure: accept MD5 and SHA-1 lines.
    /// - Throws: ``SignetCoreError/insecureAlgorithm(source:algorithm:)`` for an MD5 or SHA-1
    ///   line without `allowInsecure`; ``SignetCoreError/malformed(source:detail:)`` when no
    ///   line is a checksum line.
    public init(bytes: [UInt8], source: String, algorithm: DigestAlgorithm? = nil, allowInsecure: Bool = false) throws {
        var entries: [Entry] = []
        var improper: [Int] = []
        var lineNumber = 0
        for rawLine in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            lineNumber += 1
            if rawLine.isEmpty || rawLine.first == UInt8(ascii: "#") { continue }
            guard let text = String(validating: rawLine, as: UTF8.self), let line = ChecksumLine.parse(Substring(text)),
                let found = Self.algorithm(of: line, chosen: algorithm)
            else {
                improper.append(lineNumber)
                continue
            }
            if found.isInsecure, !allowInsecure {
                throw SignetCoreError.insecureAlgorithm(source: "\(source): line \(lineNumber)", algorithm: found.rawValue)
            }
            entries.append(Entry(line: line, algorithm: found, lineNumber: lineNumber))
        }
        guard !entries.isEmpty else { throw SignetCoreError.malformed(source: source, detail: "no properly formatted checksum lines found") }
        self.source = source
        self.entries = entries
        self.improperLines = improper
    }

    /// Reads and parses the list at `path` (`-`: standard input), at most ``maximumSize`` bytes.
    public init(path: String, algorithm: DigestAlgorithm? = nil, allowInsecure: Bool = false) throws {
        try self.init(
            bytes: try FileInput.readAll(path: path, limit: Self.maximumSize), source: path == "-" ? "standard input" : path,
            algorithm: algorithm, allowInsecure: allowInsecure)
    }

    /// The algorithm for one line: named by its tag, else `chosen` when the digest has its
    /// length, else inferred from the length. Nil when the digest fits none.
    static func algorithm(of line: ChecksumLine, chosen: DigestAlgorithm?) -> DigestAlgorithm? {
        if let tagged = line.taggedAlgorithm { return tagged }
        if let chosen { return line.digest.count == chosen.byteCount ? chosen : nil }
        return DigestAlgorithm.inferred(fromByteCount: line.digest.count, among: DigestAlgorithm.allCases)
    }

    /// Hashes the listed files on all cores and calls `report` with each entry and its outcome,
    /// in list order. `skipMissing` leaves out files that do not exist. Returns the entries
    /// checked.
    @discardableResult
    public func check(skipMissing: Bool = false, progress: FileDigester.Progress? = nil, report: (Entry, Outcome) -> Void) async -> [Entry] {
        let checked = skipMissing ? entries.filter { AtomicFile.exists($0.line.path) } : entries
        await FileDigester.digest(jobs: checked.map { (path: $0.line.path, algorithm: $0.algorithm) }, progress: progress) { index, result in
            let entry = checked[index]
            switch result {
            case .success(let digest): report(entry, ConstantTime.equals(digest.bytes, entry.line.digest) ? .ok : .mismatch)
            case .failure(let error): report(entry, .unreadable(error as? SignetCoreError ?? .io(path: entry.line.path, detail: "\(error)")))
            }
        }
        return checked
    }
}
