import CPKCS11
import SignetCore

/// Every error `SignetPKCS11` throws. Each names the module, URI or token concerned and the
/// problem, never a CLI flag and never a PIN.
public enum PKCS11Error: SignetError, Equatable {
    /// The module file could not be loaded (it does not exist, is not a shared library, or its
    /// `C_Initialize` failed), or no module was named at all (`path` is then empty).
    case moduleNotLoadable(path: String, detail: String)
    /// The file is a shared library but not a PKCS#11 module: it has no `C_GetFunctionList`.
    case notAPKCS11Module(path: String)
    /// The text is not a valid `pkcs11:` URI (RFC 7512). `uri` never shows a `pin-value`.
    case invalidURI(uri: String, detail: String)
    /// Nothing matches the URI: `detail` says which attributes matched nothing and, when it is
    /// cheap to find out, what there is instead.
    case noMatch(uri: String, detail: String)
    /// Two or more objects (or tokens) match where one is needed.
    case ambiguous(uri: String, count: Int)
    /// The token needs a PIN and none could be obtained.
    case pinRequired(token: String)
    /// The token refused the PIN.
    case wrongPIN(token: String)
    /// The token's user PIN is locked after too many wrong PINs.
    case pinLocked(token: String)
    /// The token does not offer a mechanism the operation needs.
    case unsupportedMechanism(token: String, mechanism: String)
    /// The key is of a kind, curve or size Signet cannot use, or its public half cannot be read.
    case unsupportedKey(uri: String, detail: String)
    /// A PKCS#11 call failed, or the module answered something impossible (a length longer than
    /// the buffer it was given, an empty attribute). `rv` is the `CKR_…` name, or hex.
    case tokenFailure(function: String, rv: String, detail: String)
    /// The file a URI's `pin-source` names cannot be read, or holds no usable PIN.
    case pinSourceUnreadable(path: String, detail: String)

    /// The message a user can act on.
    public var description: String {
        switch self {
        case .moduleNotLoadable(let path, let detail):
            return path.isEmpty ? "no PKCS#11 module: \(detail)" : "\(path): cannot load the PKCS#11 module: \(detail)"
        case .notAPKCS11Module(let path): return "\(path): not a PKCS#11 module (the library has no C_GetFunctionList)"
        case .invalidURI(let uri, let detail): return "\(uri): not a valid PKCS#11 URI (RFC 7512): \(detail)"
        case .noMatch(let uri, let detail): return "\(uri): nothing on the token matches (\(detail))"
        case .ambiguous(let uri, let count):
            return "\(uri): \(count) objects match where one is needed; add id= or object= to the URI to name one (or serial= when they are on different tokens)"
        case .pinRequired(let token): return "token \(Self.shown(token)): a PIN is needed and none was given"
        case .wrongPIN(let token): return "token \(Self.shown(token)): wrong PIN"
        case .pinLocked(let token):
            return "token \(Self.shown(token)): the user PIN is locked after too many wrong PINs; the token's security officer can unlock it"
        case .unsupportedMechanism(let token, let mechanism): return "token \(Self.shown(token)) does not support \(mechanism)"
        case .unsupportedKey(let uri, let detail): return "\(uri): \(detail)"
        case .tokenFailure(let function, let rv, let detail):
            if rv == Self.misbehaving {
                return "the PKCS#11 module misbehaved in \(function)\(detail.isEmpty ? "" : ": \(detail)")"
            }
            return "the PKCS#11 module failed in \(function) (\(rv))\(detail.isEmpty ? "" : ": \(detail)")"
        case .pinSourceUnreadable(let path, let detail): return "\(path): cannot read the PIN: \(detail)"
        }
    }

    /// A label a module gave, quoted with its control characters escaped (a token can be
    /// labelled with terminal escapes).
    static func shown(_ label: String) -> String {
        "\"" + PrintableText.escaped(label, limit: 64, marksCut: true) + "\""
    }

    /// The kind of failure, which decides the CLI's exit code.
    public var category: FailureCategory {
        switch self {
        case .wrongPIN: return .checkFailed
        case .invalidURI, .ambiguous: return .usage
        case .notAPKCS11Module, .noMatch, .unsupportedMechanism, .unsupportedKey: return .malformedInput
        case .moduleNotLoadable, .pinRequired, .pinLocked, .tokenFailure, .pinSourceUnreadable: return .environment
        }
    }

