import Crypto

extension SignatureAlgorithm {
    /// An ECDSA signature in the raw `r‖s` form (RFC 9421, JWS, WebCrypto), from the DER form
    /// that ``Signer``s and openssl produce. Other algorithms' signatures are returned as they are.
    ///
    /// - Throws: ``SignetCoreError/malformed(source:detail:)`` when `der` is not a DER ECDSA
    ///   signature of this algorithm's curve.
    public func rawSignature(fromDER der: [UInt8]) throws -> [UInt8] {
        do {
            switch self {
            case .ecdsaP256SHA256: return Array(try P256.Signing.ECDSASignature(derRepresentation: der).rawRepresentation)
            case .ecdsaP384SHA384: return Array(try P384.Signing.ECDSASignature(derRepresentation: der).rawRepresentation)
            default: return der
            }
        } catch {
            throw SignetCoreError.malformed(source: rawValue, detail: "not a DER ECDSA signature")
        }
    }

    /// An ECDSA signature in DER, from the raw `r‖s` form (exactly 64 bytes for P-256, 96 for
    /// P-384). Other algorithms' signatures are returned as they are.
    ///
    /// - Throws: ``SignetCoreError/malformed(source:detail:)`` for another length or values
    ///   outside the curve's range.
    public func derSignature(fromRaw raw: [UInt8]) throws -> [UInt8] {
        let length: Int
        switch self {
        case .ecdsaP256SHA256: length = 64
        case .ecdsaP384SHA384: length = 96
        default: return raw
        }
        guard raw.count == length else {
            throw SignetCoreError.malformed(source: rawValue, detail: "a raw ECDSA signature is \(length) bytes, not \(raw.count)")
        }
        do {
            switch self {
            case .ecdsaP256SHA256: return Array(try P256.Signing.ECDSASignature(rawRepresentation: raw).derRepresentation)
            default: return Array(try P384.Signing.ECDSASignature(rawRepresentation: raw).derRepresentation)
            }
        } catch {
            throw SignetCoreError.malformed(source: rawValue, detail: "not a raw ECDSA signature")
        }
    }
}
