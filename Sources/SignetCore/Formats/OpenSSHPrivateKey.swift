import Crypto
import CryptoExtras
import SwiftASN1

/// OpenSSH's own private key format, `openssh-key-v1` (PROTOCOL.key in OpenSSH's sources), which
/// `ssh-keygen` writes by default under the PEM label `OPENSSH PRIVATE KEY`. The PEM body is
///
/// ```
/// "openssh-key-v1\0"  string cipher name  string KDF name  string KDF options
/// uint32 number of keys (1)  string public key blob  string private section
/// ```
///
/// and the private section (encrypted unless the cipher is `none`) is `uint32 check,
/// uint32 check` (equal), the key's fields, `string comment`, then the padding bytes 1, 2, 3 …
/// up to a multiple of 8 bytes.
///
/// Only unencrypted keys are read, of the types ``OpenSSHPublicKey`` reads. Every length is
/// checked, the check integers and the padding must be exact, nothing may follow the private
/// section, and the private key must be the key of the public blob.
///
/// RSA keys under 2048 bits are refused whatever the ``KeyPolicy`` says: swift-crypto builds an
/// RSA key from its numbers (n, e, d, p, q, which is all this format holds besides q⁻¹ mod p)
/// only from 2048 bits up. Such a key can be read once converted to PKCS#8 (the message says how).
enum OpenSSHPrivateKey {
    /// The bytes the decoded body starts with: `openssh-key-v1` and a NUL.
    static let magic: [UInt8] = Array("openssh-key-v1".utf8) + [0]

