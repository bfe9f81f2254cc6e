#if canImport(CSystemCrypto)
import CSystemCrypto
#elseif canImport(CommonCrypto)
import CommonCrypto
#endif
import Crypto
import SignetCore
import SwiftASN1

/// The legacy password-based ciphers of RFC 7292 Appendix C that old PKCS#12 files (and
/// `openssl pkcs12 -legacy`) use, for decryption only: key and IV come from ``PKCS12KDF``
/// with SHA-1 and the passphrase as a BMPString; the cipher is CBC with PKCS#7 padding.
///
/// swift-crypto has neither 3DES nor RC2, so the cipher comes from the system: libcrypto on
/// Linux (RC2 from OpenSSL 3's legacy provider, loaded once into a library context of our
/// own so the process's default context is left alone), CommonCrypto on Apple platforms.
enum LegacyPKCS12Cipher: Sendable {
    /// `pbeWithSHAAnd3-KeyTripleDES-CBC` (1.2.840.113549.1.12.1.3): 24-byte key.
    case tripleDES
    /// `pbeWithSHAAnd128BitRC2-CBC` (1.2.840.113549.1.12.1.5): 16-byte key.
    case rc2With128BitKey
    /// `pbeWithSHAAnd40BitRC2-CBC` (1.2.840.113549.1.12.1.6): 5-byte key.
    case rc2With40BitKey

    /// The cipher an `AlgorithmIdentifier` names, or nil.
    init?(oid: ASN1ObjectIdentifier) {
        switch oid {
        case PKCS12OID.pbeWithSHAAnd3KeyTripleDESCBC: self = .tripleDES
        case PKCS12OID.pbeWithSHAAnd128BitRC2CBC: self = .rc2With128BitKey
        case PKCS12OID.pbeWithSHAAnd40BitRC2CBC: self = .rc2With40BitKey
        default: return nil
        }
    }

    /// The key length in bytes.
    var keyLength: Int {
        switch self {
        case .tripleDES: return 24
        case .rc2With128BitKey: return 16
        case .rc2With40BitKey: return 5
        }
    }

    /// Both ciphers have 8-byte blocks, so 8-byte IVs.
    static let blockLength = 8

    /// The name in messages.
    var name: String {
        switch self {
        case .tripleDES: return "3DES (pbeWithSHAAnd3-KeyTripleDES-CBC)"
        case .rc2With128BitKey: return "128-bit RC2 (pbeWithSHAAnd128BitRC2-CBC)"
        case .rc2With40BitKey: return "40-bit RC2 (pbeWithSHAAnd40BitRC2-CBC)"
        }
    }

    /// Decrypts `ciphertext`; `password` is the BMPString form of the passphrase that verified
    /// the MAC. `what` names the content in messages. The caller checks `iterations` and owns
    /// zeroing the result. Bad padding is reported as content that does not decrypt although
    /// the MAC verified (it was encrypted under another passphrase, or is damaged).
    func decrypt(
        _ ciphertext: [UInt8], salt: [UInt8], iterations: Int, password: [UInt8], what: String, source: String
    ) throws -> [UInt8] {
        guard !ciphertext.isEmpty, ciphertext.count % Self.blockLength == 0 else {
            throw X509Error.malformed(source: source, detail: "the \(what) encrypted with \(name) is not a whole number of 8-byte blocks")
        }
        var key = PKCS12KDF.derive(Insecure.SHA1.self, password: password, salt: salt, purpose: .key, iterations: iterations, byteCount: keyLength)
        var iv = PKCS12KDF.derive(Insecure.SHA1.self, password: password, salt: salt, purpose: .iv, iterations: iterations, byteCount: Self.blockLength)
        defer {
            SecretBytes.zero(&key)
            SecretBytes.zero(&iv)
        }
        switch run(key: key, iv: iv, ciphertext: ciphertext) {
        case .decrypted(let plaintext):
            return plaintext
        case .failed:
            throw X509Error.malformed(
                source: source,
                detail: "the \(what) does not decrypt with \(name) although the MAC verifies: it was encrypted under another passphrase, or is damaged")
        case .unavailable(let reason):
            throw X509Error.unsupported(source: source, detail: "\(what) encrypted with \(name): \(reason)")
        }
    }

    private enum Outcome {
        case decrypted([UInt8])
        case failed
        case unavailable(String)
    }

