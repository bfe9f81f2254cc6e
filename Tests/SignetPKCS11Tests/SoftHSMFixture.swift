import Foundation
import SignetCore
import SignetPKCS11
import SignetTestSupport
import Testing

/// A private SoftHSM2 token store, shared by the whole test process.
///
/// SoftHSM2 reads `SOFTHSM2_CONF` once, in `C_Initialize`, and sees only the tokens that exist
/// then (tokens `softhsm2-util` makes afterwards appear after a new `C_Initialize`; new objects
/// on existing tokens appear at once). Signet loads a module once per process and tests run in
/// parallel in one process, so the store is made once, before any test loads the module: one
/// temporary folder, the environment variable set once, and every token the tests use
/// initialised up front. Each test uses a token of its own (``Token``), so logins, wrong PINs
/// and keys never cross tests.
enum SoftHSM {
    /// Debian's SoftHSM2 module (package softhsm2).
    static let modulePath = "/usr/lib/softhsm/libsofthsm2.so"
    /// Every token's user PIN.
    static let pin = "1234"
    /// Every token's security officer PIN.
    static let soPIN = "5678"

    /// The tokens, one for each test or group of tests that must not share keys or logins.
    enum Token: String, CaseIterable, Sendable {
        case p256 = "signet-p256"
        case p384 = "signet-p384"
        case rsa = "signet-rsa"
        case ed25519 = "signet-ed25519"
        case tool = "signet-pkcs11-tool"
        case wrongPIN = "signet-wrong-pin"
        case noPIN = "signet-no-pin"
        case ambiguous = "signet-ambiguous"
        case missing = "signet-missing"
        case listing = "signet-listing"
        case keySource = "signet-key-source"
        case publicOnly = "signet-public"
        case signOnly = "signet-sign-only"

        /// The token's label.
        var label: String { rawValue }

        /// `pkcs11:token=LABEL`.
        var uri: PKCS11URI {
            var uri = PKCS11URI()
            uri.token = rawValue
            return uri
        }
    }

    /// The folder holding the configuration and the tokens.
    struct Store: Sendable {
        let folder: TemporaryFolder
        let configuration: String
    }

    struct SetupFailure: Error, CustomStringConvertible {
        let description: String
    }

    private static let prepared: Result<Store, SetupFailure> = prepare()

    /// The store, made on first use. Fails the test (naming the Debian package to install)
    /// when SoftHSM2 is missing.
    static func store() throws -> Store {
        try #require(
            FileManager.default.fileExists(atPath: modulePath),
            "SoftHSM2's PKCS#11 module \(modulePath) is missing: install the Debian package softhsm2")
        try #require(ProcessRunner.which("softhsm2-util") != nil, "softhsm2-util is missing: install the Debian package softhsm2")
        return try prepared.get()
    }

    /// The SoftHSM2 module, loaded once the store exists.
    static func module() throws -> PKCS11Module {
        _ = try store()
        return try PKCS11Module.load(path: modulePath)
    }

    /// The environment for tools run on the store (`softhsm2-util`, `pkcs11-tool`).
    static func environment() throws -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["SOFTHSM2_CONF"] = try store().configuration
        return environment
    }

    /// A key source over SoftHSM2 with every token's PIN.
    static func keySource() -> PKCS11KeySource {
        PKCS11KeySource(modulePath: modulePath, pins: PKCS11FixedPIN(pin))
    }

    private static func prepare() -> Result<Store, SetupFailure> {
        guard FileManager.default.fileExists(atPath: modulePath), let utility = ProcessRunner.which("softhsm2-util") else {
            return .failure(SetupFailure(description: "SoftHSM2 is not installed (Debian package softhsm2)"))
        }
        do {
            let folder = try TemporaryFolder(prefix: "signet-softhsm")
            try FileManager.default.createDirectory(atPath: folder.file("tokens"), withIntermediateDirectories: true)
            let configuration = try folder.write(
                "softhsm2.conf", "directories.tokendir = \(folder.file("tokens"))\nobjectstore.backend = file\nlog.level = ERROR\n")
            // Once, for the whole process, before anything loads the module.
            setenv("SOFTHSM2_CONF", configuration, 1)
            var environment = ProcessInfo.processInfo.environment
            environment["SOFTHSM2_CONF"] = configuration
            for token in Token.allCases {
                let made = try ProcessRunner.run(
                    utility, ["--init-token", "--free", "--label", token.label, "--pin", pin, "--so-pin", soPIN], environment: environment)
                guard made.status == 0 else {
                    return .failure(SetupFailure(description: "softhsm2-util could not make the token \(token.label): \(made)"))
                }
            }
            atexit { SoftHSM.removeStore() }
            return .success(Store(folder: folder, configuration: configuration))
        } catch {
            return .failure(SetupFailure(description: "the SoftHSM2 store could not be made: \(error)"))
        }
    }

    /// Removes the store's folder when the process ends (a static lives until then).
    private static func removeStore() {
        if case .success(let store) = prepared { store.folder.remove() }
    }
}