    /// The `CKR_…` name of a PKCS#11 return value for messages (`CKR_DEVICE_ERROR`), or
    /// `0x…` for one not named here.
    public static func returnValueName(_ rv: UInt) -> String {
        if let name = returnValueNames[rv] { return name }
        return "0x" + String(rv, radix: 16, uppercase: true)
    }

    private static let returnValueNames: [UInt: String] = [
        CKR_OK: "CKR_OK", CKR_CANCEL: "CKR_CANCEL", CKR_HOST_MEMORY: "CKR_HOST_MEMORY",
        CKR_SLOT_ID_INVALID: "CKR_SLOT_ID_INVALID", CKR_GENERAL_ERROR: "CKR_GENERAL_ERROR",
        CKR_FUNCTION_FAILED: "CKR_FUNCTION_FAILED", CKR_ARGUMENTS_BAD: "CKR_ARGUMENTS_BAD",
        CKR_CANT_LOCK: "CKR_CANT_LOCK", CKR_ATTRIBUTE_SENSITIVE: "CKR_ATTRIBUTE_SENSITIVE",
        CKR_ATTRIBUTE_TYPE_INVALID: "CKR_ATTRIBUTE_TYPE_INVALID", CKR_ATTRIBUTE_VALUE_INVALID: "CKR_ATTRIBUTE_VALUE_INVALID",
        CKR_DATA_INVALID: "CKR_DATA_INVALID", CKR_DATA_LEN_RANGE: "CKR_DATA_LEN_RANGE",
        CKR_DEVICE_ERROR: "CKR_DEVICE_ERROR", CKR_DEVICE_MEMORY: "CKR_DEVICE_MEMORY", CKR_DEVICE_REMOVED: "CKR_DEVICE_REMOVED",
        CKR_FUNCTION_CANCELED: "CKR_FUNCTION_CANCELED", CKR_FUNCTION_NOT_SUPPORTED: "CKR_FUNCTION_NOT_SUPPORTED",
        CKR_KEY_HANDLE_INVALID: "CKR_KEY_HANDLE_INVALID", CKR_KEY_SIZE_RANGE: "CKR_KEY_SIZE_RANGE",
        CKR_KEY_TYPE_INCONSISTENT: "CKR_KEY_TYPE_INCONSISTENT", CKR_KEY_FUNCTION_NOT_PERMITTED: "CKR_KEY_FUNCTION_NOT_PERMITTED",
        CKR_MECHANISM_INVALID: "CKR_MECHANISM_INVALID", CKR_MECHANISM_PARAM_INVALID: "CKR_MECHANISM_PARAM_INVALID",
        CKR_OBJECT_HANDLE_INVALID: "CKR_OBJECT_HANDLE_INVALID", CKR_OPERATION_ACTIVE: "CKR_OPERATION_ACTIVE",
        CKR_OPERATION_NOT_INITIALIZED: "CKR_OPERATION_NOT_INITIALIZED", CKR_PIN_INCORRECT: "CKR_PIN_INCORRECT",
        CKR_PIN_INVALID: "CKR_PIN_INVALID", CKR_PIN_LEN_RANGE: "CKR_PIN_LEN_RANGE", CKR_PIN_EXPIRED: "CKR_PIN_EXPIRED",
        CKR_PIN_LOCKED: "CKR_PIN_LOCKED", CKR_SESSION_CLOSED: "CKR_SESSION_CLOSED", CKR_SESSION_COUNT: "CKR_SESSION_COUNT",
        CKR_SESSION_HANDLE_INVALID: "CKR_SESSION_HANDLE_INVALID", CKR_SESSION_READ_ONLY: "CKR_SESSION_READ_ONLY",
        CKR_SIGNATURE_INVALID: "CKR_SIGNATURE_INVALID", CKR_SIGNATURE_LEN_RANGE: "CKR_SIGNATURE_LEN_RANGE",
        CKR_TEMPLATE_INCOMPLETE: "CKR_TEMPLATE_INCOMPLETE", CKR_TEMPLATE_INCONSISTENT: "CKR_TEMPLATE_INCONSISTENT",
        CKR_TOKEN_NOT_PRESENT: "CKR_TOKEN_NOT_PRESENT", CKR_TOKEN_NOT_RECOGNIZED: "CKR_TOKEN_NOT_RECOGNIZED",
        CKR_TOKEN_WRITE_PROTECTED: "CKR_TOKEN_WRITE_PROTECTED", CKR_USER_ALREADY_LOGGED_IN: "CKR_USER_ALREADY_LOGGED_IN",
        CKR_USER_NOT_LOGGED_IN: "CKR_USER_NOT_LOGGED_IN", CKR_USER_PIN_NOT_INITIALIZED: "CKR_USER_PIN_NOT_INITIALIZED",
        CKR_USER_TYPE_INVALID: "CKR_USER_TYPE_INVALID", CKR_USER_ANOTHER_ALREADY_LOGGED_IN: "CKR_USER_ANOTHER_ALREADY_LOGGED_IN",
        CKR_DOMAIN_PARAMS_INVALID: "CKR_DOMAIN_PARAMS_INVALID", CKR_CURVE_NOT_SUPPORTED: "CKR_CURVE_NOT_SUPPORTED",
        CKR_BUFFER_TOO_SMALL: "CKR_BUFFER_TOO_SMALL", CKR_CRYPTOKI_NOT_INITIALIZED: "CKR_CRYPTOKI_NOT_INITIALIZED",
        CKR_CRYPTOKI_ALREADY_INITIALIZED: "CKR_CRYPTOKI_ALREADY_INITIALIZED", CKR_FUNCTION_REJECTED: "CKR_FUNCTION_REJECTED",
    ]
}

