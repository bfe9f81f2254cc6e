import SignetTestSupport
import Testing
@testable import SignetCore

/// Mutated and random inputs for every parser: any error is fine, a crash is not (a trap
/// ends the test process, so these tests fail loudly if one happens).
@Suite("parsers survive hostile input")
struct ParserFuzzTests {
    /// The fixed keys (Vectors/keys) the inputs are made from: with a fixed seed, every run
    /// mutates the same bytes, so a failure replays exactly.
    static func fixtureKeys() throws -> [PrivateKey] {
        var keys: [PrivateKey] = []
        for name in ["rsa2048.pem", "p256.pem", "p384.pem", "ed25519.pem"] {
            let decoded = try KeyDecoder.decode(KeyTestSupport.fixture(name), source: name, policy: .strict)
            keys.append(try #require(decoded.privateKeyValue, "\(name) holds no private key"))
        }
        return keys
    }

    /// The passphrases of the encrypted fixtures (Vectors/keys/README.md).
    static let fixturePassphrases = ["correct horse battery staple", "signet-test"]

    /// Valid encodings of every kind, to mutate.
    static func seeds() throws -> [[UInt8]] {
        var seeds: [[UInt8]] = []
        for key in try fixtureKeys() {
            for format in PrivateKeyFormat.allCases {
                if let encoded = try? key.encoded(as: format) { seeds.append(encoded) }
            }
            for format in PublicKeyFormat.allCases {
                if let encoded = try? key.publicKey.encoded(as: format) { seeds.append(encoded) }
            }
        }
        // Encrypted PKCS#8, PEM and DER (fixed files: a fresh encryption would have a random salt).
        seeds.append(try KeyTestSupport.fixture("p256-pbes2-aes256-sha256.pem"))
        seeds.append(try KeyTestSupport.fixture("p384-pbes2-aes192-sha512.der"))
        return seeds
    }

    static func mutate(_ input: [UInt8], using random: inout SplitMix64) -> [UInt8] {
        var bytes = input
        switch random.next() % 4 {
        case 0:  // truncate
            bytes = Array(bytes.prefix(Int(random.next() % UInt64(max(1, bytes.count)))))
        case 1:  // flip a few bytes
            for _ in 0..<(1 + random.next() % 4) where !bytes.isEmpty {
                bytes[Int(random.next() % UInt64(bytes.count))] ^= UInt8(truncatingIfNeeded: random.next() | 1)
            }
        case 2:  // insert random bytes
            let position = Int(random.next() % UInt64(bytes.count + 1))
            bytes.insert(contentsOf: (0..<(1 + random.next() % 8)).map { _ in UInt8(truncatingIfNeeded: random.next()) }, at: position)
        default:  // set a length-looking byte to an extreme value
            if bytes.count > 2 {
                bytes[Int(random.next() % UInt64(bytes.count))] = [0x00, 0x7F, 0x80, 0x84, 0xFF][Int(random.next() % 5)]
            }
        }
        return bytes
    }

    @Test("mutated keys in every format never crash the decoder")
    func mutatedKeys() throws {
        let seeds = try Self.seeds()
        let seed: UInt64 = 0x5167_6E65_7400_0001
        var random = SplitMix64(seed: seed)
        var rejected = 0
        for iteration in 0..<4000 {
            let input = Self.mutate(seeds[iteration % seeds.count], using: &random)
            do {
                let decoded = try KeyDecoder.decode(input, source: "fuzz", policy: .strict)
                if decoded.needsPassphrase {
                    for passphrase in Self.fixturePassphrases {
                        _ = try? decoded.decrypt(passphrase: SecretBytes(Array(passphrase.utf8)), source: "fuzz")
                    }
                }
            } catch {
                rejected += 1
                #expect(error is SignetCoreError && !String(describing: error).isEmpty, "seed \(seed), iteration \(iteration): \(error)")
            }
        }
        // Most mutations must be caught; if none were, the mutator is not reaching the parsers.
        #expect(rejected > 1000)
    }

    @Test("random text and bytes never crash the PEM, checksum and key parsers")
    func randomInput() {
        var random = SplitMix64(seed: 42)
        let alphabet = Array("-----BEGIN END PRIVATE KEY PUBLIC RSA EC ssh-rsa {}\":,kty crv x y n e d AAAA=+/\n\r\t\\ ".utf8)
        for _ in 0..<3000 {
            let length = Int(random.next() % 300)
            let text = (0..<length).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }
            _ = try? KeyDecoder.decode(text, source: "random", policy: .strict)
            let string = String(decoding: text, as: UTF8.self)
            _ = try? PEM.decode(string, source: "random")
            for line in string.split(separator: "\n") { _ = ChecksumLine.parse(line) }
            let binary = (0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            _ = try? KeyDecoder.decode(binary, source: "random", policy: .strict)
        }
    }

    @Test("random signatures never crash any verifier")
    func randomSignatures() throws {
        var random = SplitMix64(seed: 7)
        let message = Array("message".utf8)
        for key in try Self.fixtureKeys().map(\.publicKey) {
            for algorithm in SignatureAlgorithm.fitting(key.kind) {
                let verifier = try PublicKeyVerifier(key: key, algorithm: algorithm)
                for length in [0, 1, 8, 63, 64, 65, 70, 71, 72, 96, 102, 104, 255, 256, 257, 1000] {
                    let signature = (0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) }
                    // Wrong length, not DER, or not valid: always "does not verify", never another error.
                    let error = try #require(throws: SignetCoreError.self, "seed 7, \(algorithm.rawValue), \(length) random bytes") {
                        try verifier.verify(signature: signature, message: message)
                    }
                    #expect(error.code == "signatureInvalid", "seed 7, \(algorithm.rawValue), \(length) random bytes: \(error)")
                }
            }
        }
    }
}
