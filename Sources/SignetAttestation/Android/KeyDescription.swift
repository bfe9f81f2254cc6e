import SignetCore
import SwiftASN1

/// Where a key lives, as Android's key attestation reports it.
public enum AndroidSecurityLevel: Int, Sendable, Comparable, CaseIterable, CustomStringConvertible {
    /// A software keystore: no hardware protects the key (refused unless the policy allows it).
    case software = 0
    /// A trusted execution environment (TEE).
    case trustedEnvironment = 1
    /// A separate secure element (StrongBox).
    case strongBox = 2

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The name Android uses: `Software`, `TrustedEnvironment`, `StrongBox`.
    public var description: String {
        switch self {
        case .software: return "Software"
        case .trustedEnvironment: return "TrustedEnvironment"
        case .strongBox: return "StrongBox"
        }
    }
}

/// The device's verified boot state (`RootOfTrust.verifiedBootState`).
public enum AndroidVerifiedBootState: Int, Sendable, CustomStringConvertible {
    /// The boot chain is verified up to a key the device was built with.
    case verified = 0
    /// Verified with a user-installed key.
    case selfSigned = 1
    /// Not verified (an unlocked bootloader).
    case unverified = 2
    /// Verification failed.
    case failed = 3

    public var description: String {
        switch self {
        case .verified: return "Verified"
        case .selfSigned: return "SelfSigned"
        case .unverified: return "Unverified"
        case .failed: return "Failed"
        }
    }
}

/// The root of trust a hardware keystore reports: how the device booted.
public struct AndroidRootOfTrust: Sendable, Equatable {
    /// SHA-256 of the key that verified the boot image (all zero when unlocked).
    public let verifiedBootKey: [UInt8]
    /// Whether the bootloader is locked.
    public let deviceLocked: Bool
    /// The verified boot state.
    public let verifiedBootState: AndroidVerifiedBootState
    /// The hash of the verified boot data (attestation version 3 and later).
    public let verifiedBootHash: [UInt8]?
}

/// The app a key was made for: its package names and versions, and the SHA-256 digests of its
/// signing certificates.
public struct AndroidAttestedApplication: Sendable, Equatable {
    /// One package (several share a user id).
    public struct Package: Sendable, Equatable {
        /// The package name (`com.example.app`).
        public let name: String
        /// The package's version code.
        public let version: Int64
    }

    /// The packages.
    public let packages: [Package]
    /// SHA-256 of each signing certificate.
    public let signatureDigests: [[UInt8]]
}

/// The key description extension (1.3.6.1.4.1.11129.2.1.17) of an Android attestation
/// certificate, with the fields a server decides on.
struct KeyDescription {
    let attestationVersion: Int
    let attestationSecurityLevel: AndroidSecurityLevel
    let keymasterVersion: Int
    let keymasterSecurityLevel: AndroidSecurityLevel
    let challenge: [UInt8]
    let softwareEnforced: AuthorizationList
    let hardwareEnforced: AuthorizationList

    /// The largest extension read (genuine ones are under 2 KiB).
    static let maximumSize = 64 * 1024

    init(derEncoded bytes: ArraySlice<UInt8>) throws {
        guard bytes.count <= Self.maximumSize else { throw ASN1Error.invalidASN1Object(reason: "the key description is over 64 KiB") }
        (attestationVersion, attestationSecurityLevel, keymasterVersion, keymasterSecurityLevel, challenge, softwareEnforced, hardwareEnforced) =
            try DER.sequence(try DER.parse(bytes), identifier: .sequence) { nodes in
                let attestationVersion = try Int(derEncoded: &nodes)
                let attestationLevel = try Self.securityLevel(&nodes)
                let keymasterVersion = try Int(derEncoded: &nodes)
                let keymasterLevel = try Self.securityLevel(&nodes)
                let challenge = Array(try ASN1OctetString(derEncoded: &nodes).bytes)
                _ = try ASN1OctetString(derEncoded: &nodes)  // uniqueId
                guard let software = nodes.next(), let hardware = nodes.next() else {
                    throw ASN1Error.invalidASN1Object(reason: "the key description has fewer than 8 elements")
                }
                return (
                    attestationVersion, attestationLevel, keymasterVersion, keymasterLevel, challenge,
                    try AuthorizationList(software), try AuthorizationList(hardware)
                )
            }
    }

