import Crypto
import SignetCore

/// Single-use recovery codes for when the authenticator app is lost: 80 random bits each,
/// written as 16 characters of Crockford's base32 in groups of four (`7k2m-q9xd-3hfa-0v5c`),
/// which survive being read aloud or copied by hand (no `i`, `l`, `o`, `u`; those typed for `1`
/// and `0` are read as them). A server keeps only ``hash(_:userID:key:)`` of each.
public enum RecoveryCodes {
    /// The characters of a code, without the dashes.
    public static let characters = 16
    /// The alphabet: Crockford's base32, lower case.
    static let alphabet = Array("0123456789abcdefghjkmnpqrstvwxyz".utf8)

    /// `count` new codes (10 by default), each 80 random bits.
    public static func generate(count: Int = 10) -> [String] {
        (0..<max(0, count)).map { _ in
            var random = RandomBytes.make(10)
            defer { random.withUnsafeMutableBytes { SecretBytes.zero($0) } }
            var bits: UInt64 = 0
            var pending = 0
            var characters: [UInt8] = []
            for byte in random {
                bits = bits << 8 | UInt64(byte)
                pending += 8
                while pending >= 5 {
                    pending -= 5
                    characters.append(alphabet[Int(bits >> UInt64(pending) & 31)])
                }
            }
            let groups = stride(from: 0, to: characters.count, by: 4).map { String(decoding: characters[$0..<$0 + 4], as: UTF8.self) }
            return groups.joined(separator: "-")
        }
    }

    /// The code as typed, in its one form: dashes and spaces dropped, lower case, `i`/`l` read as
    /// `1` and `o` as `0`; nil unless that leaves 16 characters of the alphabet.
    public static func normalise(_ typed: String) -> String? {
        var output: [UInt8] = []
        for byte in typed.utf8 {
            if byte == UInt8(ascii: "-") || byte == UInt8(ascii: " ") { continue }
            let lower = (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
            let mapped: UInt8 = switch lower {
            case UInt8(ascii: "i"), UInt8(ascii: "l"): UInt8(ascii: "1")
            case UInt8(ascii: "o"): UInt8(ascii: "0")
            default: lower
            }
            guard alphabet.contains(mapped), output.count < characters else { return nil }
            output.append(mapped)
        }
        guard output.count == characters else { return nil }
        return String(decoding: output, as: UTF8.self)
    }

    /// What a server stores for a normalised code of `userID`: hex HMAC-SHA256 under `key` (a
    /// key of the server's, so that a database copy alone cannot test guesses) of the user id, a
    /// zero byte and the code — bound to its user, so a code cannot be moved to another account.
    public static func hash(_ normalised: String, userID: String, key: SecretBytes) -> String {
        let message = Array(userID.utf8) + [0] + Array(normalised.utf8)
        let mac = key.withUnsafeBytes { HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: $0)) }
        return Hex.encode(Array(mac))
    }
}
