import ArgumentParser
import Crypto
import SignetAttestation
import SignetBundle
import SignetCore
import SignetX509
import X509

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

struct AttestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "attest",
        abstract: "Check device attestations offline: App Attest (Apple) and Android key attestation.",
        discussion: "The operator's debugging tool for what `signet serve` checks when a device enrols. See docs/attestation.md.",
        subcommands: [AttestVerify.self])
}

struct AttestVerify: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Verify an App Attest attestation or assertion, or an Android key attestation chain, and print what it attests.",
        discussion: """
        Exit 0 and the verified facts (as text, or JSON with --json) when every check passes; \
        exit 1 naming the check that failed; 2 for a bad argument; 3 when the input is \
        malformed; 4 when a file cannot be read.
        """,
        subcommands: [AttestVerifyApple.self, AttestVerifyAppleAssertion.self, AttestVerifyAndroid.self])
}

/// The time and roots of the commands that verify a certificate chain.
struct AttestTrustOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Verify at DATE (ISO 8601) instead of now (App Attest leaves are valid for days).", valueName: "DATE"))
    var at: String?

    @Option(help: ArgumentHelp("Trust these roots (PEM) instead of Apple's or Google's: for private test roots.", valueName: "FILE"))
    var roots: String?

    /// The time to verify at: `--at`, or now.
    func time() throws -> Date {
        try at.map { try BundleDate.parseArgument($0, option: "--at") } ?? Date()
    }

    /// The roots `--roots` names, if given.
    func rootCertificates() throws -> [Certificate]? {
        try roots.map { try X509Files.readCertificates(path: $0) }
    }
}

/// Options every `attest verify` command shares: the output form.
struct AttestOutputOptions: ParsableArguments {
    @Flag(help: "Print the facts as JSON.")
    var json = false

    /// Writes `facts` as `name: value` lines, or as one JSON object.
    func print(_ facts: [(String, JSONValue)]) {
        if json {
            Console.write(bytes: JSONValue.object(facts.map { JSONMember($0.0, $0.1) }).bytes(pretty: true))
            return
        }
        for (name, value) in facts {
            // A PEM key is Signet's own encoding: printed as it is, on lines of its own.
            if name == "publicKey", case .string(let pem) = value {
                Console.write("\(name):\n\(pem)\(pem.hasSuffix("\n") ? "" : "\n")")
            } else {
                Console.write("\(name): \(PrintableText.terminalSafe(Self.text(value)))\n")
            }
        }
    }

    static func text(_ value: JSONValue) -> String {
        switch value {
        case .string(let text): return text
        case .number(let text): return text
        case .bool(let flag): return flag ? "yes" : "no"
        case .null: return "-"
        case .array(let items): return items.map(text).joined(separator: ", ")
        case .object(let members): return members.map { "\($0.name)=\(text($0.value))" }.joined(separator: " ")
        }
    }
}

/// Reading the files an attestation command takes.
enum AttestInput {
    /// A CBOR object from `path` (`-`: standard input): raw CBOR (a map), or its base64 text
    /// (standard or URL-safe alphabet, padded or not, whitespace ignored).
    static func cbor(_ path: String, limit: Int) throws -> [UInt8] {
        let bytes = try FileInput.readAll(path: path, limit: limit * 2)
        if let first = bytes.first, first >> 5 == 5 { return bytes }
        let text = String(decoding: bytes, as: UTF8.self).filter { !$0.isWhitespace }
        guard let decoded = Base64.decode(text) ?? Base64.decodeUnpadded(text) ?? Base64.decodeURL(text), !decoded.isEmpty else {
            throw AttestationError.malformed(source: X509Files.displayName(path), detail: "neither CBOR (a map) nor base64 text")
        }
        return decoded
    }

    /// SHA-256 of the client data in `clientData`, or the exact bytes of `clientDataHash`.
    static func clientDataHash(clientData: String?, clientDataHash: String?) throws -> [UInt8] {
        switch (clientData, clientDataHash) {
        case (let path?, nil): return Array(SHA256.hash(data: try FileInput.readAll(path: path, limit: 1 << 20)))
        case (nil, let path?): return try FileInput.readAll(path: path, limit: 1024)
        default: throw ValidationError("give --client-data FILE (hashed with SHA-256, as a device does) or --client-data-hash FILE (the exact bytes), one of them")
        }
    }

}

