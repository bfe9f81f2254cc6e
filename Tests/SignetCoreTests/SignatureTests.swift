import Foundation
import SignetCore
import SignetTestSupport
import Testing

/// One key type with one algorithm that fits it.
struct SigningCase: Sendable, CustomTestStringConvertible {
    let type: KeyGenerationType
    let algorithm: SignatureAlgorithm

    var testDescription: String { "\(type.rawValue) \(algorithm.rawValue)" }

    var key: PrivateKey { SharedTestKeys.key(type) }

    /// Every fast key type with every algorithm ``SignatureAlgorithm/fitting(_:)`` offers it.
    static let all: [SigningCase] = KeyTestSupport.fastTypes.flatMap { type in
        SignatureAlgorithm.fitting(KeyTestSupport.kind(of: type)).map { SigningCase(type: type, algorithm: $0) }
    }

    /// Every fast key type with every algorithm that does not fit it (MACs included).
    static let misfits: [SigningCase] = KeyTestSupport.fastTypes.flatMap { type in
        SignatureAlgorithm.allCases.filter { !$0.fits(KeyTestSupport.kind(of: type)) }.map { SigningCase(type: type, algorithm: $0) }
    }
}

@Suite struct SignatureTests {
    @Test("fitting algorithms per key kind")
    func fitting() {
        #expect(SignatureAlgorithm.fitting(.rsa(bits: 2048)) == [.rsaPKCS1v15SHA256, .rsaPKCS1v15SHA512, .rsaPSSSHA256, .rsaPSSSHA512])
        #expect(SignatureAlgorithm.fitting(.rsa(bits: 4096)) == SignatureAlgorithm.fitting(.rsa(bits: 2048)))
        #expect(SignatureAlgorithm.fitting(.p256) == [.ecdsaP256SHA256])
        #expect(SignatureAlgorithm.fitting(.p384) == [.ecdsaP384SHA384])
        #expect(SignatureAlgorithm.fitting(.ed25519) == [.ed25519])
        #expect(SigningCase.all.count == 7)
        for kind in [KeyKind.rsa(bits: 2048), .p256, .p384, .ed25519] {
            #expect(!SignatureAlgorithm.hmacSHA256.fits(kind) && !SignatureAlgorithm.hmacSHA512.fits(kind))
            #expect(kind.defaultAlgorithm.fits(kind))
        }
    }

    @Test("sign then verify", arguments: SigningCase.all)
    func signAndVerify(_ c: SigningCase) async throws {
        let signer = try SoftwareSigner(key: c.key, algorithm: c.algorithm)
        #expect(signer.algorithm == c.algorithm)
        #expect(signer.publicKey == c.key.publicKey)
        let signature = try await signer.sign(message: KeyTestSupport.message)
        let verifier = try PublicKeyVerifier(key: c.key.publicKey, algorithm: c.algorithm)
        #expect(verifier.algorithm == c.algorithm)
        try verifier.verify(signature: signature, message: KeyTestSupport.message)

        // Hash-then-sign algorithms: the digest path and the message path agree.
        if let digestAlgorithm = c.algorithm.digest {
            let digest = digestAlgorithm.hash(KeyTestSupport.message)
            try verifier.verify(signature: signature, digest: digest)
            let viaDigest = try await signer.sign(digest: digest)
            try verifier.verify(signature: viaDigest, message: KeyTestSupport.message)
        }
    }

    @Test("a changed message does not verify", arguments: SigningCase.all)
    func tamperedMessage(_ c: SigningCase) async throws {
        let signature = try await SoftwareSigner(key: c.key, algorithm: c.algorithm).sign(message: KeyTestSupport.message)
        let verifier = try PublicKeyVerifier(key: c.key.publicKey, algorithm: c.algorithm)
        for index in [0, KeyTestSupport.message.count / 2, KeyTestSupport.message.count - 1] {
            let changed = TestBytes.flipped(KeyTestSupport.message, at: index)
            let error = try KeyTestSupport.thrown { try verifier.verify(signature: signature, message: changed) }
            #expect(error.code == "signatureInvalid", "message byte \(index)")
            #expect(error.category == .checkFailed)
        }
        let longer = try KeyTestSupport.thrown { try verifier.verify(signature: signature, message: KeyTestSupport.message + [0]) }
        #expect(longer.code == "signatureInvalid")
    }

