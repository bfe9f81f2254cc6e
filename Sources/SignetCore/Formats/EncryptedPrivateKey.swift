import Crypto
import CryptoExtras
import SwiftASN1

/// A PKCS#8 `EncryptedPrivateKeyInfo` protected with PBES2 (RFC 8018): PBKDF2 with an HMAC
/// PRF, and AES-CBC. This is what `openssl pkcs8 -topk8 -v2 aes-256-cbc` writes; we write it
/// with HMAC-SHA256, AES-256-CBC and a higher iteration count.
public struct EncryptedPrivateKey: Sendable {
    /// PBKDF2 iterations we write: OWASP's 2023 figure for PBKDF2-HMAC-SHA256.
    public static let defaultIterations = 600_000
    /// The most iterations we accept on reading, so a hostile file cannot pin the CPU for long.
    public static let maximumIterations = 10_000_000

    let salt: [UInt8]
    /// The PBKDF2 iteration count the key (or content) was encrypted with; decrypting costs
    /// that many HMAC rounds, so callers bounding total work can add it up.
    public let iterations: Int
    let prf: KDF.Insecure.PBKDF2.HashFunction
    let keyLength: Int
    let iv: [UInt8]
    let ciphertext: [UInt8]

    /// Parses the DER structure; `source` names the input in errors.
    public init(der: [UInt8], source: String) throws {
        self = try KeyMaterial.parsing("encrypted PKCS#8 private key", source: source) { try Self.parse(der, source: source) }
    }

    private init(salt: [UInt8], iterations: Int, prf: KDF.Insecure.PBKDF2.HashFunction, keyLength: Int, iv: [UInt8], ciphertext: [UInt8]) {
        self.salt = salt
        self.iterations = iterations
        self.prf = prf
        self.keyLength = keyLength
        self.iv = iv
        self.ciphertext = ciphertext
    }

    /// PBES2-encrypted content that is not a private key, such as a PKCS#12 `encryptedData`
    /// (RFC 7292), which carries the same PBES2 parameters as an `EncryptedPrivateKeyInfo`.
    /// `algorithmIdentifier` is the DER `AlgorithmIdentifier` (PBES2 and its parameters) and
    /// `ciphertext` the encrypted bytes; decrypt with ``decryptContent(passphrase:source:)``.
    public init(pbes2AlgorithmIdentifier algorithmIdentifier: [UInt8], ciphertext: [UInt8], source: String) throws {
        self = try KeyMaterial.parsing("PBES2 algorithm identifier", source: source) { () throws -> EncryptedPrivateKey in
            let algorithm = try DERKey.parseAlgorithm(try DER.parse(algorithmIdentifier))
            return try Self.parsePBES2(algorithm, ciphertext: ciphertext, source: source)
        }
    }

    private static func parse(_ der: [UInt8], source: String) throws -> EncryptedPrivateKey {
        let root = try DER.parse(der)
        return try DER.sequence(root, identifier: .sequence) { nodes in
            guard let algorithmNode = nodes.next() else { throw ASN1Error.invalidASN1Object(reason: "empty") }
            let algorithm = try DERKey.parseAlgorithm(algorithmNode)
            let ciphertext = try ASN1OctetString(derEncoded: &nodes)
            return try parsePBES2(algorithm, ciphertext: Array(ciphertext.bytes), source: source)
        }
    }

