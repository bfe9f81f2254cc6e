import SignetCore

/// A public key a client trusts to sign bundles, pinned with the one algorithm it may use.
public struct TrustedKey: Sendable, Equatable {
    /// The key that may sign.
    public let publicKey: PublicKey
    /// The one algorithm the key's signatures may use; one by this key under any other does not count.
    public let algorithm: SignatureAlgorithm
    /// The key's fingerprint, by which signatures name it.
    public var keyID: KeyFingerprint { publicKey.fingerprint }

    /// Pins `publicKey` to `algorithm` (nil: the key's default algorithm).
    public init(publicKey: PublicKey, algorithm: SignatureAlgorithm? = nil) throws {
        let chosen = algorithm ?? publicKey.kind.defaultAlgorithm
        guard chosen.fits(publicKey.kind), !chosen.isMAC else {
            throw BundleError.invalidArgument(detail: "\(chosen.rawValue) cannot be used with a \(publicKey.kind) key")
        }
        self.publicKey = publicKey
        self.algorithm = chosen
    }
}

/// What a client pins: the keys that may sign bundles, how many of them must (the threshold),
/// and a version. The next root is accepted only when a threshold of this root's keys signed
/// it and its version is exactly one more (docs/formats/bundle.md).
public struct TrustRoot: Sendable, Equatable {
    static let rootFormat = "signet-trust-root-v1"

    /// The root's version, from 1; the next root must have exactly one more.
    public let version: Int64
    /// How many distinct keys of ``keys`` must have signed a bundle or the next root: 1 to their
    /// number.
    public let threshold: Int
    /// The keys that may sign, each pinned to its algorithm; none listed twice.
    public let keys: [TrustedKey]
    /// Signatures over ``signedBytes`` by keys of the previous root (none for version 1).
    public let signatures: [BundleSignature]

    /// A root; refuses a threshold outside 1…keys and the same key twice.
    public init(version: Int64 = 1, threshold: Int, keys: [TrustedKey], signatures: [BundleSignature] = []) throws {
        guard !keys.isEmpty else { throw BundleError.invalidArgument(detail: "a trust root needs at least one key") }
        guard (1...keys.count).contains(threshold) else {
            throw BundleError.invalidArgument(detail: "the threshold must be between 1 and the number of keys (\(keys.count)), not \(threshold)")
        }
        guard version >= 1 else { throw BundleError.invalidArgument(detail: "a trust root's version starts at 1") }
        var seen = Set<KeyFingerprint>()
        for key in keys where !seen.insert(key.keyID).inserted {
            throw BundleError.invalidArgument(detail: "the key \(key.keyID) is listed twice")
        }
        self.version = version
        self.threshold = threshold
        self.keys = keys
        self.signatures = signatures
    }

    /// The canonical bytes a rotation signs: the root without its signatures.
    public var signedBytes: [UInt8] { rootJSON.bytes }

    private var rootJSON: CanonicalJSON {
        let keys = keys.map { key in
            CanonicalJSON.object([
                "keyid": .string(key.keyID.description), "alg": .string(key.algorithm.rawValue),
                "public-key": .string(Base64.encode(key.publicKey.spkiDER)),
            ])
        }
        return .object([
            "format": .string(Self.rootFormat), "version": .integer(version), "threshold": .integer(Int64(threshold)), "keys": .array(keys),
        ])
    }

    /// The trust file: canonical JSON and a newline.
    public var fileBytes: [UInt8] {
        CanonicalJSON.object(["root": rootJSON, "signatures": .array(signatures.map(\.json))]).bytes + [0x0A]
    }

