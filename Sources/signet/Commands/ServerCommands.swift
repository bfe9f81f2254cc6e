import SignetAPI
import ArgumentParser
import Foundation
import SignetCore
import SignetServer

/// `signet server …`: administration. `init` writes the first admin key straight into the
/// database; everything else goes through the signed admin API over pinned TLS.
struct ServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "server",
        abstract: "Administer a Signet server: the first admin, apps, admins, users, sessions, resources and trust.",
        discussion: """
        Apart from init, every command speaks the admin API: --server https://HOST:PORT, the \
        server's pin (--pin sha256/…, as `signet serve` prints it; a pin without --roots trusts \
        the server's self-signed certificate) and --admin-key, the key of an enrolled admin.
        Exit 1 when the server refuses (the problem it reports is printed), 4 when it cannot be \
        reached.
        """,
        subcommands: [
            ServerInit.self, ServerAppCommand.self, ServerAdminCommand.self, ServerUserCommand.self, ServerSessionCommand.self,
            ServerDeviceCommand.self, ServerResourceCommand.self, ServerTrustCommand.self, ProfileCommand.self,
        ])
}

struct ServerInit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Prepare a server's data folder and database and enrol the first admin key.",
        discussion: "Refused (exit 1) when the database already has an admin: add more with `signet server admin add`.")

    @OptionGroup var storage: ServerStorageOptions

    @Option(name: .customLong("admin-key"), help: ArgumentHelp("The admin's public key (or a private key: only its public half is used).", valueName: "KEY"))
    var adminKey: String

    @Option(help: ArgumentHelp("The admin's name.", valueName: "NAME"))
    var name = "admin"

    @OptionGroup var keyAccess: KeyAccessOptions

    func run() async throws {
        try AdminAPI.checkName(name)
        let publicKey = try await keyAccess.resolver.publicKey(adminKey)
        let algorithm = try AdminAPI.algorithm(nil, for: publicKey)
        let folder = try storage.folder
        let identity = try await storage.prepare(folder)
        let store = try await storage.openStore(folder: folder, identity: identity, logger: ServerLogging.logger(level: .warning))
        do {
            let admins = try await store.principals.all(role: .admin).filter { !$0.isRevoked }
            if let existing = admins.first {
                throw ServerError.conflict(detail: "\(store.database.location) already has an admin (\(existing.name)); add more with the admin API")
            }
            try await store.principals.add(Principal(
                keyID: publicKey.fingerprint.description, role: .admin, name: name, algorithm: algorithm,
                publicKeyDER: publicKey.spkiDER, createdAt: Int64(Date().timeIntervalSince1970)))
        } catch {
            await store.database.shutdown()
            throw error
        }
        await store.database.shutdown()
        Console.write("admin: \(name) \(publicKey.fingerprint)\npin: \(identity.pin)\nbackup-pin: \(identity.backupPin)\n")
    }
}

struct ServerAppCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "app", abstract: "Enrol, list and revoke apps, and set their attestation policy.",
        subcommands: [Add.self, List.self, Revoke.self, Attestation.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Enrol an app by its public key, or as an HMAC app whose secret is printed once.")
        @Argument(help: "The app's name.") var name: String
        @Option(help: ArgumentHelp("The app's public key (any format Signet reads).", valueName: "PUB")) var key: String?
        @Flag(help: "Enrol an app of the tutorial's HMAC scheme: the server makes the secret.") var hmac = false
        @Option(help: ArgumentHelp("The RFC 9421 algorithm (else the key's default).", valueName: "ALG")) var algorithm: String?
        @OptionGroup(title: "Device attestation") var attestation: AppAttestationOptions
        @Flag(help: "Print the enrolment as JSON.") var json = false
        @OptionGroup var connection: AdminConnectionOptions

        func validate() throws {
            if (key == nil) == !hmac { throw ValidationError("give --key PUB or --hmac") }
        }

        func run() async throws {
            let client = try await connection.client()
            var enrolment = AdminAPI.Enrolment(
                name: name, algorithm: algorithm, hmac: hmac ? true : nil, attestation: attestation.isEmpty ? nil : try attestation.settings())
            if let key {
                let publicKey = try await connection.keyAccess.resolver.publicKey(key)
                enrolment.publicKey = PEM.encode(label: "PUBLIC KEY", der: publicKey.spkiDER)
            }
            let enrolled = try await client.enrol(enrolment, role: .app)
            try ServerOutput.print(enrolled, json: json)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the enrolled apps, revoked ones too.")
        @Flag(help: "Print JSON.") var json = false
        @OptionGroup var connection: AdminConnectionOptions
        func run() async throws { try ServerOutput.print(try await connection.client().list(role: .app), json: json) }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke an app: every node refuses its requests within a second.")
        @Argument(help: "The app's name.") var name: String
        @OptionGroup var connection: AdminConnectionOptions
        func run() async throws { try await connection.client().revoke(role: .app, name: name) }
    }
}