    /// The PBES2 parameters of `algorithm` (RFC 8018 A.4): PBKDF2 with an HMAC PRF, AES-CBC.
    private static func parsePBES2(_ algorithm: DERKey.AlgorithmIdentifier, ciphertext: [UInt8], source: String) throws -> EncryptedPrivateKey {
        guard algorithm.oid == OID.pbes2 else {
            throw SignetCoreError.unsupported(source: source, detail: "key encryption with \(OID.describe(algorithm.oid)) (only PBES2 is supported)")
        }
        guard let parameters = algorithm.parameters else { throw ASN1Error.invalidASN1Object(reason: "no PBES2 parameters") }
        return try DER.sequence(parameters, identifier: .sequence) { pbes2 in
            guard let kdfNode = pbes2.next(), let schemeNode = pbes2.next() else {
                throw ASN1Error.invalidASN1Object(reason: "incomplete PBES2 parameters")
            }
            let kdf = try DERKey.parseAlgorithm(kdfNode)
            guard kdf.oid == OID.pbkdf2, let kdfParameters = kdf.parameters else {
                throw SignetCoreError.unsupported(source: source, detail: "\(OID.describe(kdf.oid)) (only PBKDF2 is supported)")
            }
            let (salt, iterations, keyLength, prf) = try parsePBKDF2(kdfParameters, source: source)
            let scheme = try DERKey.parseAlgorithm(schemeNode)
            let expectedKeyLength: Int
            switch scheme.oid {
            case OID.aes128CBC: expectedKeyLength = 16
            case OID.aes192CBC: expectedKeyLength = 24
            case OID.aes256CBC: expectedKeyLength = 32
            default:
                throw SignetCoreError.unsupported(source: source, detail: "key encryption cipher \(OID.describe(scheme.oid)) (AES-CBC is supported)")
            }
            guard let ivNode = scheme.parameters else { throw ASN1Error.invalidASN1Object(reason: "no IV") }
            let iv = try ASN1OctetString(derEncoded: ivNode)
            guard iv.bytes.count == 16 else { throw ASN1Error.invalidASN1Object(reason: "IV is not 16 bytes") }
            if let keyLength, keyLength != expectedKeyLength {
                throw ASN1Error.invalidASN1Object(reason: "PBKDF2 key length does not fit the cipher")
            }
            return EncryptedPrivateKey(
                salt: salt, iterations: iterations, prf: prf, keyLength: expectedKeyLength, iv: Array(iv.bytes),
                ciphertext: ciphertext)
        }
    }

    private static func parsePBKDF2(_ node: ASN1Node, source: String) throws -> ([UInt8], Int, Int?, KDF.Insecure.PBKDF2.HashFunction) {
        try DER.sequence(node, identifier: .sequence) { nodes in
            let salt = try ASN1OctetString(derEncoded: &nodes)
            let iterations = try Int(derEncoded: &nodes)
            var keyLength: Int?
            var prf = KDF.Insecure.PBKDF2.HashFunction.insecureSHA1
            while let next = nodes.next() {
                if next.identifier == .integer {
                    keyLength = try Int(derEncoded: next)
                } else {
                    let algorithm = try DERKey.parseAlgorithm(next)
                    switch algorithm.oid {
                    case OID.hmacWithSHA1: prf = .insecureSHA1
                    case OID.hmacWithSHA256: prf = .sha256
                    case OID.hmacWithSHA384: prf = .sha384
                    case OID.hmacWithSHA512: prf = .sha512
                    default: throw SignetCoreError.unsupported(source: source, detail: "PBKDF2 with \(OID.describe(algorithm.oid))")
                    }
                }
            }
            guard (1...maximumIterations).contains(iterations) else {
                throw SignetCoreError.unsupported(source: source, detail: "PBKDF2 iteration count \(iterations) (accepted: 1 to \(maximumIterations))")
            }
            guard (1...1024).contains(salt.bytes.count) else { throw ASN1Error.invalidASN1Object(reason: "salt length") }
            return (Array(salt.bytes), iterations, keyLength, prf)
        }
    }

    /// Decrypts to the inner PKCS#8 DER. A wrong passphrase is reported as such.
    public func decrypt(passphrase: SecretBytes, source: String) throws -> [UInt8] {
        var bytes = try decryptContent(passphrase: passphrase, source: source)
        // Padding alone passes by chance 1 time in 256: the content must parse too.
        guard (try? DERKey.parsePrivateKeyInfo(bytes)) != nil else {
            SecretBytes.zero(&bytes)
            throw SignetCoreError.wrongPassphrase(source: source)
        }
        return bytes
    }

