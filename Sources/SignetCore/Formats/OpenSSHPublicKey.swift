import Crypto
import CryptoExtras

/// OpenSSH's one-line public key format (RFC 4253 §6.6, RFC 5656, RFC 8709):
/// `ssh-ed25519 AAAA… comment`.
enum OpenSSHPublicKey {
    /// The longest blob we accept (a 16384-bit RSA key needs ~2 KiB).
    static let maximumBlobSize = 16 * 1024

    static func encode(_ key: PublicKey, comment: String?) -> String {
        let blob = blob(key)
        let type = String(decoding: SSHReader(blob).peekString() ?? [], as: UTF8.self)
        let line = "\(type) \(Base64.encode(blob))"
        guard let comment, !comment.isEmpty else { return line + "\n" }
        return line + " " + comment + "\n"
    }

    /// The key's SSH wire-format blob.
    static func blob(_ key: PublicKey) -> [UInt8] {
        var blob = SSHWriter()
        switch key.storage {
        case .rsa(let k):
            let primitives = try! k.getKeyPrimitives()
            blob.string("ssh-rsa")
            blob.mpint(Array(primitives.publicExponent))
            blob.mpint(Array(primitives.modulus))
        case .p256(let k):
            blob.string("ecdsa-sha2-nistp256")
            blob.string("nistp256")
            blob.bytes(Array(k.x963Representation))
        case .p384(let k):
            blob.string("ecdsa-sha2-nistp384")
            blob.string("nistp384")
            blob.bytes(Array(k.x963Representation))
        case .ed25519(let k):
            blob.string("ssh-ed25519")
            blob.bytes(Array(k.rawRepresentation))
        }
        return blob.data
    }

    static func decode(_ line: String, source: String, policy: KeyPolicy) throws -> PublicKey {
        let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard fields.count >= 2 else {
            throw SignetCoreError.malformed(source: source, detail: "an OpenSSH public key needs a type and a base64 blob")
        }
        let type = String(fields[0])
        guard fields[1].utf8.count <= maximumBlobSize * 2, let blob = Base64.decode(fields[1]) else {
            throw SignetCoreError.malformed(
                source: source, detail: "the blob of the OpenSSH \(PrintableText.escaped(type, limit: 40, marksCut: true)) key is not valid base64")
        }
        return try decode(blob: blob, type: type, source: source, policy: policy)
    }

    /// The key in an SSH wire-format public key blob, which must be of `type` (`ssh-ed25519` …);
    /// the line decoder above and ``OpenSSHPrivateKey`` share it.
    static func decode(blob: [UInt8], type: String, source: String, policy: KeyPolicy) throws -> PublicKey {
        var reader = SSHReader(blob)
        func fail(_ detail: String) -> SignetCoreError { .malformed(source: source, detail: "OpenSSH \(type) key: \(detail)") }
        guard let blobType = reader.string() else { throw fail("the blob is truncated") }
        guard String(decoding: blobType, as: UTF8.self) == type else {
            throw fail("the type inside the blob does not match \"\(type)\"")
        }
        switch type {
        case "ssh-rsa":
            guard let e = reader.string(), let n = reader.string(), reader.isAtEnd else { throw fail("truncated or has extra data") }
            let pkcs1 = DERKey.serializeRSAPublicKey(n: n, e: e)
            return try KeyMaterial.rsaPublicKey(pkcs1: pkcs1, source: source, policy: policy)
        case "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384":
            guard let curve = reader.string(), let point = reader.string(), reader.isAtEnd else { throw fail("truncated or has extra data") }
            let is256 = type.hasSuffix("256")
            guard String(decoding: curve, as: UTF8.self) == (is256 ? "nistp256" : "nistp384") else { throw fail("curve name does not match the type") }
            return try KeyMaterial.ecPublicKey(point: point, curve: is256 ? OID.prime256v1 : OID.secp384r1, source: source)
        case "ssh-ed25519":
            guard let raw = reader.string(), reader.isAtEnd else { throw fail("truncated or has extra data") }
            return try KeyMaterial.ed25519PublicKey(raw: raw, source: source)
        default:
            throw SignetCoreError.unsupported(source: source, detail: "OpenSSH key type \(type) (supported: ssh-rsa, ecdsa-sha2-nistp256, ecdsa-sha2-nistp384, ssh-ed25519)")
        }
    }
}

/// Reads SSH wire-format fields (RFC 4251 §5) with bounds checks on every length.
struct SSHReader {
    private let data: [UInt8]
    private var offset = 0

    init(_ data: [UInt8]) { self.data = data }

    var isAtEnd: Bool { offset == data.count }

    /// How many bytes are left to read.
    var remaining: Int { data.count - offset }

    /// A big-endian `uint32`; nil when fewer than 4 bytes are left.
    mutating func uint32() -> UInt32? {
        guard data.count - offset >= 4 else { return nil }
        defer { offset += 4 }
        return data[offset..<offset + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }

    /// The next `count` bytes, without a length prefix; nil when fewer are left.
    mutating func bytes(count: Int) -> [UInt8]? {
        guard count >= 0, count <= data.count - offset else { return nil }
        defer { offset += count }
        return Array(data[offset..<offset + count])
    }

    mutating func string() -> [UInt8]? {
        guard data.count - offset >= 4 else { return nil }
        let length = data[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
        guard length <= data.count - offset - 4 else { return nil }
        defer { offset += 4 + length }
        return Array(data[offset + 4..<offset + 4 + length])
    }

    func peekString() -> [UInt8]? {
        var copy = self
        return copy.string()
    }
}

/// Writes SSH wire-format fields.
struct SSHWriter {
    private(set) var data: [UInt8] = []

    mutating func bytes(_ value: [UInt8]) {
        let length = UInt32(value.count)
        data += [UInt8(length >> 24), UInt8(length >> 16 & 0xff), UInt8(length >> 8 & 0xff), UInt8(length & 0xff)]
        data += value
    }

    mutating func string(_ value: String) { bytes(Array(value.utf8)) }

    /// An unsigned big integer as an SSH mpint: minimal, with a zero byte if the top bit is set.
    mutating func mpint(_ unsigned: [UInt8]) {
        var trimmed = Array(unsigned.drop { $0 == 0 })
        if let first = trimmed.first, first & 0x80 != 0 { trimmed.insert(0, at: 0) }
        bytes(trimmed)
    }
}
