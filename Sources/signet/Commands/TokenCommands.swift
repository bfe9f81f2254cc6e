import ArgumentParser
import SignetCore
import SignetPKCS11

/// `signet token list|keys|generate|public`: keys on PKCS#11 tokens (YubiKeys, TPMs, HSMs,
/// SoftHSM2), which every command that takes `--key` then uses as `pkcs11:` URIs.
struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Keys on PKCS#11 tokens: list tokens and keys, generate a key pair on a token, export its public key.",
        discussion: """
        Tokens and keys are named by RFC 7512 URIs: pkcs11:token=LABEL;object=KEY;id=%01 \
        (type=private for signing keys). The module (the .so of the token's vendor, e.g. \
        /usr/lib/softhsm/libsofthsm2.so, OpenSC's opensc-pkcs11.so, ykcs11) comes from the \
        URI's module-path, --module, SIGNET_PKCS11_MODULE, or p11-kit's proxy. The PIN comes \
        from the URI's pin-source, --pin-file, SIGNET_PKCS11_PIN or a prompt, never from the \
        command line (a URI's pin-value is refused). Every command that takes --key accepts such a URI. docs/pkcs11.md has \
        the details.
        """,
        subcommands: [TokenList.self, TokenKeys.self, TokenGenerate.self, TokenPublic.self]
    )
}

/// `signet token list`.
struct TokenList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List the module's slots and the tokens in them, with each token's URI.")

    @Flag(help: "Print JSON instead of text.")
    var json = false

    @OptionGroup var pkcs11: PKCS11Options

    func run() async throws {
        let module = try PKCS11Module.load(path: try pkcs11.keySource.modulePath(for: PKCS11URI()))
        let slots = try module.slots()
        if json {
            var items: [JSONValue] = []
            for slot in slots {
                var members: [JSONMember] = [
                    JSONMember("slot", .number(String(slot.id))), JSONMember("description", .string(slot.slotDescription)),
                ]
                if let token = slot.token, token.isInitialized {
                    members += [
                        JSONMember("uri", .string(Self.uri(of: token).description)), JSONMember("label", .string(token.label)),
                        JSONMember("manufacturer", .string(token.manufacturer)), JSONMember("model", .string(token.model)),
                        JSONMember("serial", .string(token.serial)), JSONMember("loginRequired", .bool(token.loginRequired)),
                        JSONMember("pinLocked", .bool(token.pinLocked)),
                    ]
                }
                items.append(.object(members))
            }
            Console.write(bytes: JSONValue.object([JSONMember("module", .string(module.path)), JSONMember("slots", .array(items))]).bytes(pretty: true))
            return
        }
        // What the module and token say about themselves is escaped: a label cannot drive the terminal.
        let safe = PrintableText.terminalSafe
        var text = "module \(safe(module.path)): \(safe(module.info.manufacturer)) \(safe(module.info.libraryDescription))\n"
        for slot in slots {
            guard let token = slot.token, token.isInitialized else {
                text += "slot \(slot.id): \(safe(slot.slotDescription)) (no initialized token)\n"
                continue
            }
            var notes: [String] = []
            if token.loginRequired { notes.append("PIN required") }
            if token.pinLocked { notes.append("PIN LOCKED") } else if token.pinFinalTry { notes.append("PIN: final try") }
            text += "slot \(slot.id): \(safe(Self.uri(of: token).description)) — \(safe(token.manufacturer)) \(safe(token.model)), serial \(safe(token.serial))"
            text += notes.isEmpty ? "\n" : " (\(notes.joined(separator: ", ")))\n"
        }
        Console.write(text)
    }

    /// The URI that names `token`: its label and serial.
    static func uri(of token: PKCS11TokenInfo) -> PKCS11URI {
        var uri = PKCS11URI()
        uri.token = token.label
        if !token.serial.isEmpty { uri.serial = token.serial }
        return uri
    }
}

/// `signet token keys URI`.
struct TokenKeys: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "List the keys on the tokens URI selects, with their URIs and fingerprints.",
        discussion: "Without --login only public objects are listed (no PIN needed); with it, private keys too.")

    @Argument(help: ArgumentHelp("Which token(s) and keys: a pkcs11: URI (pkcs11: alone for all).", valueName: "URI"))
    var uri: String = "pkcs11:"

    @Flag(help: "Log in (asks for the PIN) to list private keys as well.")
    var login = false

    @Flag(help: "Print JSON instead of text.")
    var json = false

    @OptionGroup var pkcs11: PKCS11Options

    func run() async throws {
        let parsed = try PKCS11URI(parsing: uri)
        let source = pkcs11.keySource
        let module = try PKCS11Module.load(path: try source.modulePath(for: parsed))
        let keys = try module.listKeys(matching: parsed, pin: login ? try source.pinProvider(for: parsed) : nil)
        if json {
            let items = keys.map { key in
                JSONValue.object([
                    JSONMember("uri", .string(key.uri.description)), JSONMember("type", .string(key.keyType.description)),
                    JSONMember("kind", key.publicKey.map { .string($0.kind.family) } ?? .null),
                    JSONMember("fingerprint", key.publicKey.map { .string($0.fingerprint.description) } ?? .null),
                    JSONMember("private", .bool(key.privateKeyHandle != nil)),
                ])
            }
            Console.write(bytes: JSONValue.array(items).bytes(pretty: true))
            return
        }
        if keys.isEmpty, !login {
            Console.writeError("signet: no public keys match; private keys are listed with --login\n")
        }
        var text = ""
        for key in keys {
            let kind = key.publicKey.map { "\($0.kind)" } ?? key.keyType.description
            let fingerprint = key.publicKey?.fingerprint.description ?? "(public key not readable)"
            text += "\(key.uri)  \(kind)  \(fingerprint)\n"
        }
        Console.write(text)
    }
}