    #if canImport(CSystemCrypto)
    private func run(key: [UInt8], iv: [UInt8], ciphertext: [UInt8]) -> Outcome {
        let ciphers = LegacyCipherLibrary.shared
        let fetched: OpaquePointer?
        switch self {
        case .tripleDES: fetched = ciphers.tripleDES
        case .rc2With128BitKey: fetched = ciphers.rc2
        case .rc2With40BitKey: fetched = ciphers.rc2With40BitKey
        }
        guard let cipher = fetched else {
            return .unavailable("the system's libcrypto does not provide this cipher (RC2 needs OpenSSL 3's legacy provider)")
        }
        guard let context = EVP_CIPHER_CTX_new() else { return .unavailable("libcrypto could not allocate a cipher context") }
        defer {
            EVP_CIPHER_CTX_free(context)
            ERR_clear_error()
        }
        var output = [UInt8](repeating: 0, count: ciphertext.count + Self.blockLength)
        var total = 0
        let succeeded = key.withUnsafeBufferPointer { keyBytes in
            iv.withUnsafeBufferPointer { ivBytes in
                ciphertext.withUnsafeBufferPointer { input in
                    output.withUnsafeMutableBufferPointer { buffer -> Bool in
                        guard let base = buffer.baseAddress, let inputBase = input.baseAddress,
                            let count = Int32(exactly: input.count),
                            EVP_DecryptInit_ex2(context, cipher, keyBytes.baseAddress, ivBytes.baseAddress, nil) == 1
                        else { return false }
                        var written: Int32 = 0
                        guard EVP_DecryptUpdate(context, base, &written, inputBase, count) == 1 else { return false }
                        var finalWritten: Int32 = 0
                        guard EVP_DecryptFinal_ex(context, base + Int(written), &finalWritten) == 1 else { return false }
                        total = Int(written) + Int(finalWritten)
                        return true
                    }
                }
            }
        }
        guard succeeded, total <= output.count else {
            SecretBytes.zero(&output)
            return .failed
        }
        let plaintext = Array(output[0..<total])
        SecretBytes.zero(&output)
        return .decrypted(plaintext)
    }
    #elseif canImport(CommonCrypto)
    private func run(key: [UInt8], iv: [UInt8], ciphertext: [UInt8]) -> Outcome {
        // CommonCrypto's RC2 takes the effective key length from the key's length, which is
        // what both PKCS#12 RC2 variants use (40 and 128 bits).
        let algorithm = self == .tripleDES ? CCAlgorithm(kCCAlgorithm3DES) : CCAlgorithm(kCCAlgorithmRC2)
        let capacity = ciphertext.count + Self.blockLength
        var output = [UInt8](repeating: 0, count: capacity)
        var moved = 0
        let status = CCCrypt(
            CCOperation(kCCDecrypt), algorithm, CCOptions(kCCOptionPKCS7Padding), key, key.count, iv, ciphertext,
            ciphertext.count, &output, capacity, &moved)
        guard Int(status) == Int(kCCSuccess), moved <= output.count else {
            SecretBytes.zero(&output)
            return .failed
        }
        let plaintext = Array(output[0..<moved])
        SecretBytes.zero(&output)
        return .decrypted(plaintext)
    }
    #else
    private func run(key: [UInt8], iv: [UInt8], ciphertext: [UInt8]) -> Outcome {
        .unavailable("no 3DES or RC2 implementation on this platform")
    }
    #endif
}

#if canImport(CSystemCrypto)
/// libcrypto's three legacy ciphers, fetched once (thread-safely, as a lazily initialised
/// static) from a library context of our own that has the default and legacy providers.
/// `EVP_CIPHER` objects are reference-counted and immutable, so sharing them is safe; they
/// live as long as the process.
private final class LegacyCipherLibrary: @unchecked Sendable {
    static let shared = LegacyCipherLibrary()

    let tripleDES: OpaquePointer?
    let rc2: OpaquePointer?
    let rc2With40BitKey: OpaquePointer?

    private init() {
        // A context of our own: loading a provider into the default context explicitly would
        // stop OpenSSL from loading the default provider there implicitly for everyone else.
        guard let context = OSSL_LIB_CTX_new() else {
            tripleDES = nil
            rc2 = nil
            rc2With40BitKey = nil
            return
        }
        _ = OSSL_PROVIDER_load(context, "default")
        _ = OSSL_PROVIDER_load(context, "legacy")
        tripleDES = EVP_CIPHER_fetch(context, "DES-EDE3-CBC", nil)
        rc2 = EVP_CIPHER_fetch(context, "RC2-CBC", nil)
        rc2With40BitKey = EVP_CIPHER_fetch(context, "RC2-40-CBC", nil)
        ERR_clear_error()
    }
}
#endif
