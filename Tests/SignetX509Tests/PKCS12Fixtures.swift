import Crypto
import Foundation
import SignetCore
import SignetTestSupport
@testable import SignetX509
import SwiftASN1
import Testing
import X509

/// One case of `Vectors/pkcs12-kdf.json` (RFC 7292 Appendix B.2; its `source` says where each
/// comes from).
struct PKCS12KDFVector: Decodable, Sendable, CustomTestStringConvertible {
    var name: String
    var origin: String
    var hash: String
    var password: String
    var passwordBMP: String
    var salt: String
    var id: Int
    var iterations: Int
    var output: String

    var testDescription: String { name }

    static func loadAll() throws -> [PKCS12KDFVector] {
        try TestVectors.decode(VectorFile.self, "pkcs12-kdf.json", in: .module).tests
    }

    private struct VectorFile: Decodable {
        var tests: [PKCS12KDFVector]
    }

    func derive() throws -> [UInt8] {
        let password = try TestVectors.bytes(hex: passwordBMP)
        let salt = try TestVectors.bytes(hex: self.salt)
        let count = output.count / 2
        let purpose = try #require(PKCS12KDF.Purpose(rawValue: UInt8(id)))
        switch hash {
        case "SHA-1": return PKCS12KDF.derive(Insecure.SHA1.self, password: password, salt: salt, purpose: purpose, iterations: iterations, byteCount: count)
        case "SHA-256": return PKCS12KDF.derive(SHA256.self, password: password, salt: salt, purpose: purpose, iterations: iterations, byteCount: count)
        case "SHA-384": return PKCS12KDF.derive(SHA384.self, password: password, salt: salt, purpose: purpose, iterations: iterations, byteCount: count)
        case "SHA-512": return PKCS12KDF.derive(SHA512.self, password: password, salt: salt, purpose: purpose, iterations: iterations, byteCount: count)
        default: throw VectorError(description: "unknown hash \(hash) in \(name)")
        }
    }
}

/// The key types the interop tests make with openssl.
enum P12KeyType: String, CaseIterable, Sendable {
    case rsa, p256, ed25519

    var opensslArguments: [String] {
        switch self {
        case .rsa: return ["-newkey", "rsa:2048"]
        case .p256: return ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"]
        case .ed25519: return ["-newkey", "ed25519"]
        }
    }
}

/// A way `openssl pkcs12 -export` writes a file.
struct P12Form: Sendable, CustomTestStringConvertible {
    var testDescription: String
    var options: [String]

    static let all: [P12Form] = [
        P12Form(testDescription: "OpenSSL 3 default (PBES2 AES-256-CBC, HMAC-SHA256)", options: []),
        P12Form(testDescription: "-legacy (3DES key, 40-bit RC2 certificates, HMAC-SHA1)", options: ["-legacy"]),
        P12Form(testDescription: "-legacy with 128-bit RC2 certificates", options: ["-legacy", "-certpbe", "PBE-SHA1-RC2-128"]),
        P12Form(testDescription: "-legacy with 3DES certificates", options: ["-legacy", "-certpbe", "PBE-SHA1-3DES"]),
        P12Form(testDescription: "unencrypted bags, HMAC-SHA512", options: ["-keypbe", "NONE", "-certpbe", "NONE", "-macalg", "SHA512"]),
    ]
}

/// A scratch folder where openssl makes keys, certificates and .p12 files.
struct P12Workshop {
    static let passphrase = "correct horse ✓"
    static var secret: SecretBytes { SecretBytes(Array(passphrase.utf8)) }

    let folder: TemporaryFolder

    init() throws {
        folder = try TemporaryFolder(prefix: "signet-p12")
        try folder.write("pass.txt", Self.passphrase + "\n")
    }

    /// Runs openssl in the folder and requires it to succeed.
    @discardableResult
    func openssl(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> RunResult {
        let result = try ProcessRunner.run("/usr/bin/env", ["openssl"] + arguments, in: folder.url)
        try #require(result.status == 0, "openssl \(arguments.joined(separator: " ")): \(result)", sourceLocation: sourceLocation)
        return result
    }

    /// `NAME.key` (PKCS#8 PEM) and `NAME.pem`, self-signed or issued by `issuer`'s key.
    func makeCertificate(_ name: String, _ arguments: [String], issuer: String? = nil) throws {
        guard let issuer else {
            try openssl(["req", "-x509"] + arguments + ["-nodes", "-keyout", "\(name).key", "-out", "\(name).pem", "-subj", "/CN=\(name)", "-days", "30"])
            return
        }
        try openssl(["req", "-new"] + arguments + ["-nodes", "-keyout", "\(name).key", "-out", "\(name).csr", "-subj", "/CN=\(name)"])
        try openssl([
            "x509", "-req", "-in", "\(name).csr", "-CA", "\(issuer).pem", "-CAkey", "\(issuer).key", "-set_serial", "2",
            "-days", "30", "-out", "\(name).pem",
        ])
    }

    /// A CA (P-256) and a leaf of `type` it issued: `ca.*`, `leaf.*`.
    func makeChain(leaf type: P12KeyType) throws {
        try makeCertificate("ca", P12KeyType.p256.opensslArguments)
        try makeCertificate("leaf", type.opensslArguments, issuer: "ca")
    }

    func certificate(_ name: String) throws -> Certificate {
        try openssl(["x509", "-in", "\(name).pem", "-outform", "DER", "-out", "\(name).der"])
        return try Certificate(derEncoded: try folder.read("\(name).der"))
    }

    func privateKey(_ name: String) throws -> PrivateKey {
        guard case .privateKey(let key) = try KeyDecoder.decode(path: folder.file("\(name).key")) else {
            throw VectorError(description: "\(name).key holds no private key")
        }
        return key
    }

    /// Exports `leaf.key` and `leaf.pem` (plus `extra`) to `name` with openssl; returns its bytes.
    func export(_ name: String, _ extra: [String] = []) throws -> [UInt8] {
        try openssl(["pkcs12", "-export", "-inkey", "leaf.key", "-in", "leaf.pem", "-passout", "file:pass.txt", "-out", name] + extra)
        return try folder.read(name)
    }

    func decode(_ bytes: [UInt8], source: String = "bundle.p12", policy: KeyPolicy = .strict) throws -> PKCS12Contents {
        try PKCS12.decode(bytes, passphrase: Self.secret, source: source, policy: policy)
    }
}
