#if canImport(CSystemCrypto)
import CSystemCrypto
#elseif canImport(Security)
import Foundation
import Security
#endif
import Crypto
import CryptoExtras
import SignetCore

/// RSAES-OAEP with SHA-256, MGF1-SHA-256 and a label (RFC 8017 §7.1), which age's `ssh-rsa`
/// stanzas use with the label `age-encryption.org/v1/ssh-rsa`.
///
/// swift-crypto's OAEP takes no label, so the encoding (EME-OAEP) is built here, exactly per
/// RFC 8017 §7.1.1 and §7.1.2, on raw RSA operations that come from maintained libraries:
/// the private operation (RSADP) is swift-crypto's RFC 9474 blind-signing primitive, a raw
/// `m^d mod n` that also checks its own result; swift-crypto has no raw public operation, so
/// RSAEP comes from the system (libcrypto's `RSA_NO_PADDING` on Linux, Security's
/// `rsaEncryptionRaw` on Apple platforms). Decoding runs in constant time up to the single
/// verdict, so a failure says nothing about which check failed.
enum RSAOAEP {
    /// The SHA-256 output size, hLen.
    static let hashCount = 32

    /// Why an operation failed; the callers turn it into their own error.
    enum Failure: Error, Equatable {
        /// The message is longer than k − 2·hLen − 2 bytes.
        case messageTooLong
        /// The ciphertext does not decrypt (any reason: one error, as RFC 8017 requires).
        case decryptionError
        /// The key cannot be used for the raw operation.
        case unusableKey(String)
    }

    /// The ciphertext of `message` for `publicKey`, under `label`.
    static func encrypt(
        _ message: [UInt8], label: [UInt8], publicKey: _RSA.Signing.PublicKey
    ) throws(Failure) -> [UInt8] {
        let k = (publicKey.keySizeInBits + 7) / 8
        guard message.count <= k - 2 * hashCount - 2 else { throw Failure.messageTooLong }
        var seed = [UInt8](repeating: 0, count: hashCount)
        var generator = SystemRandomNumberGenerator()
        for index in seed.indices { seed[index] = generator.next() }
        var encoded = encode(message, label: label, seed: seed, k: k)
        defer {
            SecretBytes.zero(&encoded)
            SecretBytes.zero(&seed)
        }
        return try rsaep(encoded, publicKey: publicKey)
    }

    /// EME-OAEP encoding (RFC 8017 §7.1.1 step 2): `0x00 ‖ maskedSeed ‖ maskedDB`, k bytes.
    /// `seed` is hLen random bytes; it is a parameter so that tests can pin it.
    static func encode(_ message: [UInt8], label: [UInt8], seed: [UInt8], k: Int) -> [UInt8] {
        let labelHash = Array(SHA256.hash(data: label))
        var db = labelHash
        db += [UInt8](repeating: 0, count: k - message.count - 2 * hashCount - 2)
        db.append(0x01)
        db += message
        let dbMask = mgf1(seed, count: k - hashCount - 1)
        for index in db.indices { db[index] ^= dbMask[index] }
        let seedMask = mgf1(db, count: hashCount)
        var encoded = [UInt8](repeating: 0, count: 1)
        encoded.reserveCapacity(k)
        for index in 0..<hashCount { encoded.append(seed[index] ^ seedMask[index]) }
        encoded += db
        SecretBytes.zero(&db)
        return encoded
    }

    /// The message in `ciphertext`, decrypted with `privateKey` under `label`.
    ///
    /// - Throws: ``Failure/decryptionError`` for a ciphertext of the wrong length, one not
    ///   below the modulus, or one that does not decode: one error for all of them.
    static func decrypt(
        _ ciphertext: [UInt8], label: [UInt8], privateKey: _RSA.Signing.PrivateKey
    ) throws(Failure) -> SecretBytes {
        try decrypt(ciphertext, label: label, rawKey: try rawKey(privateKey))
    }

    /// ``decrypt(_:label:privateKey:)`` with the raw-operation key made once by ``rawKey(_:)``.
    static func decrypt(_ ciphertext: [UInt8], label: [UInt8], rawKey: RawKey) throws(Failure) -> SecretBytes {
        let k = (rawKey.keySizeInBits + 7) / 8
        // RFC 8017 §7.1.2 step 1: the lengths, before any private-key operation.
        guard ciphertext.count == k, k >= 2 * hashCount + 2 else { throw Failure.decryptionError }
        var encoded = try rsadp(ciphertext, rawKey: rawKey)
        defer { SecretBytes.zero(&encoded) }
        guard let message = decode(encoded, label: label) else { throw Failure.decryptionError }
        return message
    }

    /// The key of the raw private operation: swift-crypto's RFC 9474 blind-signing key.
    typealias RawKey = _RSA.BlindSigning.PrivateKey<SHA384>

    /// The raw-operation key of `privateKey`, made once per identity.
    static func rawKey(_ privateKey: _RSA.Signing.PrivateKey) throws(Failure) -> RawKey {
        do {
            return try RawKey(unsafeDERRepresentation: privateKey.derRepresentation)
        } catch {
            throw Failure.unusableKey("the RSA private key cannot be used for decryption (\(error))")
        }
    }

