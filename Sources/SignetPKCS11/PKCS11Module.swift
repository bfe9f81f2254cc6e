import CPKCS11
import SignetCore
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A PKCS#11 module (a `.so` that drives tokens: SoftHSM2, OpenSC, a vendor's HSM library),
/// loaded once per process.
///
/// ``load(path:)`` keeps one object per module file for the life of the process, so its
/// sessions and logins are reused by every signer. Every call into the module goes through one
/// lock per module: many modules are not truly concurrent, and PKCS#11 sessions must not be
/// used from two threads at once. Calls block while the token works (or, for a PIN provider
/// that asks a person, while it waits).
///
/// Everything the module answers is checked: every return value, every length it gives back
/// (a module that claims to have written more than the buffer it got, or gives an empty key,
/// is a ``PKCS11Error/tokenFailure(function:rv:detail:)``, never a crash), and its counts are
/// capped (1,024 slots, 10,000 objects a search).
public final class PKCS11Module: @unchecked Sendable {
    /// The module file, as it was given.
    public let path: String
    /// What the module says about itself.
    public let info: PKCS11LibraryInfo
    /// The `dlopen` handle.
    private let library: UnsafeMutableRawPointer
    /// The module's function list, valid until it is finalised.
    let functions: UnsafeMutablePointer<CK_FUNCTION_LIST>
    /// Whether this object initialised the module (so it finalises it).
    private let initializedHere: Bool
    /// The open sessions, one a token; held while the module is called.
    let state = Mutex(SessionTable())

    /// The most slots accepted from a module.
    static let maximumSlots: CK_ULONG = 1024

    private static let loaded = Mutex<[String: PKCS11Module]>([:])
    /// Whether `C_Finalize` was called (at exit), so that it is called once.
    private let finalized = Atomic<Bool>(false)

    /// The module at `path`, loaded and initialised on first use and shared afterwards (the
    /// path is resolved through symbolic links, so two names of one file share it too).
    ///
    /// - Throws: ``PKCS11Error/moduleNotLoadable(path:detail:)`` when the file cannot be
    ///   loaded or its `C_Initialize` fails, ``PKCS11Error/notAPKCS11Module(path:)`` when it
    ///   has no `C_GetFunctionList`.
    public static func load(path: String) throws -> PKCS11Module {
        let key = canonicalPath(path)
        return try loaded.withLock { (modules: inout [String: PKCS11Module]) throws -> PKCS11Module in
            if let module = modules[key] { return module }
            let module = try PKCS11Module(path: path)
            modules[key] = module
            if module.initializedHere {
                // Modules stay loaded for the process; C_Finalize them when it exits, as the
                // standard asks. One handler per module, registered after its C_Initialize:
                // handlers run newest first, so each module is finalized before whatever its
                // own C_Initialize registered (OpenSSL's cleanup, in SoftHSM2) has run.
                finalizeOrder.withLock { $0.append(module) }
                atexit { PKCS11Module.finalizeNewest() }
            }
            return module
        }
    }

    /// The modules to finalize at exit, oldest first.
    private static let finalizeOrder = Mutex<[PKCS11Module]>([])

    /// Calls `C_Finalize` on the most recently loaded module not yet finalized; one exit
    /// handler per module calls it. Under the module's own lock, so that no call of another
    /// thread is inside the module meanwhile.
    private static func finalizeNewest() {
        guard let module = finalizeOrder.withLock({ $0.popLast() }) else { return }
        module.state.withLock { (_: inout SessionTable) in
            if !module.finalized.exchange(true, ordering: .relaxed) { _ = module.functions.pointee.C_Finalize?(nil) }
        }
    }