    /// Decrypts to the plaintext, whatever it is: the caller checks that it parses (padding
    /// alone passes by chance 1 time in 256). Wrong padding is reported as a wrong passphrase.
    /// The caller owns zeroing the result.
    public func decryptContent(passphrase: SecretBytes, source: String) throws -> [UInt8] {
        do {
            let key = try passphrase.withUnsafeBytes { bytes in
                try KDF.Insecure.PBKDF2.deriveKey(
                    from: Array(bytes), salt: salt, using: prf, outputByteCount: keyLength, unsafeUncheckedRounds: iterations)
            }
            let plaintext = try AES._CBC.decrypt(ciphertext, using: key, iv: AES._CBC.IV(ivBytes: iv))
            return Array(plaintext)
        } catch {
            throw SignetCoreError.wrongPassphrase(source: source)
        }
    }

    /// Encrypts a PKCS#8 DER private key under `passphrase` and returns the DER
    /// `EncryptedPrivateKeyInfo`.
    public static func encrypt(pkcs8 der: [UInt8], passphrase: SecretBytes, iterations: Int = defaultIterations) throws -> [UInt8] {
        let (algorithm, ciphertext) = try encryptContent(der, passphrase: passphrase, iterations: iterations)
        var serializer = DER.Serializer()
        try! serializer.appendConstructedNode(identifier: .sequence) { outer in
            outer.serializeRawBytes(algorithm)
            try outer.serialize(ASN1OctetString(contentBytes: ciphertext[...]))
        }
        return serializer.serializedBytes
    }

    /// Encrypts any content under `passphrase` with PBES2 (PBKDF2-HMAC-SHA256 with a random
    /// 16-byte salt and `iterations`, AES-256-CBC with a random IV), as PKCS#12 `encryptedData`
    /// needs it: returns the DER `AlgorithmIdentifier` (PBES2 and its parameters) and the
    /// ciphertext. The passphrase's bytes are used as they are (UTF-8 for text), as OpenSSL does.
    public static func encryptContent(
        _ plaintext: [UInt8], passphrase: SecretBytes, iterations: Int = defaultIterations
    ) throws -> (algorithmIdentifier: [UInt8], ciphertext: [UInt8]) {
        guard !passphrase.isEmpty else { throw SignetCoreError.invalidArgument(detail: "the passphrase is empty") }
        guard (1...maximumIterations).contains(iterations) else {
            throw SignetCoreError.invalidArgument(detail: "PBKDF2 iteration count \(iterations) (accepted: 1 to \(maximumIterations))")
        }
        let salt = RandomBytes.make(16)
        let iv = RandomBytes.make(16)
        let ciphertext: [UInt8]
        do {
            let key = try passphrase.withUnsafeBytes { bytes in
                try KDF.Insecure.PBKDF2.deriveKey(
                    from: Array(bytes), salt: salt, using: .sha256, outputByteCount: 32, unsafeUncheckedRounds: iterations)
            }
            ciphertext = Array(try AES._CBC.encrypt(plaintext, using: key, iv: AES._CBC.IV(ivBytes: iv)))
        } catch {
            throw SignetCoreError.cryptoFailure(detail: "PBES2 encryption: \(error)")
        }
        var serializer = DER.Serializer()
        try! serializer.appendConstructedNode(identifier: .sequence) { algorithm in
            try algorithm.serialize(OID.pbes2)
            try algorithm.appendConstructedNode(identifier: .sequence) { pbes2 in
                try pbes2.appendConstructedNode(identifier: .sequence) { kdf in
                    try kdf.serialize(OID.pbkdf2)
                    try kdf.appendConstructedNode(identifier: .sequence) { params in
                        try params.serialize(ASN1OctetString(contentBytes: salt[...]))
                        try params.serialize(iterations)
                        try DERKey.appendAlgorithm(OID.hmacWithSHA256, parameters: nil, null: true, to: &params)
                    }
                }
                try pbes2.appendConstructedNode(identifier: .sequence) { scheme in
                    try scheme.serialize(OID.aes256CBC)
                    try scheme.serialize(ASN1OctetString(contentBytes: iv[...]))
                }
            }
        }
        return (serializer.serializedBytes, ciphertext)
    }
}
