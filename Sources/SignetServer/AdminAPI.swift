import SignetAPI
import SignetCore
import SignetHTTP

/// The server's checks of what an enrolment sends.
extension AdminAPI {
    /// Checks a name: 1 to 64 of `A–Z a–z 0–9 . _ -`, starting with a letter or digit.
    public static func checkName(_ name: String) throws {
        guard isValidName(name) else { throw ServerError.unprocessable(field: "name", detail: nameRule) }
    }

    /// The public key of an enrolment: PEM or base64 DER of an SPKI (any format Signet reads);
    /// a private key is refused so it never travels by mistake.
    public static func publicKey(_ text: String) throws -> PublicKey {
        guard text.utf8.count <= 16 << 10 else { throw ServerError.unprocessable(field: "publicKey", detail: "is longer than 16 KiB") }
        let bytes: [UInt8]
        if PEM.looksLikePEM(text) {
            bytes = Array(text.utf8)
        } else if let der = Base64.decode(text.filter { !$0.isWhitespace }) {
            bytes = der
        } else {
            throw ServerError.unprocessable(field: "publicKey", detail: "is neither PEM nor base64 DER")
        }
        let decoded: DecodedKey
        do {
            decoded = try KeyDecoder.decode(bytes, source: "publicKey")
        } catch {
            throw ServerError.unprocessable(field: "publicKey", detail: "\(error)")
        }
        guard case .publicKey(let key) = decoded else {
            throw ServerError.unprocessable(field: "publicKey", detail: "is a private key: send only the public key")
        }
        return key
    }

    /// The algorithm for `key`: the one named (which must suit the key and be one of RFC 9421's)
    /// or the key's default.
    public static func algorithm(_ name: String?, for key: PublicKey) throws -> SignatureAlgorithm {
        guard let name else { return HTTPSignatureAlgorithms.default(for: key.kind) }
        guard let algorithm = try? HTTPSignatureAlgorithms.parse(name), !algorithm.isMAC else {
            throw ServerError.unprocessable(field: "algorithm", detail: "\(name.prefix(40)) is not an RFC 9421 public-key algorithm")
        }
        guard algorithm.fits(key.kind) else {
            throw ServerError.unprocessable(field: "algorithm", detail: "\(algorithm.rawValue) does not suit a \(key.kind) key")
        }
        return algorithm
    }
}
