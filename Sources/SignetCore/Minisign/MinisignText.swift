/// The text layout shared by minisign's files: lines, comment prefixes, base64 payloads,
/// and the bounds minisign's own reader imposes (its `fgets` buffers).
enum MinisignText {
    static let untrustedCommentPrefix = Array("untrusted comment: ".utf8)
    static let trustedCommentPrefix = Array("trusted comment: ".utf8)

    /// The longest untrusted comment line minisign reads (1024-byte buffer, newline and NUL).
    static let maximumUntrustedLineLength = 1022
    /// The longest trusted comment line minisign reads (8192-byte buffer, newline and NUL).
    static let maximumTrustedLineLength = 8190
    /// The largest key or signature file read: the longest lines above, with room to spare.
    static let maximumFileSize = 16 << 10

    /// Splits `bytes` into exactly `count` lines (the final line ending is optional; a CR ends
    /// a line's text, as in minisign's reader); anything after them but empty lines is refused.
    static func lines(_ bytes: [UInt8], count: Int, what: String, source: String) throws -> [ArraySlice<UInt8>] {
        // Like minisign's trim(): a line ends at its first CR, if any.
        var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { line in
            line.firstIndex(of: UInt8(ascii: "\r")).map { line[..<$0] } ?? line
        }
        while let last = lines.last, last.isEmpty, lines.count > count { lines.removeLast() }
        guard lines.count >= count, !(lines.count == count && lines[count - 1].isEmpty) else {
            throw SignetCoreError.malformed(
                source: source, detail: "\(what) is truncated: \(count) lines expected, \(lines.filter { !$0.isEmpty }.count) found")
        }
        guard lines.count == count else {
            throw SignetCoreError.malformed(source: source, detail: "unexpected content after line \(count) of \(what)")
        }
        return lines
    }

    /// The text after `prefix` on line `number`, refusing lines longer than `maximumLength`.
    static func comment(
        _ line: ArraySlice<UInt8>, prefix: [UInt8], maximumLength: Int, number: Int, source: String
    ) throws -> [UInt8] {
        guard line.count <= maximumLength else {
            throw SignetCoreError.malformed(
                source: source, detail: "line \(number) is \(line.count) bytes long (minisign reads at most \(maximumLength))")
        }
        guard line.starts(with: prefix) else {
            throw SignetCoreError.malformed(
                source: source, detail: "line \(number) should start with \"\(String(decoding: prefix, as: UTF8.self))\"")
        }
        return Array(line.dropFirst(prefix.count))
    }

    /// Decodes line `number` as standard base64 of exactly `count` bytes.
    static func base64(
        _ line: ArraySlice<UInt8>, count: Int, what: String, number: Int, source: String
    ) throws -> [UInt8] {
        // A valid line is exactly this long; checking first bounds the work on hostile input.
        let encodedLength = (count + 2) / 3 * 4
        guard line.count == encodedLength, var decoded = Base64.decode(String(decoding: line, as: UTF8.self)) else {
            throw SignetCoreError.malformed(
                source: source, detail: "line \(number) is not the base64 of \(what) (\(encodedLength) characters expected)")
        }
        guard decoded.count == count else {
            SecretBytes.zero(&decoded)
            throw SignetCoreError.malformed(source: source, detail: "line \(number) holds \(decoded.count) bytes, not the \(count) of \(what)")
        }
        return decoded
    }

    /// Checks that a comment to be written fits on one line and within minisign's bounds.
    static func checkComment(_ text: String, kind: String, maximumLength: Int) throws {
        let bytes = Array(text.utf8)
        guard !bytes.contains(UInt8(ascii: "\n")), !bytes.contains(UInt8(ascii: "\r")), !bytes.contains(0) else {
            throw SignetCoreError.invalidArgument(detail: "the \(kind) comment must be one line (no CR, LF or NUL)")
        }
        guard bytes.count <= maximumLength else {
            throw SignetCoreError.invalidArgument(
                detail: "the \(kind) comment is \(bytes.count) bytes long; minisign reads at most \(maximumLength)")
        }
    }
}
