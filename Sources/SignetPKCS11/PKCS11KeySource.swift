import SignetCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Resolves `pkcs11:` key references (RFC 7512) for ``KeySourceResolver``: register one and
/// every command or API that takes a key accepts keys on PKCS#11 tokens.
///
/// The module is, in order: the URI's `module-path`; the URI's `module-name`, looked up among
/// the system's modules (``moduleDirectories``); the `modulePath` given here (the CLI's
/// `--module` or `SIGNET_PKCS11_MODULE`, as it decides); p11-kit's proxy module
/// (``proxyModulePath``), which reaches every module p11-kit is configured with, when it is
/// installed. The PIN is the URI's `pin-value`, else the first line of its `pin-source` (a
/// `file:` URI), else what the ``PKCS11PINProvider`` gives.
public struct PKCS11KeySource: KeySourceProvider {
    /// The scheme resolved: `pkcs11`.
    public var scheme: String { "pkcs11" }
    /// The module used when the URI names none.
    public let modulePath: String?
    /// Whether a URI may name the module (`module-path`, `module-name`): yes for what a person
    /// types; a service resolving references from less-trusted input should say no, since
    /// loading a module runs its code.
    public let allowsModulesFromURIs: Bool
    /// Whether a URI may carry the PIN itself (`pin-value`, RFC 7512 §2.4): a command line
    /// should say no, since `ps` and shell history show its arguments.
    public let allowsPINValueInURIs: Bool
    private let pins: any PKCS11PINProvider

    /// The longest PIN file read.
    public static let maximumPINFileLength = 1024

    /// p11-kit's proxy module (Debian: p11-kit-modules), used when nothing else names one.
    public static var proxyModulePath: String {
        #if arch(arm64)
        return "/usr/lib/aarch64-linux-gnu/p11-kit-proxy.so"
        #else
        return "/usr/lib/x86_64-linux-gnu/p11-kit-proxy.so"
        #endif
    }

    /// Where a URI's `module-name` is looked for (as `NAME.so` or `NAME`): p11-kit's module
    /// folders.
    public static var moduleDirectories: [String] {
        #if arch(arm64)
        return ["/usr/lib/aarch64-linux-gnu/pkcs11", "/usr/lib/pkcs11", "/usr/lib64/pkcs11"]
        #else
        return ["/usr/lib/x86_64-linux-gnu/pkcs11", "/usr/lib/pkcs11", "/usr/lib64/pkcs11"]
        #endif
    }

    /// A key source that loads `modulePath` when a URI names no module, and asks `pins` for
    /// PINs a URI does not give.
    public init(
        modulePath: String? = nil, pins: any PKCS11PINProvider = PKCS11NoPIN(), allowsModulesFromURIs: Bool = true,
        allowsPINValueInURIs: Bool = true
    ) {
        self.modulePath = modulePath
        self.pins = pins
        self.allowsModulesFromURIs = allowsModulesFromURIs
        self.allowsPINValueInURIs = allowsPINValueInURIs
    }

    /// A ``PKCS11Signer`` over the one private key `reference` names, its public key checked
    /// under the resolver's policy; nil `algorithm` picks the key's default.
    public func signer(reference: String, algorithm: SignatureAlgorithm?, resolver: KeySourceResolver) async throws -> any Signer {
        let uri = try PKCS11URI(parsing: reference)
        if let type = uri.type, type != .privateKey {
            throw PKCS11Error.unsupportedKey(uri: uri.description, detail: "type=\(type.rawValue) names no private key; signing needs type=private (or no type)")
        }
        let path = try modulePath(for: uri)
        let pin = try pinProvider(for: uri)
        let policy = resolver.policy
        return try await TokenCalls.run {
            let module = try PKCS11Module.load(path: path)
            let key = try module.uniqueKey(matching: uri, pin: pin, policy: policy)
            return try PKCS11Signer(module: module, key: key, algorithm: algorithm, pin: pin)
        }
    }

    /// The public key `reference` names: read from a public key object without logging in when
    /// the token has one, else from the private key's public half.
    public func publicKey(reference: String, resolver: KeySourceResolver) async throws -> PublicKey {
        let uri = try PKCS11URI(parsing: reference)
        let path = try modulePath(for: uri)
        let pin = try pinProvider(for: uri)
        let policy = resolver.policy
        return try await TokenCalls.run {
            let module = try PKCS11Module.load(path: path)
            if uri.type == .privateKey {
                // The URIs Signet prints name private keys; their public halves are usually public
                // objects, readable without a PIN.
                var publicHalf = uri
                publicHalf.type = .publicKey
                if let key = try? module.publicKey(matching: publicHalf, pin: PKCS11NoPIN(), policy: policy) { return key }
            }
            return try module.publicKey(matching: uri, pin: pin, policy: policy)
        }
    }