    /// EME-OAEP decoding (RFC 8017 §7.1.2 step 3) of the k-byte `encoded`, or nil. Every check
    /// is folded into one mask without branching on secret data; only the verdict and, once
    /// it is good, the message length come out.
    static func decode(_ encoded: [UInt8], label: [UInt8]) -> SecretBytes? {
        let k = encoded.count
        guard k >= 2 * hashCount + 2 else { return nil }
        let labelHash = Array(SHA256.hash(data: label))
        let maskedSeed = Array(encoded[1...hashCount])
        var db = Array(encoded[(hashCount + 1)...])
        let seedMask = mgf1(db, count: hashCount)
        var seed = [UInt8](repeating: 0, count: hashCount)
        for index in 0..<hashCount { seed[index] = maskedSeed[index] ^ seedMask[index] }
        let dbMask = mgf1(seed, count: db.count)
        for index in db.indices { db[index] ^= dbMask[index] }
        defer {
            SecretBytes.zero(&db)
            SecretBytes.zero(&seed)
        }

        // All-ones (0xFF…) when the check holds, zero when it does not.
        var good = isZeroMask(UInt(encoded[0]))
        var difference: UInt = 0
        for index in 0..<hashCount { difference |= UInt(db[index] ^ labelHash[index]) }
        good &= isZeroMask(difference)
        // After lHash: zeros, then 0x01, then the message. Find the 0x01 without branching.
        var lookingForOne: UInt = ~0
        var separator: UInt = 0
        var invalid: UInt = 0
        for index in hashCount..<db.count {
            let byte = UInt(db[index])
            let isOne = isZeroMask(byte ^ 1)
            let isZero = isZeroMask(byte)
            separator |= lookingForOne & isOne & UInt(index)
            invalid |= lookingForOne & ~isOne & ~isZero
            lookingForOne &= ~isOne
        }
        good &= ~lookingForOne & ~invalid
        guard good == ~0 else { return nil }
        return SecretBytes(db[(Int(separator) + 1)...])
    }

    /// All ones when `value` is zero, else zero, without a branch.
    @inline(__always)
    static func isZeroMask(_ value: UInt) -> UInt {
        // (value | -value) has its top bit set exactly when value != 0.
        let nonZeroBit = (value | (0 &- value)) >> (UInt.bitWidth - 1)
        return nonZeroBit &- 1
    }

    /// MGF1 with SHA-256 (RFC 8017 §B.2.1).
    static func mgf1(_ seed: [UInt8], count: Int) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(count + hashCount)
        var counter: UInt32 = 0
        while output.count < count {
            var hasher = SHA256()
            hasher.update(data: seed)
            hasher.update(data: [UInt8(counter >> 24), UInt8(counter >> 16 & 0xFF), UInt8(counter >> 8 & 0xFF), UInt8(counter & 0xFF)])
            output += hasher.finalize()
            counter += 1
        }
        output.removeLast(output.count - count)
        return output
    }

    /// RSADP (RFC 8017 §5.1.2): `c^d mod n`, k bytes. swift-crypto's blind-signature operation
    /// is exactly that raw private-key operation (RFC 9474 §4.3), refuses c ≥ n, and verifies
    /// its result against the public key before returning it.
    static func rsadp(_ ciphertext: [UInt8], rawKey: RawKey) throws(Failure) -> [UInt8] {
        do {
            return Array(try rawKey.blindSignature(for: ciphertext).rawRepresentation)
        } catch {
            // c ≥ n, or a fault: either way, a decryption error.
            throw Failure.decryptionError
        }
    }

    /// RSAEP (RFC 8017 §5.1.1): `m^e mod n` of the k-byte `encoded` (which starts with 0x00,
    /// so it is below n), k bytes.
    static func rsaep(_ encoded: [UInt8], publicKey: _RSA.Signing.PublicKey) throws(Failure) -> [UInt8] {
        #if canImport(CSystemCrypto)
        let spki = Array(publicKey.derRepresentation)
        let key: OpaquePointer? = spki.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_PUBKEY(nil, &cursor, buffer.count)
        }
        guard let key else { throw Failure.unusableKey("libcrypto does not read the RSA public key") }
        defer { EVP_PKEY_free(key) }
        guard let context = EVP_PKEY_CTX_new(key, nil) else { throw Failure.unusableKey("libcrypto: no context") }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_encrypt_init(context) == 1, EVP_PKEY_CTX_set_rsa_padding(context, RSA_NO_PADDING) == 1 else {
            ERR_clear_error()
            throw Failure.unusableKey("libcrypto refuses a raw RSA operation with this key")
        }
        var output = [UInt8](repeating: 0, count: encoded.count)
        var outputCount = output.count
        let status = output.withUnsafeMutableBufferPointer { out in
            encoded.withUnsafeBufferPointer { input in
                EVP_PKEY_encrypt(context, out.baseAddress, &outputCount, input.baseAddress, input.count)
            }
        }
        guard status == 1, outputCount == encoded.count else {
            ERR_clear_error()
            throw Failure.unusableKey("libcrypto's raw RSA operation failed")
        }
        return output
        #elseif canImport(Security)
        let attributes: [CFString: Any] = [kSecAttrKeyType: kSecAttrKeyTypeRSA, kSecAttrKeyClass: kSecAttrKeyClassPublic]
        guard let key = SecKeyCreateWithData(publicKey.pkcs1DERRepresentation as CFData, attributes as CFDictionary, nil) else {
            throw Failure.unusableKey("Security does not read the RSA public key")
        }
        guard let output = SecKeyCreateEncryptedData(key, .rsaEncryptionRaw, Data(encoded) as CFData, nil) as Data?,
            output.count == encoded.count
        else { throw Failure.unusableKey("Security's raw RSA operation failed") }
        return Array(output)
        #else
        throw Failure.unusableKey("no raw RSA public operation on this platform")
        #endif
    }
}
