import SwiftASN1

/// Reads a key in any supported format, detecting which from the content:
/// PEM (PKCS#8, encrypted PKCS#8, PKCS#1, SEC1, SPKI, and OpenSSH's unencrypted
/// `openssh-key-v1` private keys), DER of the same, OpenSSH public one-liners, JWK, and the raw
/// (base64 or binary) form of iOS's `SecKeyCopyExternalRepresentation`.
public enum KeyDecoder {
    /// The largest key file we read: far above any real key, far below a memory problem.
    public static let maximumKeyFileSize = 1 << 20

    /// Reads and decodes the key at `path` (`-` for standard input).
    public static func decode(path: String, policy: KeyPolicy = .strict) throws -> DecodedKey {
        let input = try FileInput(path: path)
        var bytes = try input.readAll(limit: maximumKeyFileSize)
        defer { SecretBytes.zero(&bytes) }
        return try decode(bytes, source: input.displayName, policy: policy)
    }

    /// Decodes key bytes; `source` names them in errors.
    public static func decode(_ bytes: [UInt8], source: String, policy: KeyPolicy = .strict) throws -> DecodedKey {
        guard !bytes.isEmpty else { throw SignetCoreError.malformed(source: source, detail: "the file is empty") }
        guard bytes.count <= maximumKeyFileSize else { throw SignetCoreError.tooLarge(source: source, limit: maximumKeyFileSize) }
        // DER always holds control bytes (tags, lengths); text formats never do.
        let isText = !bytes.contains { $0 < 0x20 && $0 != 0x0a && $0 != 0x0d && $0 != 0x09 }
        if isText, let text = String(validating: bytes, as: UTF8.self) {
            let trimmed = text.trimmed.trimmingCharacters(in: .whitespacesAndNewlines)
            if PEM.looksLikePEM(text) { return try decodePEM(text, source: source, policy: policy) }
            if trimmed.hasPrefix("{") { return try JWK.decode(trimmed, source: source, policy: policy) }
            if trimmed.hasPrefix("ssh-") || trimmed.hasPrefix("ecdsa-sha2-") {
                return .publicKey(try OpenSSHPublicKey.decode(trimmed, source: source, policy: policy))
            }
            if trimmed.hasPrefix("untrusted comment:") {
                // A minisign public key is an Ed25519 key like any other; its secret keys and
                // signatures belong to `signet minisign`.
                guard trimmed.hasPrefix("untrusted comment: minisign public key") else {
                    throw SignetCoreError.unsupported(source: source, detail: "minisign secret keys and signatures here (use `signet minisign`)")
                }
                return .publicKey(try MinisignPublicKey(fileContents: bytes, source: source).publicKey)
            }
            if let raw = Base64.decode(trimmed) {
                return try decodeRaw(raw, source: source, policy: policy, wasBase64: true)
            }
        }
        return try decodeRaw(bytes, source: source, policy: policy, wasBase64: false)
    }

    static func decodePEM(_ text: String, source: String, policy: KeyPolicy) throws -> DecodedKey {
        let blocks = try PEM.decode(text, source: source).filter { $0.label != "EC PARAMETERS" }
        guard let block = blocks.first else {
            throw SignetCoreError.malformed(source: source, detail: "the PEM document holds only EC parameters, no key")
        }
        let keyBlocks = blocks.filter { $0.label.hasSuffix(" KEY") }
        guard keyBlocks.count <= 1 else {
            throw SignetCoreError.malformed(source: source, detail: "holds \(keyBlocks.count) keys (lines \(keyBlocks.map { String($0.line) }.joined(separator: ", "))); give one key per file")
        }
        if block.headers["Proc-Type"] != nil {
            throw SignetCoreError.unsupported(
                source: source,
                detail: "legacy PEM encryption (Proc-Type header, line \(block.line)); convert it with `openssl pkcs8 -topk8 -v2 aes-256-cbc -in KEY -out NEW`")
        }
        switch block.label {
        case "PRIVATE KEY": return .privateKey(try KeyMaterial.privateKey(pkcs8: block.der, source: source, policy: policy))
        case "ENCRYPTED PRIVATE KEY": return .encryptedPrivateKey(try EncryptedPrivateKey(der: block.der, source: source))
        case "RSA PRIVATE KEY": return .privateKey(try KeyMaterial.rsaPrivateKey(pkcs1: block.der, source: source, policy: policy))
        case "EC PRIVATE KEY": return .privateKey(try KeyMaterial.ecPrivateKey(sec1: block.der, curve: nil, source: source))
        case "PUBLIC KEY": return .publicKey(try KeyMaterial.publicKey(spki: block.der, source: source, policy: policy))
        case "RSA PUBLIC KEY": return .publicKey(try KeyMaterial.rsaPublicKey(pkcs1: block.der, source: source, policy: policy))
        case "OPENSSH PRIVATE KEY": return .privateKey(try OpenSSHPrivateKey.decode(block.der, source: source, policy: policy))
        case "CERTIFICATE":
            throw SignetCoreError.unsupported(source: source, detail: "a certificate where a key is expected; extract its key with `openssl x509 -pubkey -noout -in CERT`")
        default:
            throw SignetCoreError.unsupported(source: source, detail: "PEM label \"\(block.label)\" (line \(block.line))")
        }
    }