    /// The key types read, in the order messages list them.
    static let supportedTypes = ["ssh-rsa", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ssh-ed25519"]

    /// Decodes `body`, the base64-decoded body of an `OPENSSH PRIVATE KEY` PEM block; `source`
    /// names it in errors.
    static func decode(_ body: [UInt8], source: String, policy: KeyPolicy) throws -> PrivateKey {
        var reader = SSHReader(body)
        guard reader.bytes(count: magic.count) == magic else {
            throw SignetCoreError.malformed(source: source, detail: "not an OpenSSH private key (the openssh-key-v1 magic is missing)")
        }
        guard let cipher = reader.string(), let kdf = reader.string(), let kdfOptions = reader.string() else {
            throw malformed("truncated in its cipher or KDF fields", source: source)
        }
        guard cipher.elementsEqual("none".utf8) else {
            throw SignetCoreError.unsupported(
                source: source,
                detail: "passphrase-protected OpenSSH private keys (cipher \(quoted(cipher)), kdf \(quoted(kdf))); remove the passphrase from a copy with `ssh-keygen -p -N \"\" -f COPY` (it rewrites the file it is given)")
        }
        guard kdf.elementsEqual("none".utf8), kdfOptions.isEmpty else {
            throw malformed("unencrypted, yet it names the KDF \(quoted(kdf)) or has KDF options", source: source)
        }
        guard let count = reader.uint32() else { throw malformed("truncated before its number of keys", source: source) }
        guard count == 1 else {
            throw malformed(count == 0 ? "holds no key" : "holds \(count) keys; give one key per file", source: source)
        }
        guard let publicBlob = reader.string(), var section = reader.string() else {
            throw malformed("truncated in its public key or private section", source: source)
        }
        defer { SecretBytes.zero(&section) }
        guard reader.isAtEnd else { throw malformed("extra data after the key (\(reader.remaining) bytes)", source: source) }

        guard let typeBytes = SSHReader(publicBlob).peekString() else {
            throw malformed("its public key blob is truncated", source: source)
        }
        let type = String(decoding: typeBytes, as: UTF8.self)
        guard supportedTypes.contains(type) else {
            throw SignetCoreError.unsupported(
                source: source, detail: "OpenSSH key type \(quoted(typeBytes)) (supported: \(supportedTypes.joined(separator: ", ")))")
        }
        let publicKey = try OpenSSHPublicKey.decode(blob: publicBlob, type: type, source: source, policy: policy)
        // The section is read in a function of its own, so that no reader still shares its
        // buffer when the defer above zeroes it.
        let key = try decodeSection(section, type: type, source: source, policy: policy)
        guard key.publicKey == publicKey else { throw malformed("the public and private halves do not match", source: source) }
        return key
    }

    /// The private section: check integers, the key of `type`, the comment and the padding.
    private static func decodeSection(_ section: [UInt8], type: String, source: String, policy: KeyPolicy) throws -> PrivateKey {
        var reader = SSHReader(section)
        guard let check1 = reader.uint32(), let check2 = reader.uint32() else {
            throw malformed("the private section is truncated", source: source)
        }
        guard check1 == check2 else {
            throw malformed("check integers differ: the key is damaged or was decrypted with a wrong passphrase", source: source)
        }
        guard let innerType = reader.string() else { throw malformed("the private section is truncated", source: source) }
        guard innerType.elementsEqual(type.utf8) else {
            throw malformed("the public and private halves do not match (\(type) outside, \(quoted(innerType)) inside)", source: source)
        }
        let key: PrivateKey
        switch type {
        case "ssh-ed25519": key = try ed25519(&reader, source: source)
        case "ssh-rsa": key = try rsa(&reader, source: source, policy: policy)
        default: key = try ecdsa(&reader, p256: type == "ecdsa-sha2-nistp256", source: source)
        }
        guard reader.string() != nil else { throw malformed("the private section is truncated in the comment", source: source) }
        let rest = reader.remaining
        guard rest < 8, let padding = reader.bytes(count: rest),
            padding.enumerated().allSatisfy({ $0.element == UInt8($0.offset + 1) })
        else {
            throw malformed("the padding after the comment is not 1, 2, 3 … (at most 7 bytes)", source: source)
        }
        guard section.count % 8 == 0 else {
            throw malformed("the private section is \(section.count) bytes, not a multiple of 8", source: source)
        }
        return key
    }

    /// `string public key (32 bytes)`, `string seed ‖ public key (64 bytes)`.
    private static func ed25519(_ reader: inout SSHReader, source: String) throws -> PrivateKey {
        guard let publicKey = reader.string(), var secret = reader.string() else {
            throw malformed("the Ed25519 key is truncated", source: source)
        }
        defer { SecretBytes.zero(&secret) }
        guard publicKey.count == 32, secret.count == 64, secret[32...].elementsEqual(publicKey) else {
            throw malformed("an Ed25519 key must be a 32-byte public key and a 64-byte seed ‖ public key", source: source)
        }
        var seed = Array(secret[..<32])
        defer { SecretBytes.zero(&seed) }
        guard let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: seed),
            key.publicKey.rawRepresentation.elementsEqual(publicKey)
        else {
            throw malformed("the Ed25519 seed does not belong to its public key", source: source)
        }
        return PrivateKey(.ed25519(key))
    }

    /// `string curve name`, `string public point (uncompressed)`, `mpint private scalar`.
    private static func ecdsa(_ reader: inout SSHReader, p256: Bool, source: String) throws -> PrivateKey {
        guard let curve = reader.string(), let point = reader.string() else {
            throw malformed("the ECDSA key is truncated", source: source)
        }
        guard curve.elementsEqual((p256 ? "nistp256" : "nistp384").utf8) else {
            throw malformed("the ECDSA curve name \(quoted(curve)) does not match the key type", source: source)
        }
        var scalar = try mpint(&reader, "ECDSA private scalar", source: source)
        defer { SecretBytes.zero(&scalar) }
        let size = p256 ? 32 : 48
        guard scalar.count <= size else { throw malformed("the ECDSA private scalar is longer than \(size) bytes", source: source) }
        var padded = [UInt8](repeating: 0, count: size)
        defer { SecretBytes.zero(&padded) }
        for (index, byte) in scalar.enumerated() { padded[size - scalar.count + index] = byte }
        let key: PrivateKey
        do {
            if p256 {
                key = PrivateKey(.p256(try P256.Signing.PrivateKey(rawRepresentation: padded)))
            } else {
                key = PrivateKey(.p384(try P384.Signing.PrivateKey(rawRepresentation: padded)))
            }
        } catch {
            throw malformed("the ECDSA private scalar is not valid for its curve", source: source)
        }
        guard KeyMaterial.ecPoint(key.publicKey) == point else {
            throw malformed("the ECDSA private scalar does not belong to its public point", source: source)
        }
        return key
    }

