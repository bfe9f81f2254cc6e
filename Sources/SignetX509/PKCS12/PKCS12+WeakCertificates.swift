import SignetCore
import SwiftASN1

extension PKCS12 {
    /// Whether the certificate `der` holds an RSA key of 1024 to 2047 bits (which
    /// swift-certificates refuses to read): its SPKI, read with SignetCore under a weak policy.
    static func hasWeakRSAKey(certificate der: [UInt8]) -> Bool {
        guard let root = try? DER.parse(der), case .constructed(let certificate) = root.content,
            let tbs = certificate.first(where: { _ in true }), case .constructed(let fields) = tbs.content
        else { return false }
        // TBSCertificate: [0] version?, serial, signature, issuer, validity, subject, SPKI, …
        let nodes = Array(fields)
        let offset = nodes.first?.identifier.tagClass == .contextSpecific ? 1 : 0
        guard nodes.count > offset + 5 else { return false }
        var serializer = DER.Serializer()
        serializer.serialize(nodes[offset + 5])
        guard let decoded = try? KeyDecoder.decode(serializer.serializedBytes, source: "certificate", policy: KeyPolicy(allowWeakRSA: true)),
            case .publicKey(let key) = decoded, case .rsa(let bits) = key.kind
        else { return false }
        return bits < 2048
    }
}
