/// One `-----BEGIN …-----` … `-----END …-----` block of a PEM document (RFC 7468).
public struct PEMBlock: Sendable, Equatable {
    /// The label: `PRIVATE KEY`, `PUBLIC KEY`, `RSA PRIVATE KEY` …
    public var label: String
    /// RFC 1421 headers (`Proc-Type`, `DEK-Info`), present only in legacy encrypted PEM.
    public var headers: [String: String]
    /// The decoded body.
    public var der: [UInt8]
    /// The 1-based line of the BEGIN line, for messages.
    public var line: Int
}

/// PEM encoding and a strict decoder whose errors name the line at fault.
public enum PEM {
    /// Whether `text` looks like PEM at all (holds a BEGIN line).
    public static func looksLikePEM(_ text: String) -> Bool { text.contains("-----BEGIN ") }

    /// Encodes DER under `label` with 64-character lines, as openssl writes it.
    public static func encode(label: String, der: [UInt8]) -> String {
        let body = Base64.encode(der)
        var lines = ["-----BEGIN \(label)-----"]
        var index = body.startIndex
        while index < body.endIndex {
            let end = body.index(index, offsetBy: 64, limitedBy: body.endIndex) ?? body.endIndex
            lines.append(String(body[index..<end]))
            index = end
        }
        lines.append("-----END \(label)-----")
        return lines.joined(separator: "\n") + "\n"
    }

    /// Decodes every block in `text`. Text outside blocks is ignored, as openssl does.
    public static func decode(_ text: String, source: String) throws -> [PEMBlock] {
        var blocks: [PEMBlock] = []
        var current: (label: String, line: Int, headers: [String: String], body: String, inHeaders: Bool)?
        var lineNumber = 0
        // Split on the scalar, not the Character: "\r\n" is one Character in Swift.
        for rawLine in text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            let line = Substring(rawLine).trimmingSuffix { $0 == "\r" || $0 == " " || $0 == "\t" }
            if var block = current {
                if line.hasPrefix("-----END ") {
                    guard line.hasSuffix("-----"), line.count > 14 else {
                        throw SignetCoreError.malformed(source: source, detail: "malformed PEM END line (line \(lineNumber))")
                    }
                    let label = String(line.dropFirst(9).dropLast(5))
                    guard label == block.label else {
                        throw SignetCoreError.malformed(
                            source: source, detail: "PEM END label \"\(label)\" does not match BEGIN \"\(block.label)\" (line \(lineNumber))")
                    }
                    guard let der = Base64.decode(block.body) else {
                        throw SignetCoreError.malformed(source: source, detail: "PEM body is not valid base64 (lines \(block.line + 1)–\(lineNumber - 1))")
                    }
                    blocks.append(PEMBlock(label: label, headers: block.headers, der: der, line: block.line))
                    current = nil
                    continue
                }
                if line.hasPrefix("-----") {
                    throw SignetCoreError.malformed(source: source, detail: "PEM block \"\(block.label)\" has no END line before line \(lineNumber)")
                }
                if block.inHeaders, let colon = line.firstIndex(of: ":"), block.body.isEmpty {
                    let key = String(line[..<colon]).trimmed
                    block.headers[key] = String(line[line.index(after: colon)...]).trimmed
                } else if block.inHeaders, line.isEmpty, !block.headers.isEmpty {
                    block.inHeaders = false
                } else {
                    guard line.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "/" || $0 == "=") }) else {
                        throw SignetCoreError.malformed(source: source, detail: "PEM body holds a character that is not base64 (line \(lineNumber))")
                    }
                    block.inHeaders = false
                    block.body += line
                }
                current = block
            } else if line.hasPrefix("-----BEGIN ") {
                guard line.hasSuffix("-----"), line.count > 16 else {
                    throw SignetCoreError.malformed(source: source, detail: "malformed PEM BEGIN line (line \(lineNumber))")
                }
                current = (String(line.dropFirst(11).dropLast(5)), lineNumber, [:], "", true)
            } else if line.hasPrefix("-----END ") {
                throw SignetCoreError.malformed(source: source, detail: "PEM END line without a BEGIN line (line \(lineNumber))")
            }
        }
        if let block = current {
            throw SignetCoreError.malformed(source: source, detail: "PEM block \"\(block.label)\" from line \(block.line) has no END line (truncated?)")
        }
        guard !blocks.isEmpty else {
            throw SignetCoreError.malformed(source: source, detail: "not a PEM document (line 1)")
        }
        return blocks
    }
}

extension StringProtocol {
    var trimmed: String {
        String(drop { $0 == " " || $0 == "\t" }.trimmingSuffix { $0 == " " || $0 == "\t" })
    }

    func trimmingSuffix(while predicate: (Character) -> Bool) -> SubSequence {
        var end = endIndex
        while end > startIndex {
            let previous = index(before: end)
            guard predicate(self[previous]) else { break }
            end = previous
        }
        return self[startIndex..<end]
    }
}