    /// `mpint n, e, d, iqmp (q⁻¹ mod p), p, q`.
    private static func rsa(_ reader: inout SSHReader, source: String, policy: KeyPolicy) throws -> PrivateKey {
        let n = try mpint(&reader, "RSA modulus", source: source)
        let e = try mpint(&reader, "RSA public exponent", source: source)
        var d = try mpint(&reader, "RSA private exponent", source: source)
        defer { SecretBytes.zero(&d) }
        var iqmp = try mpint(&reader, "RSA CRT coefficient", source: source)
        defer { SecretBytes.zero(&iqmp) }
        var p = try mpint(&reader, "RSA prime p", source: source)
        defer { SecretBytes.zero(&p) }
        var q = try mpint(&reader, "RSA prime q", source: source)
        defer { SecretBytes.zero(&q) }
        if try KeyMaterial.checkRSASize(modulus: n, source: source, policy: policy) {
            throw SignetCoreError.unsupported(
                source: source,
                detail: "OpenSSH RSA private keys under 2048 bits (this one has \(KeyMaterial.bitLength(ofUnsigned: n))), even where weak keys are allowed; convert a copy to PKCS#8 with `ssh-keygen -p -m PKCS8 -N \"\" -f COPY` and read that")
        }
        let inconsistent = malformed("the RSA private key is inconsistent or damaged", source: source)
        // Every number is bounded by the modulus (already bounded) before swift-crypto computes with it.
        guard !e.isEmpty, !p.isEmpty, !q.isEmpty, !iqmp.isEmpty, e.count <= n.count, d.count <= n.count, p.count <= n.count,
            q.count <= n.count, iqmp.count <= n.count
        else { throw inconsistent }
        let key: _RSA.Signing.PrivateKey
        do {
            key = try _RSA.Signing.PrivateKey(n: n, e: e, d: d, p: p, q: q)
        } catch {
            throw inconsistent
        }
        // swift-crypto computes the CRT values itself; the stored iqmp must be the q⁻¹ mod p it
        // computed, which is the last INTEGER of the key's PKCS#1 encoding.
        var pkcs1 = Array(key.derRepresentation)
        defer { SecretBytes.zero(&pkcs1) }
        var tail: [UInt8]
        do {
            var serializer = DER.Serializer()
            try DERKey.appendUnsigned(iqmp, to: &serializer)
            tail = serializer.serializedBytes
        } catch {
            throw inconsistent
        }
        defer { SecretBytes.zero(&tail) }
        guard pkcs1.count > tail.count, pkcs1.suffix(tail.count).elementsEqual(tail) else { throw inconsistent }
        return PrivateKey(.rsa(key))
    }

    /// An SSH mpint (RFC 4251 §5: two's complement, big-endian) that must not be negative, as
    /// unsigned big-endian bytes without leading zeros (which OpenSSH also skips).
    private static func mpint(_ reader: inout SSHReader, _ name: String, source: String) throws -> [UInt8] {
        guard var raw = reader.string() else { throw malformed("truncated in the \(name)", source: source) }
        defer { SecretBytes.zero(&raw) }
        if let first = raw.first, first & 0x80 != 0 { throw malformed("the \(name) is negative", source: source) }
        return Array(raw.drop { $0 == 0 })
    }

    private static func malformed(_ detail: String, source: String) -> SignetCoreError {
        .malformed(source: source, detail: "OpenSSH private key: \(detail)")
    }

    /// A name read from the file, safe to put in a message.
    private static func quoted(_ bytes: [UInt8]) -> String {
        "\"" + PrintableText.escaped(String(decoding: bytes, as: UTF8.self), limit: 64, marksCut: true) + "\""
    }
}
