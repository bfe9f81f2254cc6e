/// The request and response bodies of device enrolment: an install of an app proves, with
/// Apple's App Attest or Android's key attestation, that its key lives in the hardware of a
/// genuine device running the genuine app, and then signs requests with that key.
///
/// Binary values are standard base64 (with padding), as everywhere in the API.
public enum DeviceAPI {
    /// Where an attestation comes from.
    public enum Platform: String, Sendable, Codable, CaseIterable {
        /// Apple's App Attest (`DCAppAttestService`).
        case apple
        /// Android Key Attestation (a hardware-backed keystore key's certificate chain).
        case android
    }

    /// `POST /v1/devices/challenges`: a one-time challenge for one enrolment.
    public struct Challenge: Codable, Sendable, Equatable {
        /// ``challengeBytes`` random bytes, base64.
        public var challenge: String
        /// When the server forgets it (Unix seconds).
        public var expiresAt: Int64
        public init(challenge: String, expiresAt: Int64) {
            self.challenge = challenge
            self.expiresAt = expiresAt
        }
    }

    /// `POST /v1/devices`: an attestation over a challenge the server issued.
    ///
    /// - Apple: `appleKeyId` is the key id `DCAppAttestService.generateKey` returned (base64)
    ///   and `attestation` the object `attestKey(_:clientDataHash:)` returned (base64 CBOR), made
    ///   with `clientDataHash` = SHA-256 of the challenge's bytes.
    /// - Android: `chain` is the key's certificate chain (`KeyStore.getCertificateChain`), leaf
    ///   first, each certificate's DER in base64, for a key generated with
    ///   `setAttestationChallenge(challenge bytes)`.
    public struct Enrolment: Codable, Sendable, Equatable {
        public var platform: Platform
        /// The challenge, as the server gave it.
        public var challenge: String
        public var appleKeyId: String?
        public var attestation: String?
        public var chain: [String]?
        public init(platform: Platform, challenge: String, appleKeyId: String? = nil, attestation: String? = nil, chain: [String]? = nil) {
            self.platform = platform
            self.challenge = challenge
            self.appleKeyId = appleKeyId
            self.attestation = attestation
            self.chain = chain
        }
    }

    /// What the attestation established about a device (the fields of its platform).
    public struct Facts: Codable, Sendable, Equatable {
        /// Apple: `production` or `development`.
        public var environment: String?
        /// Apple: the App ID (`TEAMID.bundle.id`).
        public var appId: String?
        /// Android: the package name.
        public var packageName: String?
        /// Android: the SHA-256 digests of the app's signing certificates, lower-case hex.
        public var signerDigests: [String]?
        /// Android: `tee` or `strongbox`.
        public var securityLevel: String?
        /// Android: `verified`, `self-signed`, `unverified` or `failed`.
        public var verifiedBootState: String?
        /// Android: whether the bootloader was locked.
        public var deviceLocked: Bool?
        /// Android: the OS version (e.g. 130000 for 13.0.0) and patch level (YYYYMM).
        public var osVersion: Int?
        public var osPatchLevel: Int?
        public init(
            environment: String? = nil, appId: String? = nil, packageName: String? = nil, signerDigests: [String]? = nil,
            securityLevel: String? = nil, verifiedBootState: String? = nil, deviceLocked: Bool? = nil, osVersion: Int? = nil,
            osPatchLevel: Int? = nil
        ) {
            self.environment = environment
            self.appId = appId
            self.packageName = packageName
            self.signerDigests = signerDigests
            self.securityLevel = securityLevel
            self.verifiedBootState = verifiedBootState
            self.deviceLocked = deviceLocked
            self.osVersion = osVersion
            self.osPatchLevel = osPatchLevel
        }
    }

    /// An enrolled device: the answer to an enrolment, and an item of the admins' list.
    public struct Device: Codable, Sendable, Equatable {
        /// The admins' handle for it (a UUID).
        public var id: String
        /// The app it acts for.
        public var app: String
        public var platform: Platform
        /// The key id its requests are signed under (`sha256/…` of its key).
        public var keyId: String
        /// Its signatures' `alg`: ``appAttestAlgorithm`` or `ecdsa-p256-sha256`.
        public var algorithm: String
        /// The last signature counter accepted (App Attest; 0 for Android).
        public var counter: Int64
        public var createdAt: Int64
        public var revokedAt: Int64?
        public var facts: Facts
        public init(
            id: String, app: String, platform: Platform, keyId: String, algorithm: String, counter: Int64, createdAt: Int64,
            revokedAt: Int64? = nil, facts: Facts
        ) {
            self.id = id
            self.app = app
            self.platform = platform
            self.keyId = keyId
            self.algorithm = algorithm
            self.counter = counter
            self.createdAt = createdAt
            self.revokedAt = revokedAt
            self.facts = facts
        }
    }

    /// `GET /v1/admin/devices`: a page, oldest first; `next` is the `after` of the next page.
    public struct DeviceList: Codable, Sendable {
        public var items: [Device]
        public var next: String?
        public init(items: [Device], next: String? = nil) {
            self.items = items
            self.next = next
        }
    }

    /// The `alg` of a request signed by an App Attest key: the `Signature` member is an App
    /// Attest assertion (CBOR) made with `clientDataHash` = SHA-256 of the signature base.
    public static let appAttestAlgorithm = "apple-app-attest"
    /// The length of a challenge, in bytes.
    public static let challengeBytes = 32
    /// The largest App Attest object taken, decoded (genuine ones are about 5.5 KiB).
    public static let maximumAttestationBytes = 32 << 10
    /// The most certificates an Android chain may have.
    public static let maximumChainCertificates = 10
    /// The largest certificate of an Android chain, decoded.
    public static let maximumCertificateBytes = 8 << 10
}