struct ServerAdminCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin", abstract: "Add, list and revoke admin keys.", subcommands: [Add.self, List.self, Revoke.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Enrol another admin key.")
        @Argument(help: "The admin's name.") var name: String
        @Option(help: ArgumentHelp("The admin's public key.", valueName: "PUB")) var key: String
        @Flag(help: "Print the enrolment as JSON.") var json = false
        @OptionGroup var connection: AdminConnectionOptions

        func run() async throws {
            let client = try await connection.client()
            let publicKey = try await connection.keyAccess.resolver.publicKey(key)
            let enrolment = AdminAPI.Enrolment(name: name, publicKey: PEM.encode(label: "PUBLIC KEY", der: publicKey.spkiDER))
            try ServerOutput.print(try await client.enrol(enrolment, role: .admin), json: json)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the admin keys, revoked ones too.")
        @Flag(help: "Print JSON.") var json = false
        @OptionGroup var connection: AdminConnectionOptions
        func run() async throws { try ServerOutput.print(try await connection.client().list(role: .admin), json: json) }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke an admin key (never the last one).")
        @Argument(help: "The admin's name.") var name: String
        @OptionGroup var connection: AdminConnectionOptions
        func run() async throws { try await connection.client().revoke(role: .admin, name: name) }
    }
}

struct ServerUserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user", abstract: "List and disable users.", subcommands: [List.self, Disable.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the registered users.")
        @Flag(help: "Print JSON.") var json = false
        @OptionGroup var connection: AdminConnectionOptions

        func run() async throws {
            let users = try await connection.client().users()
            if json {
                try ServerOutput.printJSON(users)
            } else {
                let safe = PrintableText.terminalSafe
                Console.write(users.map { "\(safe($0.email))\t\(safe($0.displayName))\($0.disabled ? "\tdisabled" : "")\n" }.joined())
            }
        }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Disable an account and end its sessions.")
        @Argument(help: "The user's e-mail address.") var email: String
        @OptionGroup var connection: AdminConnectionOptions
        func run() async throws { try await connection.client().disableUser(email: email) }
    }
}

struct ServerSessionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "session", abstract: "End users' sessions.", subcommands: [Revoke.self])

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "End every session of a user.")
        @Argument(help: "The user's e-mail address.") var email: String
        @OptionGroup var connection: AdminConnectionOptions

        func run() async throws {
            let count = try await connection.client().revokeSessions(email: email)
            Console.note("ended \(count) session\(count == 1 ? "" : "s") of \(email)", quiet: false)
        }
    }
}

/// How enrolments are printed: a line per app or admin, or JSON.
enum ServerOutput {
    static func print(_ enrolled: AdminAPI.Enrolled, json: Bool) throws {
        if json { return try printJSON(enrolled) }
        Console.write(line(enrolled))
        if let secret = enrolled.secret {
            Console.write("secret: \(secret)\n")
            Console.warning("the HMAC secret is shown only now: store it in the app (signet vault set) and nowhere else")
        }
    }

    static func print(_ list: [AdminAPI.Enrolled], json: Bool) throws {
        if json { return try printJSON(list) }
        Console.write(list.map(line).joined())
    }

    static func line(_ enrolled: AdminAPI.Enrolled) -> String {
        let safe = PrintableText.terminalSafe
        var fields = [safe(enrolled.name), enrolled.algorithm, safe(enrolled.keyId)]
        if let settings = enrolled.attestation {
            let identities = [settings.appleAppId, settings.androidPackage].compactMap { $0 }.map { safe($0) }.joined(separator: ",")
            fields.append("attestation \(settings.required == true ? "required" : "optional") (\(identities))")
        }
        if enrolled.revokedAt != nil { fields.append("revoked") }
        return fields.joined(separator: "\t") + "\n"
    }

    static func print(_ records: [ResourceRecord], json: Bool) throws {
        if json { return try printJSON(records) }
        Console.write(records.map(line).joined())
    }

    static func line(_ record: ResourceRecord) -> String {
        "\(PrintableText.terminalSafe(record.name))\t\(record.version)\t\(record.size)\tsha256:\(record.sha256)\t\(PrintableText.terminalSafe(record.signedBy))\n"
    }

    static func printJSON(_ value: some Encodable) throws { Console.write(try Console.json(value) + "\n") }
}