    private static func securityLevel(_ nodes: inout ASN1NodeCollection.Iterator) throws -> AndroidSecurityLevel {
        guard let node = nodes.next() else { throw ASN1Error.invalidASN1Object(reason: "a security level is missing") }
        let value = try Int(derEncoded: node, withIdentifier: .enumerated)
        guard let level = AndroidSecurityLevel(rawValue: value) else { throw ASN1Error.invalidASN1Object(reason: "unknown security level \(value)") }
        return level
    }
}

/// An `AuthorizationList`: `[tag] EXPLICIT value` fields, read by tag.
struct AuthorizationList {
    private var fields: [UInt: ASN1Node] = [:]

    init(_ node: ASN1Node) throws {
        try DER.sequence(node, identifier: .sequence) { nodes in
            while let field = nodes.next() {
                guard field.identifier.tagClass == .contextSpecific, case .constructed(let inner) = field.content else {
                    throw ASN1Error.invalidASN1Object(reason: "an authorization list holds a field that is not [tag] EXPLICIT")
                }
                var iterator = inner.makeIterator()
                guard let value = iterator.next(), iterator.next() == nil else {
                    throw ASN1Error.invalidASN1Object(reason: "authorization field \(field.identifier.tagNumber) does not hold one value")
                }
                guard fields.updateValue(value, forKey: field.identifier.tagNumber) == nil else {
                    throw ASN1Error.invalidASN1Object(reason: "authorization field \(field.identifier.tagNumber) appears twice")
                }
            }
        }
    }

    func contains(_ tag: UInt) -> Bool { fields[tag] != nil }

    func integer(_ tag: UInt) throws -> Int64? {
        guard let node = fields[tag] else { return nil }
        return try Int64(derEncoded: node)
    }

    func integers(_ tag: UInt) throws -> [Int64]? {
        guard let node = fields[tag] else { return nil }
        return try DER.set(node, identifier: .set) { nodes in
            var values: [Int64] = []
            while let item = nodes.next() { values.append(try Int64(derEncoded: item)) }
            return values
        }
    }

    func rootOfTrust() throws -> AndroidRootOfTrust? {
        guard let node = fields[704] else { return nil }
        return try DER.sequence(node, identifier: .sequence) { nodes in
            let key = Array(try ASN1OctetString(derEncoded: &nodes).bytes)
            let locked = try Bool(derEncoded: &nodes)
            guard let stateNode = nodes.next() else { throw ASN1Error.invalidASN1Object(reason: "the root of trust has no boot state") }
            let stateValue = try Int(derEncoded: stateNode, withIdentifier: .enumerated)
            guard let state = AndroidVerifiedBootState(rawValue: stateValue) else {
                throw ASN1Error.invalidASN1Object(reason: "unknown verified boot state \(stateValue)")
            }
            let hash = try nodes.next().map { Array(try ASN1OctetString(derEncoded: $0).bytes) }
            return AndroidRootOfTrust(verifiedBootKey: key, deviceLocked: locked, verifiedBootState: state, verifiedBootHash: hash)
        }
    }

    func application() throws -> AndroidAttestedApplication? {
        guard let node = fields[709] else { return nil }
        let wrapped = try ASN1OctetString(derEncoded: node)
        return try DER.sequence(try DER.parse(wrapped.bytes), identifier: .sequence) { nodes in
            guard let packageSet = nodes.next(), let digestSet = nodes.next() else {
                throw ASN1Error.invalidASN1Object(reason: "the attestation application id has fewer than 2 elements")
            }
            let packages = try DER.set(packageSet, identifier: .set) { items in
                var packages: [AndroidAttestedApplication.Package] = []
                while let item = items.next() {
                    packages.append(try DER.sequence(item, identifier: .sequence) { fields in
                        let name = try ASN1OctetString(derEncoded: &fields)
                        let version = try Int64(derEncoded: &fields)
                        guard let text = String(validating: name.bytes, as: UTF8.self) else {
                            throw ASN1Error.invalidASN1Object(reason: "a package name is not UTF-8")
                        }
                        return AndroidAttestedApplication.Package(name: text, version: version)
                    })
                }
                return packages
            }
            let digests = try DER.set(digestSet, identifier: .set) { items in
                var digests: [[UInt8]] = []
                while let item = items.next() { digests.append(Array(try ASN1OctetString(derEncoded: item).bytes)) }
                return digests
            }
            return AndroidAttestedApplication(packages: packages, signatureDigests: digests)
        }
    }
}