    /// Parses a trust file.
    public init(bytes: [UInt8], source: String, limits: BundleLimits = BundleLimits()) throws {
        guard bytes.count <= limits.maximumSignaturesSize else {
            throw BundleError.malformed(source: source, detail: "larger than \(limits.maximumSignaturesSize) bytes; not a trust file")
        }
        let file = try JSONObjectReader(CanonicalJSON.parse(bytes, source: source), source: source, context: "the trust file", allowed: ["root", "signatures"])
        guard let rootValue = file.members["root"] else { throw BundleError.malformed(source: source, detail: "the trust file has no \"root\"") }
        let root = try JSONObjectReader(rootValue, source: source, context: "the trust root", allowed: ["format", "version", "threshold", "keys"])
        guard try root.string("format") == Self.rootFormat else {
            throw BundleError.malformed(source: source, detail: "not a trust root (format must be \(Self.rootFormat))")
        }
        var keys: [TrustedKey] = []
        for element in try root.array("keys", maximum: limits.maximumSignatures) {
            let entry = try JSONObjectReader(element, source: source, context: "a trusted key", allowed: ["keyid", "alg", "public-key"])
            let algorithmText = try entry.string("alg")
            guard let algorithm = SignatureAlgorithm(rawValue: algorithmText) else {
                throw BundleError.malformed(source: source, detail: "unknown algorithm \"\(BundleError.printable(algorithmText))\"")
            }
            guard let der = Base64.decode(try entry.string("public-key")) else {
                throw BundleError.malformed(source: source, detail: "a trusted key's public-key is not base64")
            }
            let publicKey: PublicKey
            do {
                guard case .publicKey(let decoded) = try KeyDecoder.decode(der, source: source) else { throw BundleError.malformed(source: source, detail: "") }
                guard decoded.spkiDER == der else { throw BundleError.malformed(source: source, detail: "") }
                publicKey = decoded
            } catch {
                throw BundleError.malformed(source: source, detail: "a trusted key's public-key is not a DER SubjectPublicKeyInfo")
            }
            let key: TrustedKey
            do { key = try TrustedKey(publicKey: publicKey, algorithm: algorithm) } catch {
                throw BundleError.malformed(source: source, detail: "\(error)")
            }
            guard try entry.string("keyid") == key.keyID.description else {
                throw BundleError.malformed(source: source, detail: "the keyid of \(key.keyID) does not match its public key")
            }
            keys.append(key)
        }
        var signatures: [BundleSignature] = []
        for element in try file.array("signatures", maximum: limits.maximumSignatures) {
            signatures.append(try BundleSignature(element, source: source))
        }
        do {
            try self.init(
                version: try root.integer("version", in: 1...Int64(1 << 53)),
                threshold: Int(try root.integer("threshold", in: 1...Int64(limits.maximumSignatures))), keys: keys, signatures: signatures)
        } catch {
            throw BundleError.malformed(source: source, detail: "\(error)")
        }
    }

    /// Reads and parses a trust file.
    public static func load(path: String, limits: BundleLimits = BundleLimits()) throws -> TrustRoot {
        try TrustRoot(bytes: try BundleFiles.read(path, limit: limits.maximumSignaturesSize), source: path, limits: limits)
    }

    /// The next root (version + 1) with `keys` and `threshold`, signed by `signers`, which
    /// must be keys of this root; at least ``threshold`` of them for it to be accepted.
    public func rotated(to keys: [TrustedKey], threshold: Int, signedBy signers: [any Signer]) async throws -> TrustRoot {
        for signer in signers where !self.keys.contains(where: { $0.keyID == signer.publicKey.fingerprint }) {
            throw BundleError.invalidArgument(detail: "the signing key \(signer.publicKey.fingerprint) is not in the current trust root")
        }
        guard signers.count >= self.threshold else {
            throw BundleError.invalidArgument(detail: "the current root needs \(self.threshold) signing key(s); \(signers.count) given")
        }
        let unsigned = try TrustRoot(version: version + 1, threshold: threshold, keys: keys)
        let signatures = try await BundleSignature.sign(unsigned.signedBytes, with: signers)
        return try TrustRoot(version: version + 1, threshold: threshold, keys: keys, signatures: signatures)
    }

    /// Checks that `next` may replace this root: version exactly one more, signed by a
    /// threshold of this root's keys.
    public func accepts(_ next: TrustRoot, source: String) throws {
        guard next.version == version + 1 else {
            throw BundleError.verificationFailed(
                source: source, detail: "its version is \(next.version); only version \(version + 1) can follow version \(version)")
        }
        _ = try BundleSignature.requireThreshold(next.signatures, over: next.signedBytes, keys: keys, threshold: threshold, source: source)
    }
}
