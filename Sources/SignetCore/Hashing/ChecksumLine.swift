/// One line of a checksum list as `sha256sum` writes and reads it.
///
/// GNU format: `<hex>  <name>` (two spaces; `<hex> *<name>` in binary mode). A name holding
/// a backslash, newline or carriage return is escaped (`\\`, `\n`, `\r`) and the line then
/// starts with a backslash. The BSD format that `sha256sum --tag` writes,
/// `SHA256 (<name>) = <hex>`, is read too, escaped the same way.
///
/// Lines are handled as Unicode scalars, not Characters: `"\r\n"` is one Character in Swift,
/// and a name that starts with a combining mark would merge with the space before it.
public struct ChecksumLine: Sendable, Equatable {
    /// The digest in the line, as bytes.
    public var digest: [UInt8]
    /// The file name, unescaped.
    public var path: String
    /// The algorithm named by a BSD-style line; nil for GNU lines (inferred from the length).
    public var taggedAlgorithm: DigestAlgorithm?

    /// A line listing `digest` for `path` (unescaped); `taggedAlgorithm` is the algorithm a
    /// BSD-style line names, nil for a GNU line.
    public init(digest: [UInt8], path: String, taggedAlgorithm: DigestAlgorithm? = nil) {
        self.digest = digest
        self.path = path
        self.taggedAlgorithm = taggedAlgorithm
    }

    /// Formats a GNU-style line (without the trailing newline).
    public static func format(hex: String, path: String) -> String {
        guard let escaped = escaped(path) else { return "\(hex)  \(path)" }
        return "\\\(hex)  \(escaped)"
    }

    /// Formats a BSD-style line as `sha256sum --tag` does (without the trailing newline).
    public static func formatTagged(algorithm: DigestAlgorithm, hex: String, path: String) -> String {
        guard let escaped = escaped(path) else { return "\(algorithm.tagName) (\(path)) = \(hex)" }
        return "\\\(algorithm.tagName) (\(escaped)) = \(hex)"
    }

    /// The name as sha256sum prints it in `--check` reports: escaped and prefixed with a
    /// backslash when it holds a backslash, newline or carriage return.
    public static func displayName(_ path: String) -> String {
        escaped(path).map { "\\" + $0 } ?? path
    }

    private static func escaped(_ path: String) -> String? {
        let scalars = path.unicodeScalars
        guard scalars.contains(where: { $0 == "\\" || $0 == "\n" || $0 == "\r" }) else { return nil }
        var escaped = String.UnicodeScalarView()
        for scalar in scalars {
            switch scalar {
            case "\\": escaped.append(contentsOf: "\\\\".unicodeScalars)
            case "\n": escaped.append(contentsOf: "\\n".unicodeScalars)
            case "\r": escaped.append(contentsOf: "\\r".unicodeScalars)
            default: escaped.append(scalar)
            }
        }
        return String(escaped)
    }

    /// Parses one line; nil when it is not a properly formatted checksum line.
    public static func parse(_ rawLine: Substring) -> ChecksumLine? {
        var line = rawLine.unicodeScalars[...]
        if line.last == "\r" { line = line.dropLast() }
        var escaped = false
        if line.first == "\\" {
            escaped = true
            line = line.dropFirst()
        }
        if let tagged = parseTagged(line, escaped: escaped) { return tagged }
        guard let space = line.firstIndex(of: " ") else { return nil }
        guard let digest = Hex.decode(String(line[..<space])), !digest.isEmpty else { return nil }
        var rest = line[line.index(after: space)...]
        guard let marker = rest.first, marker == " " || marker == "*" else { return nil }
        rest = rest.dropFirst()
        guard !rest.isEmpty, let path = escaped ? unescape(rest) : String(rest) else { return nil }
        return ChecksumLine(digest: digest, path: path)
    }

    private static func parseTagged(_ line: Substring.UnicodeScalarView.SubSequence, escaped: Bool) -> ChecksumLine? {
        let text = String(String.UnicodeScalarView(line))
        for algorithm in DigestAlgorithm.allCases {
            let prefix = "\(algorithm.tagName) ("
            guard text.unicodeScalars.starts(with: prefix.unicodeScalars),
                let marker = text.range(of: ") = ", options: .backwards)
            else { continue }
            let nameStart = text.unicodeScalars.index(text.startIndex, offsetBy: prefix.unicodeScalars.count)
            guard nameStart <= marker.lowerBound else { return nil }
            let rawName = text.unicodeScalars[nameStart..<marker.lowerBound]
            guard let digest = Hex.decode(String(text.unicodeScalars[marker.upperBound...])),
                digest.count == algorithm.byteCount, !rawName.isEmpty,
                let name = escaped ? unescape(rawName) : String(String.UnicodeScalarView(rawName))
            else { return nil }
            return ChecksumLine(digest: digest, path: name, taggedAlgorithm: algorithm)
        }
        return nil
    }

    private static func unescape<Scalars: Sequence>(_ text: Scalars) -> String? where Scalars.Element == Unicode.Scalar {
        var result = String.UnicodeScalarView()
        var iterator = text.makeIterator()
        while let scalar = iterator.next() {
            guard scalar == "\\" else { result.append(scalar); continue }
            switch iterator.next() {
            case "\\": result.append("\\")
            case "n": result.append("\n")
            case "r": result.append("\r")
            default: return nil
            }
        }
        return String(result)
    }
}
