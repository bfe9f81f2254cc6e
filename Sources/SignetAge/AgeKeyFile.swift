import Foundation
import SignetCore

/// age's key files: identity files as `age-keygen` writes them and recipients files, one key a
/// line, with `#` comments and blank lines, LF or CRLF line ends.
///
/// ```
/// # created: 2021-01-02T15:30:45+01:00
/// # public key: age1lvyvwawkr0mcnnnncaghunadrqkmuf9e6507x9y920xxpp866cnql7dp2z
/// AGE-SECRET-KEY-1N9JEPW6DWJ0ZQUDX63F5A03GX8QUW7PXDE39N8UYF82VZ9PC8UFS3M7XA9
/// ```
///
/// As in age, a line is a comment only when `#` is its first character, and a key line is
/// exactly the key: no leading or trailing white space. Errors name the file and the line, and
/// never quote an identity line.
public enum AgeKeyFile {
    /// The largest key file read, 1 MiB: room for thousands of keys, a bound on hostile input.
    public static let maximumSize = 1 << 20

    /// The X25519 identities in an age identity file, in file order.
    ///
    /// - Parameters:
    ///   - bytes: The file's content; the caller owns zeroing it.
    ///   - source: The file's name, for messages.
    /// - Throws: ``AgeError/invalidKey(source:detail:)`` for a file larger than ``maximumSize``,
    ///   without identities, or with a line that is not an identity;
    ///   ``AgeError/unsupported(source:detail:)`` for a passphrase-protected identity file and
    ///   for post-quantum, plugin and SSH identities.
    public static func identities(in bytes: [UInt8], source: String) throws(AgeError) -> [X25519Identity] {
        try checkSize(bytes, source: source)
        if startsWith(bytes, "age-encryption.org/") || startsWith(bytes, "-----BEGIN AGE ENCRYPTED FILE-----") {
            throw AgeError.unsupported(
                source: source, detail: "passphrase-protected identity files (this is an age-encrypted file; decrypt it first)")
        }
        var identities: [X25519Identity] = []
        for line in lines(of: bytes) {
            let text = bytes[line.range]
            if startsWith(text, "-----BEGIN ") {
                throw AgeError.unsupported(
                    source: source, detail: "SSH and PEM private keys as identities (only AGE-SECRET-KEY-1… for now) (line \(line.number))")
            }
            do throws(AgeError) {
                identities.append(try X25519Identity(utf8: text, source: source))
            } catch {
                throw located(error, line: line.number)
            }
        }
        guard !identities.isEmpty else {
            throw AgeError.invalidKey(source: source, detail: "no identities (AGE-SECRET-KEY-1… lines) in the file")
        }
        return identities
    }

    /// The X25519 recipients in a recipients file, in file order.
    ///
    /// - Parameters:
    ///   - bytes: The file's content.
    ///   - source: The file's name, for messages.
    /// - Throws: ``AgeError/invalidKey(source:detail:)`` for a file larger than ``maximumSize``,
    ///   without recipients, or with a line that is not a recipient;
    ///   ``AgeError/unsupported(source:detail:)`` for OpenSSH (`ssh-ed25519`, `ssh-rsa`),
    ///   post-quantum, tagged and plugin recipients.
    public static func recipients(in bytes: [UInt8], source: String) throws(AgeError) -> [X25519Recipient] {
        try checkSize(bytes, source: source)
        var recipients: [X25519Recipient] = []
        for line in lines(of: bytes) {
            let text = bytes[line.range]
            guard let string = String(validating: text, as: UTF8.self) else {
                throw AgeError.invalidKey(source: source, detail: "not UTF-8 text (line \(line.number))")
            }
            do throws(AgeError) {
                recipients.append(try X25519Recipient(string, source: source))
            } catch {
                throw located(error, line: line.number)
            }
        }
        guard !recipients.isEmpty else {
            throw AgeError.invalidKey(source: source, detail: "no recipients (age1… lines) in the file")
        }
        return recipients
    }

    /// What `age-keygen` writes for `identity`: a `# created:` comment with the time in RFC 3339
    /// (in `timeZone`, `Z` for UTC), a `# public key:` comment with the recipient, and the key
    /// line, each ending in LF.
    ///
    /// The text holds the secret key: write it only to a private (0600) file.
    public static func keyFileContents(_ identity: X25519Identity, created: Date, timeZone: TimeZone = .current) -> String {
        "# created: \(rfc3339(created, in: timeZone))\n"
            + "# public key: \(identity.recipient.string)\n"
            + "\(identity.string)\n"
    }

    /// `date` as Go's `time.RFC3339` writes it (what age-keygen uses): whole seconds, and the
    /// offset as `±hh:mm`, or `Z` when it is zero.
    static func rfc3339(_ date: Date, in timeZone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func padded(_ value: Int?, _ width: Int) -> String {
            let digits = String(value ?? 0)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        let offset = timeZone.secondsFromGMT(for: date)
        var zone = "Z"
        if offset != 0 {
            let sign = offset < 0 ? "-" : "+"
            zone = "\(sign)\(padded(abs(offset) / 3600, 2)):\(padded(abs(offset) % 3600 / 60, 2))"
        }
        let day = "\(padded(parts.year, 4))-\(padded(parts.month, 2))-\(padded(parts.day, 2))"
        let time = "\(padded(parts.hour, 2)):\(padded(parts.minute, 2)):\(padded(parts.second, 2))"
        return "\(day)T\(time)\(zone)"
    }

    /// A line that is neither blank nor a comment: its number (from 1) and where it is, without
    /// its line end.
    private struct Line {
        var number: Int
        var range: Range<Int>
    }

    /// The lines of `bytes` that hold keys; a CR before the LF belongs to the line end.
    private static func lines(of bytes: [UInt8]) -> [Line] {
        var result: [Line] = []
        var number = 0
        var start = 0
        while start < bytes.count {
            number += 1
            var end = start
            while end < bytes.count, bytes[end] != UInt8(ascii: "\n") { end += 1 }
            var contentEnd = end
            if contentEnd > start, bytes[contentEnd - 1] == UInt8(ascii: "\r") { contentEnd -= 1 }
            if contentEnd > start, bytes[start] != UInt8(ascii: "#") {
                result.append(Line(number: number, range: start..<contentEnd))
            }
            start = end + 1
        }
        return result
    }

    private static func checkSize(_ bytes: [UInt8], source: String) throws(AgeError) {
        guard bytes.count <= maximumSize else {
            throw AgeError.invalidKey(source: source, detail: "larger than \(maximumSize >> 20) MiB: not an age key file")
        }
    }

    private static func startsWith(_ bytes: some Collection<UInt8>, _ prefix: String) -> Bool {
        bytes.starts(with: prefix.utf8)
    }

    /// `error` with the line it is about.
    private static func located(_ error: AgeError, line: Int) -> AgeError {
        switch error {
        case .invalidKey(let source, let detail): return .invalidKey(source: source, detail: "\(detail) (line \(line))")
        case .unsupported(let source, let detail): return .unsupported(source: source, detail: "\(detail) (line \(line))")
        default: return error
        }
    }
}
