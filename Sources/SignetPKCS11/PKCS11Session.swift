import CPKCS11
import SignetCore

/// Supplies the user PIN of a token. The CLI's implementation reads a file, the environment or
/// the terminal; a server's might read a secret store.
///
/// It is asked only when a token needs a login and the module has none yet: logins last as long
/// as the process keeps the module loaded (see ``PKCS11Module``), for every caller.
public protocol PKCS11PINProvider: Sendable {
    /// The user PIN of the token labelled `token`.
    func pin(for token: String) throws -> SecretBytes
}

/// A provider with no PIN to give: tokens that need one fail with
/// ``PKCS11Error/pinRequired(token:)``.
public struct PKCS11NoPIN: PKCS11PINProvider {
    /// A provider that refuses every request.
    public init() {}

    /// Always throws ``PKCS11Error/pinRequired(token:)``.
    public func pin(for token: String) throws -> SecretBytes {
        throw PKCS11Error.pinRequired(token: token)
    }
}

/// A provider that gives the same PIN for every token (a URI's `pin-value` or `pin-source`, a
/// test's PIN).
public struct PKCS11FixedPIN: PKCS11PINProvider {
    private let secret: SecretBytes

    /// Gives `pin`.
    public init(_ pin: SecretBytes) {
        secret = pin
    }

    /// Gives the UTF-8 bytes of `pin` (copied straight into a ``SecretBytes``).
    public init(_ pin: String) {
        secret = SecretBytes(pin.utf8)
    }

    /// The PIN, whatever the token.
    public func pin(for token: String) throws -> SecretBytes { secret }
}

/// The module's open sessions: one a slot, reused while the same token is in it.
struct SessionTable: Sendable {
    var sessions: [CK_SLOT_ID: CachedSession] = [:]
}

/// An open session and whether the user is logged in through it.
struct CachedSession: Sendable {
    var handle: CK_SESSION_HANDLE
    var label: String
    var serial: String
    var loggedIn: Bool
}

extension PKCS11Module {
    /// Runs `body` with a session on the token in `slot`: the cached one, or a new read/write
    /// session (read-only when the token is write-protected), logged in as the user first when
    /// `login` is set and the token requires it. When the call fails because the session is
    /// gone (the token was removed and put back, the module closed it), it is replaced and
    /// `body` runs once more.
    func withSession<R>(
        _ slot: PKCS11SlotInfo, login: Bool, pin: any PKCS11PINProvider, table: inout SessionTable,
        _ body: (CK_SESSION_HANDLE) throws -> R
    ) throws -> R {
        var retried = false
        while true {
            let session = try self.session(slot, login: login, pin: pin, table: &table)
            do {
                return try body(session)
            } catch let error as PKCS11Error where error.isStaleSession && !retried {
                retried = true
                dropSession(slot.id, table: &table)
            }
        }
    }

    /// The session for `slot`, opened and logged in as asked.
    func session(_ slot: PKCS11SlotInfo, login: Bool, pin: any PKCS11PINProvider, table: inout SessionTable) throws -> CK_SESSION_HANDLE {
        guard let token = slot.token else {
            throw PKCS11Error.failed("C_OpenSession", CKR_TOKEN_NOT_PRESENT, "slot \(slot.id) holds no token")
        }
        let id = CK_SLOT_ID(slot.id)
        var cached: CachedSession
        if let existing = table.sessions[id], existing.label == token.label, existing.serial == token.serial {
            cached = existing
        } else {
            dropSession(slot.id, table: &table)
            cached = CachedSession(handle: try openSession(id), label: token.label, serial: token.serial, loggedIn: false)
            table.sessions[id] = cached
        }
        if login, token.loginRequired, !cached.loggedIn {
            try logIn(cached.handle, token: token, pin: pin)
            cached.loggedIn = true
            table.sessions[id] = cached
        }
        return cached.handle
    }

    /// Closes the cached session of `slot`, if any (closing the last one logs the user out).
    func dropSession(_ slot: UInt, table: inout SessionTable) {
        guard let stale = table.sessions.removeValue(forKey: CK_SLOT_ID(slot)) else { return }
        _ = functions.pointee.C_CloseSession?(stale.handle)
    }

    private func openSession(_ slot: CK_SLOT_ID) throws -> CK_SESSION_HANDLE {
        guard let openCall = functions.pointee.C_OpenSession else { throw PKCS11Error.missing("C_OpenSession") }
        var handle: CK_SESSION_HANDLE = 0
        var rv = openCall(slot, CKF_SERIAL_SESSION | CKF_RW_SESSION, nil, nil, &handle)
        if rv == CKR_TOKEN_WRITE_PROTECTED { rv = openCall(slot, CKF_SERIAL_SESSION, nil, nil, &handle) }
        guard rv == CKR_OK else { throw PKCS11Error.failed("C_OpenSession", rv) }
        return handle
    }

    /// Logs in as the user (`CKU_USER`), or, with `contextSpecific`, authenticates the
    /// operation just started on a key that asks for its PIN every time
    /// (`CKA_ALWAYS_AUTHENTICATE`, `CKU_CONTEXT_SPECIFIC`).
    func logIn(_ session: CK_SESSION_HANDLE, token: PKCS11TokenInfo, pin: any PKCS11PINProvider, contextSpecific: Bool = false) throws {
        guard let loginCall = functions.pointee.C_Login else { throw PKCS11Error.missing("C_Login") }
        if token.pinLocked { throw PKCS11Error.pinLocked(token: token.label) }
        let user: CK_USER_TYPE = contextSpecific ? CKU_CONTEXT_SPECIFIC : CKU_USER
        let rv: CK_RV
        if token.protectedAuthenticationPath {
            rv = loginCall(session, user, nil, 0)  // the PIN is entered on the device
        } else {
            let secret = try pin.pin(for: token.label)
            rv = secret.withUnsafeBytes { raw in
                loginCall(session, user, UnsafeMutablePointer(mutating: raw.baseAddress?.assumingMemoryBound(to: UInt8.self)), CK_ULONG(raw.count))
            }
        }
        switch rv {
        case CKR_OK, CKR_USER_ALREADY_LOGGED_IN: return
        case CKR_PIN_INCORRECT, CKR_PIN_INVALID, CKR_PIN_LEN_RANGE: throw PKCS11Error.wrongPIN(token: token.label)
        case CKR_PIN_LOCKED: throw PKCS11Error.pinLocked(token: token.label)
        default: throw PKCS11Error.failed("C_Login", rv)
        }
    }
}
