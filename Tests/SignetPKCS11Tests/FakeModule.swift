import Foundation
import SignetTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A fake PKCS#11 module in C, built with gcc for the tests that need a token to misbehave in
/// ways SoftHSM2 never does (a locked PIN, a missing mechanism, impossible lengths and counts).
///
/// One slot holds one token, `fake` (user PIN `1234`, login required), with one P-256 key pair:
/// private key handle 1 (seen only once logged in), public key handle 2, both labelled `key` with
/// the id `01`. Each ``Behaviour`` is the same source compiled with `-DBEHAVIOUR=n` into a file
/// of its own: `PKCS11Module` keeps one object (and its logins) per path for the process, and
/// tests run in parallel, so a test that logs in or counts calls uses a behaviour no other test
/// loads.
enum FakeModule {
    /// What the module does wrong; the raw value is the C source's `BEHAVIOUR`.
    enum Behaviour: Int, CaseIterable, Sendable {
        case normal = 0  // Nothing: `C_Sign` with `CKM_ECDSA` gives 64 bytes, a wrong PIN is `CKR_PIN_INCORRECT`.
        case wrongPIN  // As `normal`, in a file of its own (for a test that tries a wrong PIN first).
        case pinLocked  // The token's flags say `CKF_USER_PIN_LOCKED`, and `C_Login` returns `CKR_PIN_LOCKED`.
        case loginLocked  // The flags say nothing, but `C_Login` returns `CKR_PIN_LOCKED`.
        case mechanismInvalid  // `C_SignInit` returns `CKR_MECHANISM_INVALID` (and `C_GenerateKeyPair` always does).
        case hugeSignature  // `C_Sign` returns `CKR_BUFFER_TOO_SMALL` asking for 1 MiB.
        case overlongWrite  // `C_Sign` returns `CKR_OK` and a length 64 bytes longer than the buffer it was given.
        case shortSignature  // `C_Sign` returns a 10-byte ECDSA signature.
        case slotCountLies  // `C_GetSlotList` counts 5 slots, then finds the room for 5 too small, every time.
        case tooManySlots  // `C_GetSlotList` counts 1,048,576 slots.
        case slotListOverflow  // `C_GetSlotList` lists 2 slots into room for 1.
        case attributeLies  // `C_GetAttributeValue` gives `CKA_EC_POINT` a length of 0xFFFFFFFF (a 32-bit -1).
        case attributeOverlong  // `C_GetAttributeValue` says it wrote 100 bytes more of `CKA_EC_POINT` than it had room for.
        case endlessSearch  // `C_FindObjects` fills every batch and never ends the search.
        case staleSession  // `C_FindObjectsInit` always returns `CKR_SESSION_HANDLE_INVALID`.
        case strangeReturnCode  // `C_OpenSession` returns a vendor-defined code, `0x80000001`.
        case initializeFails  // `C_Initialize` returns `CKR_GENERAL_ERROR`.
        case noFunctionList  // The library has no `C_GetFunctionList`.
        case nullFunctionList  // `C_GetFunctionList` returns `CKR_OK` and no list.
        case probedSign  // `C_Sign` (with room for the signature) first calls the probe `fake_set_probe` set.
    }

    /// p11-kit's PKCS#11 header, which the module is built with.
    static let header = "/usr/include/p11-kit-1/p11-kit/pkcs11.h"

    private struct Built {
        var folder: TemporaryFolder?
        var paths: [Behaviour: String] = [:]
    }

    /// The folder of the process's modules (it stays: a loaded module is never unloaded).
    private static let built = Mutex(Built())

    /// The path of the module for `behaviour`, built on first use. Fails the test (naming the
    /// Debian package) when gcc or p11-kit's header is missing.
    static func build(_ behaviour: Behaviour) throws -> String {
        let gcc = try #require(ProcessRunner.which("gcc"), "gcc is missing: install the Debian package gcc (the fake PKCS#11 module is C)")
        try #require(FileManager.default.fileExists(atPath: header), "\(header) is missing: install the Debian package libp11-kit-dev")
        return try built.withLock { (state: inout Built) throws -> String in
            if let path = state.paths[behaviour] { return path }
            let folder = try state.folder ?? TemporaryFolder(prefix: "signet-fake-pkcs11")
            state.folder = folder
            let source = try folder.write("fake.c", Self.source)
            let output = folder.file("fake-\(behaviour).so")
            let compiled = try ProcessRunner.run(
                gcc, ["-shared", "-fPIC", "-O1", "-DBEHAVIOUR=\(behaviour.rawValue)", "-I/usr/include/p11-kit-1", "-o", output, source])
            try #require(compiled.status == 0, "gcc cannot build the fake PKCS#11 module \(behaviour): \(compiled)")
            state.paths[behaviour] = output
            return output
        }
    }

    /// How many times the loaded module at `path` has been called at `function` (one of
    /// `C_GetSlotList`, `C_OpenSession`, `C_Login`, `C_FindObjectsInit`, `C_FindObjects`, `C_Sign`).
    static func calls(_ function: String, in path: String) throws -> Int {
        let library = try #require(dlopen(path, RTLD_NOW | RTLD_NOLOAD), "\(path) is not loaded")
        defer { dlclose(library) }
        let symbol = try #require(dlsym(library, "fake_calls"), "\(path) has no fake_calls")
        let count = unsafeBitCast(symbol, to: (@convention(c) (UnsafePointer<CChar>?) -> Int).self)
        let calls = function.withCString { count($0) }
        try #require(calls >= 0, "the fake module does not count \(function)")
        return calls
    }

    /// Makes every `C_Sign` of the loaded ``Behaviour/probedSign`` module at `path` call `probe`
    /// first, on the thread that called `C_Sign`.
    static func setProbe(_ path: String, _ probe: @escaping @convention(c) () -> Void) throws {
        let library = try #require(dlopen(path, RTLD_NOW | RTLD_NOLOAD), "\(path) is not loaded")
        defer { dlclose(library) }
        let symbol = try #require(dlsym(library, "fake_set_probe"), "\(path) has no fake_set_probe")
        unsafeBitCast(symbol, to: (@convention(c) ((@convention(c) () -> Void)?) -> Void).self)(probe)
    }
}
