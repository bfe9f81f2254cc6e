import ArgumentParser
import Foundation
import SignetCore

/// `signet client profile …` (also `signet server profile …`): named connections, so that a
/// command needs `--profile NAME` instead of the server, its pins and the key references.
struct ProfileCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "profile",
        abstract: "Store named connections to servers: the URL, its trust, and which keys to use.",
        discussion: """
        A profile keeps references to keys (a file's absolute path, vault:SERVICE/ACCOUNT, a \
        pkcs11: URI without a PIN), never key material, in $XDG_CONFIG_HOME/signet/profiles.json \
        (else ~/.config/signet/profiles.json; 0600, refused if anyone else could write it). \
        `signet client …` and the admin commands `signet server app|admin|user|session|resource|trust …` \
        take --profile NAME; without it and without --server, $SIGNET_PROFILE or else the \
        default profile; a flag given on the command line overrides the profile's value (TLS flags replace \
        its trust as a whole).
        """,
        subcommands: [Add.self, List.self, Show.self, Use.self, Remove.self])

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Store a connection under NAME.",
            discussion: "Example: signet client profile add demo --server https://127.0.0.1:8443 --pin sha256/… --pin sha256/… --app-key vault:signet-app/demo-app --server-key server/response-key.pem --admin-key admin.pem --default")
        @Argument(help: "The profile's name: 1 to 64 of A-Z a-z 0-9 . _ -, starting with a letter or digit.") var name: String
        @Option(help: ArgumentHelp("The server, https://HOST:PORT.", valueName: "URL")) var server: String
        @OptionGroup var tls: TLSOptions
        @Option(name: .customLong("app-key"), help: ArgumentHelp("The app's private key (a reference: file, vault:, pkcs11:).", valueName: "KEY"))
        var appKey: String?
        @Option(name: .customLong("admin-key"), help: ArgumentHelp("The admin's private key (a reference: file, vault:, pkcs11:).", valueName: "KEY"))
        var adminKey: String?
        @Option(name: .customLong("server-key"), help: ArgumentHelp("The server's response key (DIR/response-key.pem).", valueName: "KEY"))
        var serverKey: String?
        @Flag(name: .customLong("default"), help: "Use it when a command names no profile and no --server.") var makeDefault = false
        @Flag(help: "Replace a profile of that name.") var force = false

        func validate() throws {
            try ProfileStore.checkName(name)
            guard let url = URL(string: server), url.scheme?.lowercased() == "https", url.host?.isEmpty == false,
                  url.path.isEmpty || url.path == "/", url.query == nil
            else { throw ValidationError("--server must be an https URL with a host and no path, like https://127.0.0.1:8443") }
            if tls.pinnedSelfSigned { throw ValidationError("a profile trusts pins without --roots as self-signed already: drop --pinned-self-signed") }
            guard !tls.trust.isEmpty || appKey != nil || adminKey != nil else {
                throw ValidationError("give the server's trust (--pin, --pins or --roots) and at least one key (--app-key or --admin-key)")
            }
        }

        func run() throws {
            for pin in tls.pins where KeyFingerprint(string: pin) == nil {
                throw ValidationError("--pin \(PrintableText.terminalSafe(pin)) is not a pin (sha256/ and the base64 of 32 bytes)")
            }
            let profile = ConnectionProfile(
                server: server, pins: tls.pins.isEmpty ? nil : tls.pins,
                pinsFile: try tls.pinsFile.map { try ProfileStore.absoluteFile($0, option: "--pins") },
                roots: try tls.roots.map { try ProfileStore.absoluteFile($0, option: "--roots") },
                appKey: try appKey.map { try ProfileStore.keyReference($0, option: "--app-key") },
                serverKey: try serverKey.map { try ProfileStore.keyReference($0, option: "--server-key") },
                adminKey: try adminKey.map { try ProfileStore.keyReference($0, option: "--admin-key") })
            let store = ProfileStore.standard()
            var contents = try store.load()
            if contents.profiles[name] != nil, !force {
                throw ValidationError("there is a profile \(name) already: give --force to replace it")
            }
            contents.profiles[name] = profile
            if makeDefault { contents.defaultProfile = name }
            try store.save(contents)
            Console.writeError("stored the profile \(name)\(contents.defaultProfile == name ? " (the default)" : "") in \(store.path)\n")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the profiles: name, server, and which is the default.")
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            let contents = try ProfileStore.standard().load()
            if json {
                Console.write(try ProfileOutput.json(contents))
                return
            }
            for (name, profile) in contents.profiles.sorted(by: { $0.key < $1.key }) {
                let mark = name == contents.defaultProfile ? "\t(default)" : ""
                Console.write("\(PrintableText.terminalSafe(name))\t\(PrintableText.terminalSafe(profile.server))\(mark)\n")
            }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a profile (key references only: a profile holds no key).")
        @Argument(help: "The profile's name.") var name: String

        func run() throws {
            guard let (_, profile) = try ProfileStore.standard().select(name, useDefault: false) else { return }
            Console.write(try ProfileOutput.json(profile))
        }
    }

    struct Use: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make a profile the default.")
        @Argument(help: "The profile's name.") var name: String

        func run() throws {
            try ProfileStore.standard().edit(name) { $0.defaultProfile = name }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Forget a profile (and the default, if it was).")
        @Argument(help: "The profile's name.") var name: String

        func run() throws {
            try ProfileStore.standard().edit(name) { contents in
                contents.profiles[name] = nil
                if contents.defaultProfile == name { contents.defaultProfile = nil }
            }
        }
    }
}

enum ProfileOutput {
    /// `value` as terminal-safe JSON (``Console/json(_:)``) and a newline.
    static func json(_ value: some Encodable) throws -> String { try Console.json(value) + "\n" }
}
