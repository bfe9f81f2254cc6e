/// One line of a checksum list as `sha256sum` writes and reads it.
///
/// GNU format: `<hex>  <name>` (two spaces; `<hex> *<name>` in binary mode). A name holding
/// a backslash, newline or carriage return is escaped (`\\`, `\n`, `\r`) and the line then
/// starts with a backslash. The BSD format that `sha256sum --tag` writes,
/// `SHA256 (<name>) = <hex>`, is read too.
public struct ChecksumLine: Sendable, Equatable {
    /// The digest in the line, as bytes.
    public var digest: [UInt8]
    /// The file name, unescaped.
    public var path: String
    /// The algorithm named by a BSD-style line; nil for GNU lines (inferred from the length).
    public var taggedAlgorithm: DigestAlgorithm?

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

    /// The name as sha256sum prints it in `--check` reports: escaped and prefixed with a
    /// backslash when it holds a backslash, newline or carriage return.
    public static func displayName(_ path: String) -> String {
        escaped(path).map { "\\" + $0 } ?? path
    }

    private static func escaped(_ path: String) -> String? {
        guard path.contains(where: { $0 == "\\" || $0 == "\n" || $0 == "\r" }) else { return nil }
        var escaped = ""
        for character in path {
            switch character {
            case "\\": escaped += "\\\\"
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    /// Parses one line; nil when it is not a properly formatted checksum line.
    public static func parse(_ rawLine: Substring) -> ChecksumLine? {
        var line = rawLine
        if line.hasSuffix("\r") { line = line.dropLast() }
        if let tagged = parseTagged(line) { return tagged }
        var escaped = false
        if line.first == "\\" {
            escaped = true
            line = line.dropFirst()
        }
        guard let space = line.firstIndex(of: " ") else { return nil }
        let hex = line[..<space]
        guard let digest = Hex.decode(hex), !digest.isEmpty else { return nil }
        var rest = line[line.index(after: space)...]
        guard let marker = rest.first, marker == " " || marker == "*" else { return nil }
        rest = rest.dropFirst()
        guard !rest.isEmpty else { return nil }
        let path = escaped ? unescape(rest) : String(rest)
        guard let path else { return nil }
        return ChecksumLine(digest: digest, path: path)
    }

    private static func parseTagged(_ line: Substring) -> ChecksumLine? {
        for algorithm in DigestAlgorithm.allCases {
            let prefix = "\(algorithm.tagName) ("
            guard line.hasPrefix(prefix), let marker = line.range(of: ") = ", options: .backwards) else { continue }
            let name = line[line.index(line.startIndex, offsetBy: prefix.count)..<marker.lowerBound]
            guard let digest = Hex.decode(line[marker.upperBound...]), digest.count == algorithm.byteCount,
                !name.isEmpty
            else { return nil }
            return ChecksumLine(digest: digest, path: String(name), taggedAlgorithm: algorithm)
        }
        return nil
    }

    private static func unescape(_ text: Substring) -> String? {
        var result = ""
        var iterator = text.makeIterator()
        while let character = iterator.next() {
            guard character == "\\" else { result.append(character); continue }
            switch iterator.next() {
            case "\\": result.append("\\")
            case "n": result.append("\n")
            case "r": result.append("\r")
            default: return nil
            }
        }
        return result
    }
}

import Foundation
