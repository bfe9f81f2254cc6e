import ArgumentParser
import Foundation
import SignetBundle
import SignetCore
import SignetServer

/// `signet server resource publish|list`: signed resources the server serves to apps.
struct ServerResourceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resource", abstract: "Publish and list signed resources.", subcommands: [Publish.self, List.self])

    struct Publish: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Publish the next version of a resource.",
            discussion: """
            FILE is a tar of the files (tar -C DIR -cf FILE .), which the server bundles and signs \
            with its signing key as the next version, or a bundle signed offline (signet bundle \
            create; k of n keys), which the server checks against its trust root. `-` reads \
            standard input. Prints the name, version and SHA-256 of the stored bundle.
            """)
        @Argument(help: "The resource's name (A–Z a–z 0–9 . _ -).") var name: String
        @Argument(help: "A tar of the files, or a signed bundle.") var file: String
        @Option(help: ArgumentHelp("When a bundle the server builds expires (2027-01-01T00:00:00Z).", valueName: "DATE"))
        var expires: String?
        @Flag(help: "Print the stored version as JSON.") var json = false
        @OptionGroup var connection: AdminConnectionOptions

        func run() async throws {
            var expiry: Date?
            if let expires {
                guard let date = ISO8601DateFormatter().date(from: expires) else {
                    throw ValidationError("--expires must be a date like 2027-01-01T00:00:00Z")
                }
                expiry = date
            }
            let upload = try FileInput.readAll(path: file, limit: 1 << 30)
            let (record, created) = try await connection.client().publish(name: name, upload: upload, expires: expiry)
            if json { return try ServerOutput.printJSON(record) }
            Console.write(ServerOutput.line(record))
            if !created { Console.note("\(name) \(record.version) was already published: nothing changed", quiet: false) }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List every published version.")
        @Flag(help: "Print JSON.") var json = false
        @OptionGroup var connection: AdminConnectionOptions

        func run() async throws {
            try ServerOutput.print(try await connection.client().resources(), json: json)
        }
    }
}

/// `signet server trust rotate FILE`: the next resource trust root.
struct ServerTrustCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trust", abstract: "Rotate the trust root that resources are verified against.", subcommands: [Rotate.self])

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send the next trust root (signet bundle trust rotate makes it); clients walk to it on their next fetch.")
        @Argument(help: "The new trust root file.") var file: String
        @OptionGroup var connection: AdminConnectionOptions

        func run() async throws {
            let root = try TrustRoot.load(path: file)
            try await connection.client().rotateTrust(root.fileBytes)
            Console.note("trust root version \(root.version) is now current", quiet: false)
        }
    }
}
