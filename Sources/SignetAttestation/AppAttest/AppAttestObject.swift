import SignetCore
import X509

/// An App Attest attestation object read, not yet verified: `{fmt, attStmt: {x5c, receipt},
/// authData}` in CBOR.
struct AppAttestObject {
    /// The certificates of `x5c`, leaf first.
    let certificates: [Certificate]
    /// Apple's receipt.
    let receipt: [UInt8]
    /// The authenticator data.
    let authData: AuthenticatorData

    /// The most certificates `x5c` may hold (Apple sends two).
    static let maximumCertificates = 4

    init(_ object: [UInt8], source: String, maximumTrailingBytes: Int) throws {
        guard object.count <= AppAttestVerifier.maximumObjectSize else {
            throw AttestationError.malformed(source: source, detail: "\(object.count) bytes; an attestation object is at most \(AppAttestVerifier.maximumObjectSize)")
        }
        let root: CBORValue
        do {
            root = try CBOR.decode(object, source: source)
        } catch let error as SignetCoreError {
            throw AttestationError(reading: error, source: source)
        }
        func field(_ map: CBORValue, _ name: String) throws -> CBORValue {
            guard let value = map[name] else { throw AttestationError.malformed(source: source, detail: "the attestation has no \"\(name)\"") }
            return value
        }
        guard root.mapValue != nil else { throw AttestationError.malformed(source: source, detail: "the attestation is \(root.kind), not a map") }
        guard let format = try field(root, "fmt").textValue else {
            throw AttestationError.malformed(source: source, detail: "the attestation's \"fmt\" is not a text string")
        }
        guard format == "apple-appattest" else { throw AttestationError.wrongFormat(source: source, format: format) }
        let statement = try field(root, "attStmt")
        guard let x5c = try field(statement, "x5c").arrayValue else {
            throw AttestationError.malformed(source: source, detail: "the attestation's \"x5c\" is not an array")
        }
        guard !x5c.isEmpty else { throw AttestationError.missingCertificate(source: source, detail: "the attestation's \"x5c\" is empty") }
        guard x5c.count <= Self.maximumCertificates else {
            throw AttestationError.malformed(source: source, detail: "\"x5c\" holds \(x5c.count) certificates; at most \(Self.maximumCertificates) are read")
        }
        certificates = try x5c.enumerated().map { index, item in
            guard let der = item.bytesValue else {
                throw AttestationError.malformed(source: source, detail: "\"x5c\" element \(index) is \(item.kind), not a byte string")
            }
            do {
                return try Certificate(derEncoded: der)
            } catch {
                // Not the parser's words: for a key it cannot read they are a crypto library's
                // internal codes (attack round).
                throw AttestationError.malformed(source: source, detail: "\"x5c\" element \(index) is not a DER X.509 certificate with a key this library reads")
            }
        }
        guard let receipt = try field(statement, "receipt").bytesValue else {
            throw AttestationError.malformed(source: source, detail: "the attestation's \"receipt\" is not a byte string")
        }
        self.receipt = receipt
        guard let authData = try field(root, "authData").bytesValue else {
            throw AttestationError.malformed(source: source, detail: "the attestation's \"authData\" is not a byte string")
        }
        do {
            self.authData = try AuthenticatorData(authData, source: source + " (authData)", maximumTrailingBytes: maximumTrailingBytes)
        } catch let error as SignetCoreError {
            throw AttestationError(reading: error, source: source)
        }
    }
}

extension AttestationError {
    /// A SignetCore failure reading `source`, as this module reports it.
    init(reading error: SignetCoreError, source: String) {
        switch error {
        case .malformed(let inner, let detail), .unsupported(let inner, let detail):
            self = .malformed(source: source, detail: inner == source ? detail : "\(inner): \(detail)")
        default: self = .malformed(source: source, detail: error.description)
        }
    }
}
