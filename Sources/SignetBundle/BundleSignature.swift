import SignetCore

/// One signature over a manifest or a trust root: which key (its SPKI fingerprint), which
/// algorithm, and the signature bytes.
public struct BundleSignature: Sendable, Equatable {
    /// The signing key: the SHA-256 fingerprint of its SPKI (`sha256/<base64>`).
    public var keyID: KeyFingerprint
    /// The algorithm the signature was made with; never a MAC, which is refused when signing and
    /// reading.
    public var algorithm: SignatureAlgorithm
    /// The signature bytes as the signer made them (DER for ECDSA); base64 in the JSON.
    public var signature: [UInt8]

    /// A signature by the key `keyID` with `algorithm`.
    public init(keyID: KeyFingerprint, algorithm: SignatureAlgorithm, signature: [UInt8]) {
        self.keyID = keyID
        self.algorithm = algorithm
        self.signature = signature
    }

    /// Signs `message` with each signer, refusing MACs and the same key twice.
    static func sign(_ message: [UInt8], with signers: [any Signer]) async throws -> [BundleSignature] {
        var signatures: [BundleSignature] = []
        for signer in signers {
            guard !signer.algorithm.isMAC else {
                throw BundleError.invalidArgument(detail: "\(signer.algorithm.rawValue) is a MAC; bundles are signed with public-key algorithms")
            }
            let keyID = signer.publicKey.fingerprint
            guard !signatures.contains(where: { $0.keyID == keyID }) else {
                throw BundleError.invalidArgument(detail: "the key \(keyID) is given twice")
            }
            signatures.append(BundleSignature(keyID: keyID, algorithm: signer.algorithm, signature: try await signer.sign(message: message)))
        }
        return signatures
    }

    var json: CanonicalJSON {
        .object(["keyid": .string(keyID.description), "alg": .string(algorithm.rawValue), "sig": .string(Base64.encode(signature))])
    }

    init(_ value: CanonicalJSON, source: String) throws {
        let reader = try JSONObjectReader(value, source: source, context: "a signature", allowed: ["keyid", "alg", "sig"])
        let keyText = try reader.string("keyid")
        guard let keyID = KeyFingerprint(string: keyText) else {
            throw BundleError.malformed(source: source, detail: "signature key id \"\(BundleError.printable(keyText))\" is not sha256/<base64>")
        }
        let algorithmText = try reader.string("alg")
        guard let algorithm = SignatureAlgorithm(rawValue: algorithmText), !algorithm.isMAC else {
            throw BundleError.malformed(source: source, detail: "signature algorithm \"\(BundleError.printable(algorithmText))\" is not a public-key algorithm Signet knows")
        }
        let signatureText = try reader.string("sig")
        guard signatureText.utf8.count <= 2048, let signature = Base64.decode(signatureText), !signature.isEmpty else {
            throw BundleError.malformed(source: source, detail: "signature by \(keyID) is not base64 of at most 1536 bytes")
        }
        self.init(keyID: keyID, algorithm: algorithm, signature: signature)
    }

    /// Checks `signatures` over `message` against `keys`: returns quietly when at least
    /// `threshold` distinct trusted keys signed validly, with their pinned algorithm;
    /// otherwise throws naming what each signature lacked.
    static func requireThreshold(
        _ signatures: [BundleSignature], over message: [UInt8], keys: [TrustedKey], threshold: Int, source: String
    ) throws -> [KeyFingerprint] {
        var valid: [KeyFingerprint] = []
        var problems: [String] = []
        for signature in signatures {
            guard let key = keys.first(where: { $0.keyID == signature.keyID }) else {
                problems.append("\(signature.keyID) is not a trusted key")
                continue
            }
            guard key.algorithm == signature.algorithm else {
                problems.append("\(signature.keyID) is trusted for \(key.algorithm.rawValue), not \(signature.algorithm.rawValue)")
                continue
            }
            guard !valid.contains(signature.keyID) else {
                problems.append("\(signature.keyID) signed twice (counted once)")
                continue
            }
            do {
                try PublicKeyVerifier(key: key.publicKey, algorithm: key.algorithm).verify(signature: signature.signature, message: message)
                valid.append(signature.keyID)
            } catch {
                problems.append("the signature by \(signature.keyID) does not verify")
            }
        }
        guard valid.count >= threshold else {
            let found = signatures.isEmpty ? "it has no signatures" : problems.isEmpty ? "" : " (" + problems.joined(separator: "; ") + ")"
            throw BundleError.verificationFailed(
                source: source,
                detail: "\(threshold) valid signature(s) from trusted keys needed, found \(valid.count)" + (signatures.isEmpty ? ": " + found : found))
        }
        return valid
    }
}

/// The signatures entry of a bundle.
enum SignatureList {
    static let format = "signet-bundle-signatures-v1"

    static func bytes(_ signatures: [BundleSignature]) -> [UInt8] {
        CanonicalJSON.object(["format": .string(format), "signatures": .array(signatures.map(\.json))]).bytes
    }

    static func parse(_ bytes: [UInt8], source: String, limits: BundleLimits) throws -> [BundleSignature] {
        let reader = try JSONObjectReader(
            CanonicalJSON.parse(bytes, source: source), source: source, context: "the signatures", allowed: ["format", "signatures"])
        guard try reader.string("format") == format else {
            throw BundleError.malformed(source: source, detail: "the signatures entry's format is not \(format)")
        }
        var result: [BundleSignature] = []
        for element in try reader.array("signatures", maximum: limits.maximumSignatures) {
            result.append(try BundleSignature(element, source: source))
        }
        return result
    }
}