    /// The module file for `uri`, in the order described above.
    /// - Throws: ``PKCS11Error/moduleNotLoadable(path:detail:)`` when nothing names one, or a
    ///   `module-name` is not found; ``PKCS11Error/invalidURI(uri:detail:)`` for a
    ///   `module-name` with a `/`.
    public func modulePath(for uri: PKCS11URI) throws -> String {
        if !allowsModulesFromURIs, uri.modulePath != nil || uri.moduleName != nil {
            throw PKCS11Error.invalidURI(uri: uri.description, detail: "module-path and module-name are not accepted here; the module is configured")
        }
        if let path = uri.modulePath { return path }
        if let name = uri.moduleName {
            guard !name.isEmpty, !name.contains("/") else {
                throw PKCS11Error.invalidURI(uri: uri.description, detail: "module-name is a name, not a path (use module-path for a file)")
            }
            for directory in Self.moduleDirectories {
                for candidate in [directory + "/" + name + ".so", directory + "/" + name] where access(candidate, F_OK) == 0 {
                    return candidate
                }
            }
            throw PKCS11Error.moduleNotLoadable(path: name, detail: "no module of that name in \(Self.moduleDirectories.joined(separator: ", "))")
        }
        if let modulePath { return modulePath }
        if access(Self.proxyModulePath, F_OK) == 0 { return Self.proxyModulePath }
        throw PKCS11Error.moduleNotLoadable(
            path: "",
            detail: "the URI names none (module-path=…) and none is configured; p11-kit's proxy module, used otherwise, is not installed at \(Self.proxyModulePath)")
    }

    /// Where the PIN for `uri` comes from: its `pin-value`, its `pin-source` file, or the
    /// provider given at creation.
    /// - Throws: ``PKCS11Error/invalidURI(uri:detail:)`` for a `pin-source` that is not a local
    ///   `file:` URI, ``PKCS11Error/pinSourceUnreadable(path:detail:)`` when the file cannot be
    ///   read.
    public func pinProvider(for uri: PKCS11URI) throws -> any PKCS11PINProvider {
        if let value = uri.pinValue {
            guard allowsPINValueInURIs else {
                throw PKCS11Error.invalidURI(uri: uri.description, detail: "pin-value is not accepted here: give the PIN with pin-source=file:… instead")
            }
            return PKCS11FixedPIN(value)
        }
        if let source = uri.pinSource { return PKCS11FixedPIN(try Self.readPIN(source: source, uri: uri)) }
        return pins
    }

    /// The first line of the file a `file:` pin source names (without its line ending).
    static func readPIN(source: String, uri: PKCS11URI) throws -> SecretBytes {
        guard source.hasPrefix("file:") else {
            throw PKCS11Error.invalidURI(uri: uri.description, detail: "pin-source must be a file: URI (file:/path/to/pin)")
        }
        var path = String(source.dropFirst(5))
        if path.hasPrefix("//") {
            let rest = path.dropFirst(2)
            let slash = rest.firstIndex(of: "/") ?? rest.endIndex
            guard rest[..<slash].isEmpty || rest[..<slash] == "localhost", slash < rest.endIndex else {
                throw PKCS11Error.invalidURI(uri: uri.description, detail: "pin-source must name a local file (file:/path or file:///path)")
            }
            path = String(rest[slash...])
        }
        guard !path.isEmpty else { throw PKCS11Error.invalidURI(uri: uri.description, detail: "pin-source names no file") }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw PKCS11Error.pinSourceUnreadable(path: path, detail: String(cString: strerror(errno))) }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: maximumPINFileLength + 1)
        defer { SecretBytes.zero(&buffer) }
        var total = 0
        while total < buffer.count {
            let offset = total
            let count = buffer.withUnsafeMutableBytes { raw in read(fd, raw.baseAddress! + offset, raw.count - offset) }
            if count < 0 {
                if errno == EINTR { continue }
                throw PKCS11Error.pinSourceUnreadable(path: path, detail: String(cString: strerror(errno)))
            }
            if count == 0 { break }
            total += count
        }
        guard total <= maximumPINFileLength else {
            throw PKCS11Error.pinSourceUnreadable(path: path, detail: "longer than \(maximumPINFileLength) bytes (the PIN goes on the first line)")
        }
        var end = buffer[0..<total].firstIndex(of: UInt8(ascii: "\n")) ?? total
        if end > 0, buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        guard end > 0 else { throw PKCS11Error.pinSourceUnreadable(path: path, detail: "the first line is empty (the PIN goes there)") }
        return SecretBytes(buffer[0..<end])
    }
}
