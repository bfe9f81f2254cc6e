import ArgumentParser
import Foundation
import SignetAPI
import SignetCore

/// An app's platform identities and attestation policy, as `server app add` and
/// `server app attestation` take them.
struct AppAttestationOptions: ParsableArguments {
    @Option(name: .customLong("apple-app-id"), help: ArgumentHelp("The iOS app's App ID, TEAMID.BUNDLEID: App Attest devices of it may enrol.", valueName: "ID"))
    var appleAppID: String?
    @Option(
        name: .customLong("apple-environment"),
        help: ArgumentHelp("An App Attest environment accepted, production (default) or development; repeatable.", valueName: "ENV"))
    var appleEnvironments: [String] = []
    @Option(name: .customLong("android-package"), help: ArgumentHelp("The Android app's package name: its attested devices may enrol.", valueName: "NAME"))
    var androidPackage: String?
    @Option(
        name: .customLong("android-signer"),
        help: ArgumentHelp("The SHA-256 of the Android app's signing certificate (hex, colons allowed); repeatable, at least one.", valueName: "SHA256"))
    var androidSigners: [String] = []
    @Option(name: .customLong("android-min-security"), help: ArgumentHelp("The lowest keystore security level accepted: tee (default) or strongbox.", valueName: "LEVEL"))
    var androidMinimumSecurity: String?
    @Flag(name: .customLong("require-attestation"), help: "Take the app's user routes only from enrolled devices: its own key gets 403 there.")
    var required = false

    /// The flag that sets each field, for refusals.
    static let flags = [
        "attestation": "--apple-app-id or --android-package", "appleAppId": "--apple-app-id", "appleEnvironments": "--apple-environment",
        "androidPackage": "--android-package", "androidSigners": "--android-signer", "androidMinimumSecurity": "--android-min-security",
    ]

    /// Whether any option was given.
    var isEmpty: Bool {
        appleAppID == nil && appleEnvironments.isEmpty && androidPackage == nil && androidSigners.isEmpty && androidMinimumSecurity == nil && !required
    }

    /// The settings, checked as the server checks them.
    func settings() throws -> AdminAPI.AttestationSettings {
        let settings = AdminAPI.AttestationSettings(
            appleAppId: appleAppID, appleEnvironments: appleEnvironments.isEmpty ? nil : appleEnvironments, androidPackage: androidPackage,
            androidSigners: androidSigners.isEmpty ? nil : androidSigners, androidMinimumSecurity: androidMinimumSecurity, required: required)
        do {
            return try settings.normalized()
        } catch {
            throw ValidationError("\(Self.flags[error.field] ?? error.field): \(error.rule)")
        }
    }

    func validate() throws {
        if !isEmpty { _ = try settings() }
    }
}

extension ServerAppCommand {
    struct Attestation: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set an app's platform identities and whether it takes user requests only from enrolled devices.",
            discussion: """
            Replaces the app's settings whole: give every identity it keeps. Without \
            --require-attestation the app key keeps working beside enrolled devices — ship the \
            attesting app first, then turn the requirement on. Every node applies it within a second.
            """)
        @Argument(help: "The app's name.") var name: String
        @OptionGroup var attestation: AppAttestationOptions
        @Flag(help: "Print the app as JSON.") var json = false
        @OptionGroup var connection: AdminConnectionOptions

        func validate() throws {
            if attestation.isEmpty { throw ValidationError("give --apple-app-id, --android-package or both") }
        }

        func run() async throws {
            try ServerOutput.print(try await connection.client().setAttestation(app: name, try attestation.settings()), json: json)
        }
    }
}

struct ServerDeviceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device", abstract: "List and revoke devices enrolled by attestation.", subcommands: [List.self, Revoke.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the enrolled devices, revoked ones too, oldest first.")
        @Option(help: ArgumentHelp("Only this app's devices.", valueName: "NAME")) var app: String?
        @Flag(help: "Print JSON.") var json = false
        @OptionGroup var connection: AdminConnectionOptions

        func run() async throws {
            let devices = try await connection.client().devices(app: app)
            if json { return try ServerOutput.printJSON(devices) }
            Console.write(devices.map(Self.line).joined())
        }

        /// id, app, platform, key id, counter, created (ISO 8601), a facts summary, `revoked`.
        static func line(_ device: DeviceAPI.Device) -> String {
            let safe = PrintableText.terminalSafe
            let facts = device.platform == .apple
                ? [device.facts.appId, device.facts.environment]
                : [device.facts.packageName, device.facts.securityLevel, device.facts.verifiedBootState]
            let created = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: TimeInterval(device.createdAt)))
            let fields = [device.id, device.app, device.platform.rawValue, device.keyId, "counter=\(device.counter)", created,
                          facts.compactMap { $0 }.joined(separator: ",")] + (device.revokedAt != nil ? ["revoked"] : [])
            return fields.map { safe($0) }.joined(separator: "\t") + "\n"
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a device: its requests are refused and its sessions end.")
        @Argument(help: "The device's id (signet server device list).") var id: String
        @OptionGroup var connection: AdminConnectionOptions
        func run() async throws { try await connection.client().revokeDevice(id: id) }
    }
}
