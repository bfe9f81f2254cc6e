import SignetCore
import X509

/// The App Attest environment a key was made in, as its attestation's AAGUID says.
public enum AppAttestEnvironment: String, Sendable, CaseIterable, Comparable {
    /// Apps signed for development (`appattestdevelop`).
    case development
    /// Apps from the App Store, TestFlight or enterprise distribution (`appattest` and seven
    /// zero bytes).
    case production

    /// The AAGUID of attestations made in this environment.
    public var aaguid: [UInt8] {
        switch self {
        case .development: return Array("appattestdevelop".utf8)
        case .production: return Array("appattest".utf8) + [UInt8](repeating: 0, count: 7)
        }
    }

    /// The environment whose AAGUID is `aaguid`.
    public init?(aaguid: [UInt8]) {
        guard let found = Self.allCases.first(where: { $0.aaguid == aaguid }) else { return nil }
        self = found
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// What an App Attest attestation or assertion must satisfy: the app it is for, the
/// environments accepted, and the roots its certificates lead to.
public struct AppAttestPolicy: Sendable {
    /// The App ID, `TEAMID.BUNDLEID` (`ABCDE12345.com.example.app`).
    public let appID: String
    /// The environments accepted; production only by default.
    public var environments: Set<AppAttestEnvironment>
    /// The roots the attestation's chain must lead to; Apple's App Attestation Root CA by
    /// default (``AppAttestRoots/apple``). Replace them only for test roots.
    public var roots: [Certificate]
    /// How many bytes may follow the credential key in `authData` without flags announcing
    /// them (Apple's newer attestations carry a small CBOR map there).
    public var maximumTrailingAuthDataBytes: Int

    /// A policy for `appID`.
    /// - Throws: ``AttestationError/invalidArgument(detail:)`` for an App ID that is not
    ///   `TEAMID.BUNDLEID`.
    public init(
        appID: String, environments: Set<AppAttestEnvironment> = [.production], roots: [Certificate] = AppAttestRoots.apple,
        maximumTrailingAuthDataBytes: Int = 1024
    ) throws {
        let parts = appID.split(separator: ".", maxSplits: 1)
        guard parts.count == 2, parts[0].count == 10, parts[0].allSatisfy({ $0.isASCII && ($0.isUppercase || $0.isNumber) }), !parts[1].isEmpty,
            appID.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F })
        else {
            throw AttestationError.invalidArgument(
                detail: "the App ID \"\(PrintableText.escaped(appID, limit: 100))\" is not TEAMID.BUNDLEID (a 10-character team id, a dot, the bundle id)")
        }
        guard !environments.isEmpty else { throw AttestationError.invalidArgument(detail: "no App Attest environment is allowed") }
        guard !roots.isEmpty else { throw AttestationError.invalidArgument(detail: "no App Attest root is trusted") }
        self.appID = appID
        self.environments = environments
        self.roots = roots
        self.maximumTrailingAuthDataBytes = maximumTrailingAuthDataBytes
    }

    /// SHA-256 of the App ID: the relying party id hash in `authData`.
    public var appIDHash: [UInt8] { DigestAlgorithm.sha256.hash(Array(appID.utf8)).bytes }
}
