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

    /// The identities in an identity file, in file order: an age key file (X25519 identities),
    /// or one PEM private key — an RSA or Ed25519 key in any format SignetCore reads, OpenSSH's
    /// `openssh-key-v1` included — as age reads SSH keys.
    ///
    /// - Parameters:
    ///   - bytes: The file's content; the caller owns zeroing it.
    ///   - source: The file's name, for messages.
    /// - Throws: ``AgeError/invalidKey(source:detail:)`` for a file larger than ``maximumSize``,
    ///   without identities, or with a line that is not an identity;
    ///   ``AgeError/unsupported(source:detail:)`` for a passphrase-protected file or key (decrypt
    ///   it first), ECDSA keys, and post-quantum and plugin identities.
    public static func identities(in bytes: [UInt8], source: String) throws -> [any AgeKeyPairIdentity] {
        try checkSize(bytes, source: source)
        if startsWith(bytes, "age-encryption.org/") || startsWith(bytes, "-----BEGIN AGE ENCRYPTED FILE-----") {
            throw AgeError.unsupported(
                source: source, detail: "passphrase-protected identity files (this is an age-encrypted file; decrypt it first)")
        }
        if isPEM(bytes) { return [try identity(pem: bytes, source: source)] }
        var identities: [any AgeKeyPairIdentity] = []
        for line in lines(of: bytes) {
            let text = bytes[line.range]
            do {
                if text.starts(with: Array(MLKEM768X25519Identity.humanReadablePart.utf8) + [0x31]) {
                    identities.append(try MLKEM768X25519Identity(utf8: text, source: source))
                } else {
                    identities.append(try X25519Identity(utf8: text, source: source))
                }
            } catch {
                throw located(error, line: line.number)
            }
        }
        guard !identities.isEmpty else {
            throw AgeError.invalidKey(source: source, detail: "no identities (AGE-SECRET-KEY-1… lines) in the file")
        }
        return identities
    }

    /// The recipients in a recipients file, in file order: `age1…` X25519 recipients and
    /// OpenSSH public key lines as in `authorized_keys` (`ssh-rsa`, `ssh-ed25519`), or one PEM
    /// public key (an RSA or Ed25519 key, as SignetCore writes them).
    ///
    /// - Parameters:
    ///   - bytes: The file's content.
    ///   - source: The file's name, for messages.
    /// - Throws: ``AgeError/invalidKey(source:detail:)`` for a file larger than ``maximumSize``,
    ///   without recipients, or with a line that is not a recipient;
    ///   ``AgeError/unsupported(source:detail:)`` for ECDSA, post-quantum, tagged and plugin
    ///   recipients.
    public static func recipients(in bytes: [UInt8], source: String) throws -> [any AgeRecipient] {
        try checkSize(bytes, source: source)
        if isPEM(bytes) {
            let decoded: DecodedKey
            do {
                decoded = try KeyDecoder.decode(bytes, source: source)
            } catch {
                throw AgeSSH.converted(error, source: source)
            }
            let key: PublicKey
            switch decoded {
            case .publicKey(let publicKey): key = publicKey
            case .privateKey(let privateKey): key = privateKey.publicKey
            case .encryptedPrivateKey:
                throw AgeError.invalidKey(source: source, detail: "a private key where a recipient (public key) is expected")
            }
            return [try AgeSSH.recipient(publicKey: key, source: source)]
        }
        var recipients: [any AgeRecipient] = []
        for line in lines(of: bytes) {
            let text = bytes[line.range]
            guard let string = String(validating: text, as: UTF8.self) else {
                throw AgeError.invalidKey(source: source, detail: "not UTF-8 text (line \(line.number))")
            }
            do {
                recipients.append(try recipient(string, source: source))
            } catch {
                throw located(error, line: line.number)
            }
        }
        guard !recipients.isEmpty else {
            throw AgeError.invalidKey(source: source, detail: "no recipients (age1… or OpenSSH public key lines) in the file")
        }
        return recipients
    }

    /// One recipient as `age -r` takes it: an `age1…` X25519 recipient, or an OpenSSH public
    /// key line (`ssh-ed25519 AAAA…`, `ssh-rsa AAAA…`, options and comment allowed).
    ///
    /// - Parameter source: How messages name the input; by default, the string itself quoted
    ///   (cut short, and never an identity's secret).
    public static func recipient(_ string: String, source: String? = nil) throws -> any AgeRecipient {
        let source = source ?? X25519Recipient.quoted(string)
        if string.utf8.count <= X25519Recipient.maximumLength, let key = try? AgeSSH.keyFields(of: string) {
            return try AgeSSH.recipient(type: key.type, blob: key.blob, source: source)
        }
        if string.hasPrefix(MLKEM768X25519Recipient.humanReadablePart + "1") {
            return try MLKEM768X25519Recipient(string, source: source)
        }
        do {
            return try X25519Recipient(string, source: source)
        } catch AgeError.invalidKey(let source, let detail) where detail == X25519Recipient.notARecipient {
            throw AgeError.invalidKey(source: source, detail: "not an age recipient (age1…) or OpenSSH public key (ssh-ed25519 …, ssh-rsa …)")
        }
    }

    /// The identity of the one private key in a PEM file.
    private static func identity(pem bytes: [UInt8], source: String) throws -> any AgeKeyPairIdentity {
        let decoded: DecodedKey
        do {
            decoded = try KeyDecoder.decode(bytes, source: source)
        } catch {
            throw AgeSSH.converted(error, source: source)
        }
        switch decoded {
        case .privateKey(let key): return try AgeSSH.identity(privateKey: key, source: source)
        case .publicKey:
            throw AgeError.invalidKey(source: source, detail: "a public key where an identity (private key) is expected")
        case .encryptedPrivateKey:
            throw AgeError.unsupported(source: source, detail: "a passphrase-protected private key here; decrypt it first")
        }
    }

    /// Whether the file is a PEM document (after leading white space), not a key-per-line file.
    static func isPEM(_ bytes: [UInt8]) -> Bool {
        startsWith(bytes.drop(while: { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }), "-----BEGIN ")
    }

    /// What `age-keygen` writes for `identity`: a `# created:` comment with the time in RFC 3339
    /// (in `timeZone`, `Z` for UTC), a `# public key:` comment with the recipient, and the key
    /// line, each ending in LF.
    ///
    /// The text holds the secret key: write it only to a private (0600) file.
    public static func keyFileContents(_ identity: X25519Identity, created: Date, timeZone: TimeZone = .current) -> String {
        keyFileContents(recipient: identity.recipient.string, secret: identity.string, created: created, timeZone: timeZone)
    }

    /// What `age-keygen -pq` writes for a post-quantum `identity`, in the same shape.
    public static func keyFileContents(_ identity: MLKEM768X25519Identity, created: Date, timeZone: TimeZone = .current) -> String {
        keyFileContents(recipient: identity.recipient.string, secret: identity.string, created: created, timeZone: timeZone)
    }

    private static func keyFileContents(recipient: String, secret: String, created: Date, timeZone: TimeZone) -> String {
        "# created: \(rfc3339(created, in: timeZone))\n"
            + "# public key: \(recipient)\n"
            + "\(secret)\n"
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

    private static func checkSize(_ bytes: [UInt8], source: String) throws {
        guard bytes.count <= maximumSize else {
            throw AgeError.invalidKey(source: source, detail: "larger than \(maximumSize >> 20) MiB: not an age key file")
        }
    }

    private static func startsWith(_ bytes: some Collection<UInt8>, _ prefix: String) -> Bool {
        bytes.starts(with: prefix.utf8)
    }

    /// `error` with the line it is about.
    private static func located(_ error: any Error, line: Int) -> any Error {
        switch error {
        case AgeError.invalidKey(let source, let detail): return AgeError.invalidKey(source: source, detail: "\(detail) (line \(line))")
        case AgeError.unsupported(let source, let detail): return AgeError.unsupported(source: source, detail: "\(detail) (line \(line))")
        default: return error
        }
    }
}