    /// The shape of a DER SEQUENCE, from the types of its first fields.
    static func decodeDER(_ der: [UInt8], source: String, policy: KeyPolicy) throws -> DecodedKey {
        let fields: [ASN1Node]
        do {
            let root = try DER.parse(der)
            guard case .constructed(let children) = root.content, root.identifier == .sequence else {
                throw SignetCoreError.malformed(source: source, detail: "DER data is not a SEQUENCE")
            }
            fields = Array(children)
        } catch let error as SignetCoreError {
            throw error
        } catch {
            throw SignetCoreError.malformed(source: source, detail: "not a key in any supported format (the DER is damaged or truncated)")
        }
        let ids = fields.map(\.identifier)
        func integer(_ index: Int) -> Int? {
            guard index < fields.count, fields[index].identifier == .integer else { return nil }
            return try? Int(derEncoded: fields[index])
        }
        if ids.count == 2, ids[0] == .sequence, ids[1] == .bitString {
            return .publicKey(try KeyMaterial.publicKey(spki: der, source: source, policy: policy))
        }
        if ids.count == 2, ids[0] == .sequence, ids[1] == .octetString {
            return .encryptedPrivateKey(try EncryptedPrivateKey(der: der, source: source))
        }
        if ids.count >= 3, ids[1] == .sequence, ids[2] == .octetString, integer(0).map({ $0 == 0 || $0 == 1 }) == true {
            return .privateKey(try KeyMaterial.privateKey(pkcs8: der, source: source, policy: policy))
        }
        if ids.count >= 2, integer(0) == 1, ids[1] == .octetString {
            return .privateKey(try KeyMaterial.ecPrivateKey(sec1: der, curve: nil, source: source))
        }
        if ids.count == 9, ids.allSatisfy({ $0 == .integer }) {
            return .privateKey(try KeyMaterial.rsaPrivateKey(pkcs1: der, source: source, policy: policy))
        }
        if ids.count == 2, ids.allSatisfy({ $0 == .integer }) {
            return .publicKey(try KeyMaterial.rsaPublicKey(pkcs1: der, source: source, policy: policy))
        }
        throw SignetCoreError.malformed(source: source, detail: "DER data is not a key structure we know (PKCS#8, SPKI, PKCS#1, SEC1)")
    }

    /// DER, an X9.63 EC point (iOS), `04‖X‖Y‖D` (iOS EC private), or a raw Ed25519 key.
    static func decodeRaw(_ raw: [UInt8], source: String, policy: KeyPolicy, wasBase64: Bool) throws -> DecodedKey {
        // 32 base64 bytes are an Ed25519 public key whatever the first byte is: no supported DER
        // structure is that short, so a leading 0x30 must not send it to the DER decoder.
        if wasBase64, raw.count == 32 { return .publicKey(try KeyMaterial.ed25519PublicKey(raw: raw, source: source)) }
        if raw.first == 0x30 { return try decodeDER(raw, source: source, policy: policy) }
        if raw.first == 0x04 {
            switch raw.count {
            case 65: return .publicKey(try KeyMaterial.ecPublicKey(point: raw, curve: OID.prime256v1, source: source))
            case 97:
                // 97 bytes is a P-384 point or a P-256 private key (04‖X‖Y‖D): the latter only
                // if D really belongs to the point.
                if let key = try? iosECPrivate(raw, size: 32, curve: OID.prime256v1, source: source) { return .privateKey(key) }
                return .publicKey(try KeyMaterial.ecPublicKey(point: raw, curve: OID.secp384r1, source: source))
            case 145: return .privateKey(try iosECPrivate(raw, size: 48, curve: OID.secp384r1, source: source))
            default: break
            }
        }
        throw SignetCoreError.malformed(
            source: source, detail: "not a key in any supported format (PEM, DER, OpenSSH, JWK or iOS raw base64)")
    }

    private static func iosECPrivate(_ raw: [UInt8], size: Int, curve: ASN1ObjectIdentifier, source: String) throws -> PrivateKey {
        let point = Array(raw[0..<(1 + 2 * size)])
        var scalar = Array(raw[(1 + 2 * size)...])
        defer { SecretBytes.zero(&scalar) }
        let sec1 = DERKey.serializeECPrivateKey(scalar: scalar, curve: curve, publicKey: point)
        return try KeyMaterial.ecPrivateKey(sec1: sec1, curve: curve, source: source)
    }
}

import Foundation
