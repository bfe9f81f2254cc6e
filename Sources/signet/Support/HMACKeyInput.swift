import SignetCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one way every command reads an HMAC key: the bytes of a file (`-`: standard input),
/// else the SIGNET_HMAC_KEY environment variable. Keys never go on the command line.
enum HMACKeyInput {
    static let environmentVariable = "SIGNET_HMAC_KEY"
    static let maximumSize = 1 << 20

    /// The key from `file`, or from the environment when `file` is nil; `option` names the
    /// command's file option in the message when there is neither.
    static func load(file: String?, option: String) throws -> SecretBytes {
        if let file {
            var bytes = try FileInput.readAll(path: file, limit: maximumSize)
            defer { SecretBytes.zero(&bytes) }
            guard !bytes.isEmpty else { throw SignetCoreError.invalidArgument(detail: "\(file): the HMAC key file is empty") }
            return SecretBytes(bytes)
        }
        if let value = getenv(environmentVariable) {
            let key = SecretBytes(Array(String(cString: value).utf8))
            guard !key.isEmpty else { throw SignetCoreError.invalidArgument(detail: "\(environmentVariable) is set but empty") }
            return key
        }
        throw SignetCoreError.invalidArgument(detail: "no HMAC key: give \(option) FILE or set \(environmentVariable)")
    }
}