extension PKCS11Error {
    /// The prefix of this module's codes.
    public static let codeDomain = "pkcs11"

    /// A failed call, named after its return value.
    static func failed(_ function: String, _ rv: UInt, _ detail: String = "") -> PKCS11Error {
        .tokenFailure(function: function, rv: returnValueName(rv), detail: detail)
    }

    /// The module answered `function` with something impossible (it returned `CKR_OK`).
    static func misbehaved(_ function: String, _ detail: String) -> PKCS11Error {
        .tokenFailure(function: function, rv: misbehaving, detail: detail)
    }

    /// The `rv` of a failure that is no return code: the module answered `CKR_OK` (or asked for
    /// more room) with values that cannot be right.
    static let misbehaving = "misbehaving"

    /// The module leaves out an entry of its function list.
    static func missing(_ function: String) -> PKCS11Error {
        .tokenFailure(function: function, rv: "CKR_FUNCTION_NOT_SUPPORTED", detail: "the module does not provide it")
    }

    /// Whether the failure means the cached session is gone or unusable, so a fresh one may work.
    var isStaleSession: Bool {
        guard case .tokenFailure(_, let rv, _) = self else { return false }
        return ["CKR_SESSION_HANDLE_INVALID", "CKR_SESSION_CLOSED", "CKR_USER_NOT_LOGGED_IN", "CKR_OPERATION_ACTIVE",
                "CKR_DEVICE_REMOVED", "CKR_TOKEN_NOT_PRESENT"].contains(rv)
    }

    /// Whether a sign operation may still be active on the session after this failure (it
    /// came after `C_SignInit`: a refused context-specific login, a failed or misbehaving
    /// `C_Sign`), so the session should not be used again.
    var mayLeaveOperationActive: Bool {
        switch self {
        case .wrongPIN, .pinLocked, .pinRequired: return true
        case .tokenFailure(let function, _, _): return function == "C_Sign" || function == "C_Login"
        default: return false
        }
    }

    /// Whether the failure means an object handle is no longer valid (another token in the
    /// slot, or the object was re-created), so looking the key up again may work.
    var isStaleHandle: Bool {
        guard case .tokenFailure(_, let rv, _) = self else { return false }
        return rv == "CKR_KEY_HANDLE_INVALID" || rv == "CKR_OBJECT_HANDLE_INVALID"
    }
}