struct AttestVerifyApple: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apple",
        abstract: "Verify an App Attest attestation object (from DCAppAttestService.attestKey).",
        discussion: """
        The checks of Apple's "Validating apps that connect to your server": the chain to \
        Apple's App Attestation Root CA at --at (default now), the nonce extension equal to \
        SHA-256(authData || clientDataHash), the key id (SHA-256 of the certified key) equal to \
        the credential id, the App ID's hash, a counter of 0, and the environment. Prints the \
        key id (base64), the public key (PEM), the environment, the counter and the receipt's size.
        """)

    @Option(name: .customLong("app-id"), help: ArgumentHelp("The App ID, TEAMID.BUNDLEID.", valueName: "ID"))
    var appID: String

    @Option(name: .customLong("client-data"), help: ArgumentHelp("The client data the app hashed (the challenge); hashed with SHA-256 here.", valueName: "FILE"))
    var clientData: String?

    @Option(name: .customLong("client-data-hash"), help: ArgumentHelp("The exact bytes the app passed as clientDataHash.", valueName: "FILE"))
    var clientDataHash: String?

    @Option(help: ArgumentHelp("The environment accepted: production (the default) or development.", valueName: "ENV"))
    var environment: AppAttestEnvironment = .production

    @OptionGroup var trust: AttestTrustOptions

    @OptionGroup var output: AttestOutputOptions

    @Argument(help: ArgumentHelp("The attestation object: raw CBOR or base64 text (- for standard input).", valueName: "ATTESTATION"))
    var attestation: String

    func run() async throws {
        let hash = try AttestInput.clientDataHash(clientData: clientData, clientDataHash: clientDataHash)
        let policy = try AppAttestPolicy(appID: appID, environments: [environment], roots: try trust.rootCertificates() ?? AppAttestRoots.apple)
        let object = try AttestInput.cbor(attestation, limit: AppAttestVerifier.maximumObjectSize)
        let key = try await AppAttestVerifier(policy: policy)
            .verifyAttestation(object, clientDataHash: hash, at: try trust.time(), source: X509Files.displayName(attestation))
        output.print([
            ("keyID", .string(Base64.encode(key.keyID))), ("appID", .string(key.appID)),
            ("environment", .string(key.environment.rawValue)), ("counter", .number(String(key.counter))),
            ("receiptBytes", .number(String(key.receipt.count))), ("publicKey", .string(String(decoding: try key.publicKey.encoded(as: .pem), as: UTF8.self))),
        ])
    }
}

extension AppAttestEnvironment: ExpressibleByArgument {}

struct AttestVerifyAppleAssertion: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apple-assertion",
        abstract: "Verify an App Attest assertion (from DCAppAttestService.generateAssertion) with the attested public key.",
        discussion: """
        Checks the signature over SHA-256(authenticatorData || SHA-256(client data)), the App \
        ID's hash and a counter greater than --previous-counter (0 by default); prints the counter \
        to store.
        """)

    @Option(name: .customLong("app-id"), help: ArgumentHelp("The App ID, TEAMID.BUNDLEID.", valueName: "ID"))
    var appID: String

    @Option(name: .customLong("public-key"), help: ArgumentHelp("The key the attestation certified (PEM).", valueName: "PEM"))
    var publicKey: String

    @Option(name: .customLong("client-data"), help: ArgumentHelp("The client data the app signed.", valueName: "FILE"))
    var clientData: String

    @Option(name: .customLong("previous-counter"), help: ArgumentHelp("The counter stored for the key.", valueName: "N"))
    var previousCounter: UInt32 = 0

    @OptionGroup var output: AttestOutputOptions

    @Argument(help: ArgumentHelp("The assertion: raw CBOR or base64 text (- for standard input).", valueName: "ASSERTION"))
    var assertion: String

    func run() throws {
        guard case .publicKey(let key) = try KeyDecoder.decode(path: publicKey) else {
            throw ValidationError("--public-key \(publicKey) holds a private key; give the attested public key")
        }
        let hash = Array(SHA256.hash(data: try FileInput.readAll(path: clientData, limit: 1 << 20)))
        let checked = try AppAttestVerifier(policy: try AppAttestPolicy(appID: appID, environments: Set(AppAttestEnvironment.allCases)))
            .verifyAssertion(
                try AttestInput.cbor(assertion, limit: AppAttestVerifier.maximumAssertionSize), clientDataHash: hash, publicKey: key,
                previousCounter: previousCounter, source: X509Files.displayName(assertion))
        output.print([("appID", .string(appID)), ("counter", .number(String(checked.counter)))])
    }
}