/// `signet token generate URI -t TYPE`.
struct TokenGenerate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate",
        abstract: "Generate a key pair on a token: the private key is born there and never leaves it.",
        discussion: """
        URI names the token and the new key: pkcs11:token=LABEL;object=NAME;id=%01. Without \
        id=, the key's own id is used (SHA-1 of its public key, as OpenSC derives it); without \
        object=, --label or the type. A label or an id \
        that a key on the token already has is refused (exit 2): choose another. Prints the \
        new key's URI and fingerprint.
        """)

    @Argument(help: ArgumentHelp("The token and the new key's name: a pkcs11: URI.", valueName: "URI"))
    var uri: String

    @Option(name: .shortAndLong, help: ArgumentHelp("The key type.", valueName: "TYPE"))
    var type: KeyGenerationType

    @Option(help: ArgumentHelp("The key's label (CKA_LABEL), when the URI has no object=.", valueName: "LABEL"))
    var label: String?

    @OptionGroup var keyAccess: KeyAccessOptions

    func run() async throws {
        var parsed = try PKCS11URI(parsing: uri)
        if let label {
            guard parsed.object == nil || parsed.object == label else {
                throw ValidationError("--label and the URI's object= differ; give one of them")
            }
            parsed.object = label
        }
        if parsed.object == nil { parsed.object = type.rawValue }
        parsed.type = nil
        let source = keyAccess.pkcs11.keySource
        let module = try PKCS11Module.load(path: try source.modulePath(for: parsed))
        let pin = try source.pinProvider(for: parsed)
        // A label or an id already on the token would make URIs ambiguous, or pair the new
        // private key with another key's public half: both are refused.
        var sameLabel = parsed
        sameLabel.id = nil
        var sameID = parsed
        sameID.object = nil
        for probe in [sameLabel] + (parsed.id == nil ? [] : [sameID]) {
            if let clash = try module.listKeys(matching: probe, pin: pin, policy: keyAccess.policy).first {
                throw SignetCoreError.invalidArgument(
                    detail: "the token already has a key \(probe.id == nil ? "labelled \"\(parsed.object ?? "")\"" : "with this id") (\(clash.uri)): choose another object= or id=")
            }
        }
        let key = try module.generateKeyPair(
            token: parsed, type: type, label: parsed.object ?? type.rawValue, id: parsed.id ?? [], pin: pin, policy: keyAccess.policy)
        let fingerprint = try key.requirePublicKey().fingerprint
        Console.write("\(key.uri)\n")
        Console.writeError("generated \(type.rawValue) on token \(PrintableText.terminalSafe(key.token.label)): \(fingerprint)\n")
    }
}

/// `signet token public URI`.
struct TokenPublic: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "public",
        abstract: "Write the public key of a token key, in any public key format or as a minisign public key.",
        discussion: """
        --format minisign writes a minisign public key file for an Ed25519 key, with the key id \
        'signet minisign sign -s pkcs11:…' puts in its signatures (SHA-256 of the key, first 8 \
        bytes): minisign -V verifies them with it.
        """)

    @Argument(help: ArgumentHelp("The key: a pkcs11: URI.", valueName: "URI"))
    var uri: String

    @Option(help: ArgumentHelp("pem (SPKI), der, pkcs1, pkcs1-der, openssh, jwk, ios, or minisign.", valueName: "FORMAT"))
    var format: String = "pem"

    @OptionGroup var output: OptionalOutputOptions<OutputHelpText>
    enum OutputHelpText: OutputHelp {
        static let help = ArgumentHelp("Output file (default: standard output).", valueName: "OUT")
    }

    @OptionGroup var keyAccess: KeyAccessOptions

    func run() async throws {
        guard uri.hasPrefix("pkcs11:") else { throw ValidationError("URI must be a pkcs11: URI") }
        let publicKey = try await keyAccess.resolver.publicKey(uri)
        if format == "minisign" {
            guard let raw = publicKey.ed25519Key?.rawRepresentation else {
                throw SignetCoreError.invalidArgument(detail: "\(PKCS11URI.redacted(uri)): minisign keys are Ed25519, this is \(publicKey.kind)")
            }
            let key = try MinisignPublicKey(keyID: MinisignKeyID.derived(fromEd25519: Array(raw)), rawKey: Array(raw))
            try output.write(Array(key.fileContents.utf8), binary: false, permissions: .standard)
            return
        }
        guard let chosen = PublicKeyFormat(rawValue: format) else {
            throw ValidationError("unknown format '\(format)' (pem, der, pkcs1, pkcs1-der, openssh, jwk, ios, minisign)")
        }
        try output.write(try publicKey.encoded(as: chosen), binary: chosen.isBinary, permissions: .standard)
    }
}