    private init(path: String) throws {
        _ = dlerror()
        guard let library = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
            throw PKCS11Error.moduleNotLoadable(path: path, detail: Self.loaderError() ?? "the dynamic loader refused it")
        }
        guard let symbol = dlsym(library, "C_GetFunctionList") else {
            dlclose(library)
            throw PKCS11Error.notAPKCS11Module(path: path)
        }
        let getFunctionList = unsafeBitCast(symbol, to: CK_C_GetFunctionList.self)
        var list: UnsafeMutablePointer<CK_FUNCTION_LIST>? = nil
        let listed = getFunctionList(&list)
        guard listed == CKR_OK, let list, let initialize = list.pointee.C_Initialize else {
            dlclose(library)
            let detail = listed == CKR_OK
                ? "C_GetFunctionList gave no function list, or one without C_Initialize"
                : "C_GetFunctionList failed (\(PKCS11Error.returnValueName(listed)))"
            throw PKCS11Error.moduleNotLoadable(path: path, detail: detail)
        }
        var arguments = CK_C_INITIALIZE_ARGS()
        arguments.flags = CKF_OS_LOCKING_OK
        let initialized: CK_RV = withUnsafeMutablePointer(to: &arguments) { initialize(UnsafeMutableRawPointer($0)) }
        guard initialized == CKR_OK || initialized == CKR_CRYPTOKI_ALREADY_INITIALIZED else {
            dlclose(library)
            throw PKCS11Error.moduleNotLoadable(path: path, detail: "C_Initialize failed (\(PKCS11Error.returnValueName(initialized)))")
        }
        var libraryInfo = CK_INFO()
        var described: CK_RV = CKR_FUNCTION_NOT_SUPPORTED
        if let getInfo = list.pointee.C_GetInfo { described = getInfo(&libraryInfo) }
        guard described == CKR_OK else {
            if initialized == CKR_OK { _ = list.pointee.C_Finalize?(nil) }
            dlclose(library)
            throw PKCS11Error.moduleNotLoadable(path: path, detail: "C_GetInfo failed (\(PKCS11Error.returnValueName(described)))")
        }
        self.path = path
        self.library = library
        self.functions = list
        self.initializedHere = initialized == CKR_OK
        self.info = PKCS11LibraryInfo(libraryInfo)
    }

    deinit {
        if initializedHere && !finalized.exchange(true, ordering: .relaxed) { _ = functions.pointee.C_Finalize?(nil) }
        dlclose(library)
    }

    private static func loaderError() -> String? {
        guard let message = dlerror() else { return nil }
        return String(cString: message)
    }

    private static func canonicalPath(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    // MARK: Locking

    /// Runs `body` holding the module's lock, with the session table.
    func locked<R: Sendable>(_ body: (inout SessionTable) throws -> R) throws -> R {
        try state.withLock { (table: inout SessionTable) throws -> R in try body(&table) }
    }

    // MARK: Slots and tokens

    /// Every slot of the module, with its token (empty slots and uninitialised tokens included).
    public func slots() throws -> [PKCS11SlotInfo] {
        try locked { _ in try slotIDs(tokenPresent: false).map { try slotInfo($0) } }
    }

    /// The slots whose token fits the URI's slot and token attributes (and whose module fits
    /// its `library-…` attributes). Tokens not initialised yet are left out.
    public func tokens(matching uri: PKCS11URI) throws -> [PKCS11SlotInfo] {
        try locked { _ in try matchingSlots(uri) }
    }

    func matchingSlots(_ uri: PKCS11URI) throws -> [PKCS11SlotInfo] {
        guard uri.matches(library: info) else { return [] }
        return try initializedSlots().filter { uri.matches(slot: $0) }
    }

    /// The slots holding an initialised token.
    func initializedSlots() throws -> [PKCS11SlotInfo] {
        try slotIDs(tokenPresent: true).map { try slotInfo($0) }.filter { $0.token?.isInitialized == true }
    }

    /// The ids of the slots, those with a token only when `tokenPresent`.
    func slotIDs(tokenPresent: Bool) throws -> [CK_SLOT_ID] {
        guard let getSlotList = functions.pointee.C_GetSlotList else { throw PKCS11Error.missing("C_GetSlotList") }
        let present: CK_BBOOL = tokenPresent ? 1 : 0
        for _ in 0..<3 {
            var count: CK_ULONG = 0
            let counted = getSlotList(present, nil, &count)
            guard counted == CKR_OK else { throw PKCS11Error.failed("C_GetSlotList", counted) }
            guard count <= Self.maximumSlots else {
                throw PKCS11Error.misbehaved("C_GetSlotList", "it reports \(count) slots (at most \(Self.maximumSlots) are accepted)")
            }
            if count == 0 { return [] }
            var ids = [CK_SLOT_ID](repeating: 0, count: Int(count))
            var filled = count
            let rv: CK_RV = ids.withUnsafeMutableBufferPointer { buffer in getSlotList(present, buffer.baseAddress, &filled) }
            if rv == CKR_BUFFER_TOO_SMALL { continue }  // a token arrived in between: ask again
            guard rv == CKR_OK else { throw PKCS11Error.failed("C_GetSlotList", rv) }
            guard filled <= count else {
                throw PKCS11Error.misbehaved("C_GetSlotList", "it listed \(filled) slots into room for \(count)")
            }
            return Array(ids[0..<Int(filled)])
        }
        throw PKCS11Error.failed("C_GetSlotList", CKR_BUFFER_TOO_SMALL, "the slot list kept changing")
    }

    /// A slot's description and its token's.
    func slotInfo(_ id: CK_SLOT_ID) throws -> PKCS11SlotInfo {
        guard let getSlotInfo = functions.pointee.C_GetSlotInfo else { throw PKCS11Error.missing("C_GetSlotInfo") }
        guard let getTokenInfo = functions.pointee.C_GetTokenInfo else { throw PKCS11Error.missing("C_GetTokenInfo") }
        var slot = CK_SLOT_INFO()
        let rv = getSlotInfo(id, &slot)
        guard rv == CKR_OK else { throw PKCS11Error.failed("C_GetSlotInfo", rv) }
        var token: PKCS11TokenInfo? = nil
        if (slot.flags & CKF_TOKEN_PRESENT) != 0 {
            var tokenInfo = CK_TOKEN_INFO()
            let read = getTokenInfo(id, &tokenInfo)
            if read == CKR_OK {
                token = PKCS11TokenInfo(tokenInfo)
            } else if read != CKR_TOKEN_NOT_PRESENT && read != CKR_TOKEN_NOT_RECOGNIZED && read != CKR_DEVICE_REMOVED {
                throw PKCS11Error.failed("C_GetTokenInfo", read)
            }
        }
        return PKCS11SlotInfo(
            id: UInt(id), slotDescription: PaddedText.decode(slot.slotDescription), manufacturer: PaddedText.decode(slot.manufacturerID),
            flags: UInt(slot.flags), token: token)
    }

    /// The one slot holding a token that fits `uri`.
    /// - Throws: ``PKCS11Error/noMatch(uri:detail:)`` or ``PKCS11Error/ambiguous(uri:count:)``.
    func uniqueSlot(_ uri: PKCS11URI) throws -> PKCS11SlotInfo {
        let slots = try matchingSlots(uri)
        if slots.count == 1 { return slots[0] }
        if slots.count > 1 { throw PKCS11Error.ambiguous(uri: uri.description, count: slots.count) }
        throw PKCS11Error.noMatch(uri: uri.description, detail: try tokenMismatchDetail(uri))
    }

    /// Why no token fits `uri`, naming the tokens there are.
    func tokenMismatchDetail(_ uri: PKCS11URI) throws -> String {
        guard uri.matches(library: info) else {
            return "the module is \"\(info.libraryDescription)\" by \"\(info.manufacturer)\", version \(info.version)"
        }
        let present = try initializedSlots().compactMap { slot in slot.token.map { (slot, $0) } }
        guard !present.isEmpty else { return "the module has no token" }
        let names = present.prefix(8).map { slot, token in "\"\(token.label)\" (serial \(token.serial), slot \(slot.id))" }
        return "no token fits; the tokens are \(names.joined(separator: ", "))\(present.count > 8 ? " …" : "")"
    }
}
