import SignetCore
import SwiftASN1
import X509

extension AndroidAttestationVerifier {
    /// The largest chain file read.
    public static let maximumChainFileSize = 256 * 1024

    /// Reads a certificate chain, leaf first: PEM certificates, or DER certificates one after
    /// another (as `KeyStore.getCertificateChain()` gives them, each `getEncoded()`).
    /// - Throws: ``AttestationError/malformed(source:detail:)``, naming the certificate; a
    ///   certificate whose key or signature algorithm swift-certificates cannot read (ML-DSA
    ///   keys, RSA keys under 2048 bits, ECDSA identifiers with parameters) is refused so.
    public static func readChain(_ bytes: [UInt8], source: String) throws -> [Certificate] {
        guard bytes.count <= maximumChainFileSize else {
            throw AttestationError.malformed(source: source, detail: "over \(maximumChainFileSize / 1024) KiB; not a certificate chain")
        }
        var ders: [ArraySlice<UInt8>] = []
        if PEM.looksLikePEM(String(decoding: bytes.prefix(4096), as: UTF8.self)) {
            do {
                ders = try PEMDocument.parseMultiple(pemString: String(decoding: bytes, as: UTF8.self)).map { $0.derBytes[...] }
            } catch {
                throw AttestationError.malformed(source: source, detail: "not PEM certificates: \(AttestationError.describe(error))")
            }
        } else {
            var offset = 0
            while offset < bytes.count {
                guard ders.count < maximumChainLength, let length = derLength(bytes, at: offset) else {
                    throw AttestationError.malformed(
                        source: source, detail: ders.count < maximumChainLength ? "no DER certificate at byte \(offset)" : "more than \(maximumChainLength) certificates")
                }
                ders.append(bytes[offset..<(offset + length)])
                offset += length
            }
        }
        guard !ders.isEmpty else { throw AttestationError.missingCertificate(source: source, detail: "the file holds no certificate (PEM needs BEGIN and END lines and base64 in lines between them)") }
        guard ders.count <= maximumChainLength else {
            throw AttestationError.malformed(source: source, detail: "more than \(maximumChainLength) certificates")
        }
        return try ders.enumerated().map { index, der in
            do {
                return try Certificate(derEncoded: Array(der))
            } catch {
                throw AttestationError.malformed(source: source, detail: "certificate \(index) cannot be read: \(AttestationError.describe(error))")
            }
        }
    }

    /// The length of the DER SEQUENCE (header included) at `offset`, if one is there whole.
    static func derLength(_ bytes: [UInt8], at offset: Int) -> Int? {
        guard bytes.count - offset >= 2, bytes[offset] == 0x30 else { return nil }
        let first = Int(bytes[offset + 1])
        var header = 2
        var length = first
        if first & 0x80 != 0 {
            let count = first & 0x7F
            guard (1...3).contains(count), bytes.count - offset >= 2 + count else { return nil }
            length = bytes[(offset + 2)..<(offset + 2 + count)].reduce(0) { $0 << 8 | Int($1) }
            header += count
        }
        guard length <= bytes.count - offset - header else { return nil }
        return header + length
    }
}
