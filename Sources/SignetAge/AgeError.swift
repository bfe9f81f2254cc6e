import SignetCore

/// Every error `SignetAge` throws. Each names the input and the problem, never a CLI flag.
public enum AgeError: SignetError, Equatable {
    /// The header or armor is not age v1: a bad line, base64 that is not canonical, a stanza
    /// out of bounds, a missing MAC line.
    case malformedHeader(source: String, detail: String)
    /// The header MAC does not verify: the header was altered, or the file key is wrong.
    case headerMACMismatch(source: String)
    /// No identity given could unwrap any stanza of the file.
    case noMatchingIdentity(source: String, detail: String)
    /// The passphrase does not unwrap the scrypt stanza.
    case wrongPassphrase(source: String)
    /// A stanza tagged for the identity's key does not decrypt with it: the file was altered
    /// (or, once in four billion, another key's tag collides with this one).
    case stanzaDoesNotOpen(source: String, detail: String)
    /// The payload does not authenticate: truncated, reordered, altered, or with data after the
    /// last chunk. Nothing of an unauthenticated chunk is ever released.
    case payloadInvalid(source: String, detail: String)
    /// A recipient or identity string or file is not valid (`age1…`, `AGE-SECRET-KEY-1…`, a key file).
    case invalidKey(source: String, detail: String)
    /// The file asks for more work than allowed (an scrypt work factor beyond the bound).
    case workFactorTooHigh(source: String, logN: Int, maximum: Int)
    /// Something well formed that Signet does not support.
    case unsupported(source: String, detail: String)
    /// A combination of arguments that cannot work (scrypt with other recipients, no recipients).
    case invalidArgument(detail: String)
    /// Reading or writing failed.
    case io(path: String, detail: String)

    /// The message a user can act on.
    public var description: String {
        switch self {
        case .malformedHeader(let source, let detail): return "\(source): not an age file: \(detail)"
        case .headerMACMismatch(let source): return "\(source): the header's MAC does not verify (the header was altered, or the key unwrapped is wrong)"
        case .noMatchingIdentity(let source, let detail): return "\(source): no identity matches a recipient of this file (\(detail))"
        case .wrongPassphrase(let source): return "\(source): wrong passphrase"
        case .stanzaDoesNotOpen(let source, let detail): return "\(source): the file key does not decrypt: \(detail)"
        case .payloadInvalid(let source, let detail): return "\(source): the encrypted data does not authenticate: \(detail)"
        case .invalidKey(let source, let detail): return "\(source): \(detail)"
        case .workFactorTooHigh(let source, let logN, let maximum):
            return "\(source): the scrypt work factor 2^\(logN) is above the limit 2^\(maximum)"
        case .unsupported(let source, let detail): return "\(source): not supported: \(detail)"
        case .invalidArgument(let detail): return detail
        case .io(let path, let detail): return "\(path): \(detail)"
        }
    }

    /// The kind of failure, which decides the CLI's exit code.
    public var category: FailureCategory {
        switch self {
        case .headerMACMismatch, .noMatchingIdentity, .wrongPassphrase, .stanzaDoesNotOpen, .payloadInvalid: return .checkFailed
        case .malformedHeader, .invalidKey, .workFactorTooHigh, .unsupported: return .malformedInput
        case .invalidArgument: return .usage
        case .io: return .environment
        }
    }
}

extension AgeError {
    /// The prefix of this module's codes.
    public static let codeDomain = "age"
}