    @Test("a changed signature does not verify", arguments: SigningCase.all)
    func tamperedSignature(_ c: SigningCase) async throws {
        let signature = try await SoftwareSigner(key: c.key, algorithm: c.algorithm).sign(message: KeyTestSupport.message)
        let verifier = try PublicKeyVerifier(key: c.key.publicKey, algorithm: c.algorithm)
        for index in [0, 1, signature.count / 2, signature.count - 1] {
            let changed = TestBytes.flipped(signature, at: index)
            let error = try KeyTestSupport.thrown { try verifier.verify(signature: changed, message: KeyTestSupport.message) }
            #expect(error.code == "signatureInvalid", "signature byte \(index) of \(signature.count)")
        }
        for wrongLength in [Array(signature.dropLast()), signature + [0], []] {
            let error = try KeyTestSupport.thrown { try verifier.verify(signature: wrongLength, message: KeyTestSupport.message) }
            #expect(error.code == "signatureInvalid", "signature of \(wrongLength.count) bytes")
        }
    }

    @Test("another key of the same type does not verify", arguments: KeyTestSupport.fastTypes)
    func otherKey(type: KeyGenerationType) async throws {
        let signature = try await SoftwareSigner(key: SharedTestKeys.key(type)).sign(message: KeyTestSupport.message)
        let stranger = try PrivateKey.generate(type).publicKey
        let error = try KeyTestSupport.thrown { try PublicKeyVerifier(key: stranger).verify(signature: signature, message: KeyTestSupport.message) }
        #expect(error.code == "signatureInvalid")
    }

    @Test("an algorithm that does not fit the key is refused", arguments: SigningCase.misfits)
    func algorithmMismatch(_ c: SigningCase) throws {
        let kind = c.key.kind
        let signerError = try KeyTestSupport.thrown { try SoftwareSigner(key: c.key, algorithm: c.algorithm) }
        let verifierError = try KeyTestSupport.thrown { try PublicKeyVerifier(key: c.key.publicKey, algorithm: c.algorithm) }
        for error in [signerError, verifierError] {
            guard case .algorithmMismatch(let algorithm, let keyDescription, let hint) = error else {
                Issue.record("expected .algorithmMismatch, got \(error)")
                continue
            }
            #expect(algorithm == c.algorithm.rawValue)
            #expect(keyDescription == kind.description)
            for fitting in SignatureAlgorithm.fitting(kind) { #expect(hint.contains(fitting.rawValue)) }
            #expect(error.description.contains(c.algorithm.rawValue))
            #expect(error.category == .usage)
        }
    }

    @Test("with no algorithm, each key uses its default", arguments: KeyTestSupport.fastTypes)
    func defaultAlgorithm(type: KeyGenerationType) throws {
        let key = SharedTestKeys.key(type)
        let expected: SignatureAlgorithm
        switch type {
        case .p256: expected = .ecdsaP256SHA256
        case .p384: expected = .ecdsaP384SHA384
        case .ed25519: expected = .ed25519
        default: expected = .rsaPKCS1v15SHA256
        }
        let signer = try SoftwareSigner(key: key), verifier = try PublicKeyVerifier(key: key.publicKey)
        #expect(signer.algorithm == expected)
        #expect(verifier.algorithm == expected)
        #expect(key.kind.defaultAlgorithm == expected)
    }

    @Test("digests of the wrong algorithm are refused")
    func wrongDigest() async throws {
        let signer = try SoftwareSigner(key: SharedTestKeys.key(.p256))
        let sha512 = DigestAlgorithm.sha512.hash(KeyTestSupport.message)
        let signError = try KeyTestSupport.thrown { try signer.signSynchronously(digest: sha512) }
        KeyTestSupport.check(signError, is: "invalidArgument", mentioning: "sha256", "sha512")
        let signature = try signer.signSynchronously(digest: DigestAlgorithm.sha256.hash(KeyTestSupport.message))
        let verifier = try PublicKeyVerifier(key: signer.publicKey)
        let verifyError = try KeyTestSupport.thrown { try verifier.verify(signature: signature, digest: sha512) }
        KeyTestSupport.check(verifyError, is: "invalidArgument", mentioning: "sha512")

        let ed = try SoftwareSigner(key: SharedTestKeys.key(.ed25519))
        let edError = try await KeyTestSupport.thrownAsync { try await ed.sign(digest: sha512) }
        KeyTestSupport.check(edError, is: "invalidArgument", mentioning: "Ed25519")
    }

    // MARK: Signature shapes

    @Test("RSA signatures are as long as the modulus; PSS is randomised, PKCS#1 v1.5 is not")
    func rsaShapes() async throws {
        let key = SharedTestKeys.key(.rsa2048)
        for algorithm in [SignatureAlgorithm.rsaPSSSHA256, .rsaPSSSHA512] {
            let signer = try SoftwareSigner(key: key, algorithm: algorithm)
            let first = try await signer.sign(message: KeyTestSupport.message)
            let second = try await signer.sign(message: KeyTestSupport.message)
            #expect(first.count == 256 && second.count == 256)
            #expect(first != second, "PSS uses a random salt")
            let verifier = try PublicKeyVerifier(key: key.publicKey, algorithm: algorithm)
            try verifier.verify(signature: first, message: KeyTestSupport.message)
            try verifier.verify(signature: second, message: KeyTestSupport.message)
        }
        for algorithm in [SignatureAlgorithm.rsaPKCS1v15SHA256, .rsaPKCS1v15SHA512] {
            let signer = try SoftwareSigner(key: key, algorithm: algorithm)
            let first = try await signer.sign(message: KeyTestSupport.message)
            let second = try await signer.sign(message: KeyTestSupport.message)
            #expect(first.count == 256)
            #expect(first == second, "PKCS#1 v1.5 is deterministic")
        }
        let short = try KeyTestSupport.thrown {
            try PublicKeyVerifier(key: key.publicKey).verify(signature: [UInt8](repeating: 1, count: 255), message: KeyTestSupport.message)
        }
        KeyTestSupport.check(short, is: "signatureInvalid", mentioning: "256 bytes", "255")
    }

    @Test("a PSS signature does not pass as PKCS#1 v1.5, nor the reverse, nor SHA-256 as SHA-512")
    func rsaPaddingsDoNotMix() async throws {
        let key = SharedTestKeys.key(.rsa2048)
        let pairs: [(SignatureAlgorithm, SignatureAlgorithm)] = [
            (.rsaPSSSHA256, .rsaPKCS1v15SHA256), (.rsaPKCS1v15SHA256, .rsaPSSSHA256), (.rsaPKCS1v15SHA256, .rsaPKCS1v15SHA512),
            (.rsaPSSSHA512, .rsaPSSSHA256),
        ]
        for (signed, checked) in pairs {
            let signature = try await SoftwareSigner(key: key, algorithm: signed).sign(message: KeyTestSupport.message)
            let verifier = try PublicKeyVerifier(key: key.publicKey, algorithm: checked)
            let error = try KeyTestSupport.thrown { try verifier.verify(signature: signature, message: KeyTestSupport.message) }
            #expect(error.code == "signatureInvalid", "\(signed.rawValue) checked as \(checked.rawValue)")
            if checked == .rsaPSSSHA256 { #expect(error.description.contains("rsa_pss_saltlen:digest")) }
        }
    }

    @Test("ECDSA signatures are DER", arguments: [KeyGenerationType.p256, .p384])
    func ecdsaIsDER(type: KeyGenerationType) async throws {
        let signer = try SoftwareSigner(key: SharedTestKeys.key(type))
        let maximum = type == .p256 ? 72 : 104
        for _ in 0..<8 {
            let signature = try await signer.sign(message: KeyTestSupport.message)
            #expect(signature.first == 0x30, "SEQUENCE")
            #expect(signature.count <= maximum)
            #expect(Int(signature[1]) == signature.count - 2, "short-form length covering the rest")
            #expect(signature[2] == 0x02, "first INTEGER (r)")
        }
        // Raw r‖s is not accepted in place of DER.
        let raw = [UInt8](repeating: 0x01, count: type == .p256 ? 64 : 96)
        let error = try KeyTestSupport.thrown { try PublicKeyVerifier(key: signer.publicKey).verify(signature: raw, message: KeyTestSupport.message) }
        KeyTestSupport.check(error, is: "signatureInvalid", mentioning: "DER")
    }

    @Test("Ed25519 signatures are 64 bytes and deterministic")
    func ed25519Shape() async throws {
        let signer = try SoftwareSigner(key: SharedTestKeys.key(.ed25519))
        let first = try await signer.sign(message: KeyTestSupport.message)
        let second = try await signer.sign(message: KeyTestSupport.message)
        #expect(first.count == 64)
        #expect(first == second)
        let empty = try await signer.sign(message: [])
        try PublicKeyVerifier(key: signer.publicKey).verify(signature: empty, message: [])
        let error = try KeyTestSupport.thrown { try PublicKeyVerifier(key: signer.publicKey).verify(signature: Array(first.prefix(63)), message: KeyTestSupport.message) }
        KeyTestSupport.check(error, is: "signatureInvalid", mentioning: "64 bytes", "63")
    }
}
