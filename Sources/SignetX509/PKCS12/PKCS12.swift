import Crypto
import SignetCore
import SwiftASN1
import X509

/// What a PKCS#12 file holds.
public struct PKCS12Contents: Sendable {
    /// The private key, when the file holds one.
    public var privateKey: PrivateKey?
    /// The certificates: the one whose public key is ``privateKey``'s first, then the others
    /// in file order.
    public var certificates: [Certificate]
    /// The key's `friendlyName` attribute, or its certificate's when the key has none.
    public var friendlyName: String?
    /// Certificates left out because their RSA key is under 2048 bits, which swift-certificates
    /// does not read: only when the policy allows weak RSA keys (otherwise they are an error).
    public var skippedWeakCertificates: Int

    /// Contents made of their parts.
    public init(privateKey: PrivateKey?, certificates: [Certificate], friendlyName: String?, skippedWeakCertificates: Int = 0) {
        self.privateKey = privateKey
        self.certificates = certificates
        self.friendlyName = friendlyName
        self.skippedWeakCertificates = skippedWeakCertificates
    }
}

/// Reading and writing PKCS#12 (RFC 7292) files: a private key with its certificate and chain
/// under one passphrase, as `openssl pkcs12`, browsers and key stores exchange them.
///
/// Reading takes password-integrity files in DER (what OpenSSL 3 writes; BER with indefinite
/// lengths, which some old tools wrote, is refused as unsupported): the MAC (HMAC with SHA-1,
/// SHA-256, SHA-384 or SHA-512) is verified first, in constant time, and a file without one is
/// refused. Contents may be plain or encrypted with PBES2 (PBKDF2, AES-CBC) or with the legacy
/// 3DES and RC2 PBEs. Input is bounded: size, ASN.1 depth, number of parts and bags, and the
/// key-derivation work a file may ask for.
///
/// Writing produces exactly OpenSSL 3's default layout: the certificates in an `encryptedData`
/// part and the key in a `pkcs8ShroudedKeyBag`, both PBES2 with PBKDF2-HMAC-SHA256 and
/// AES-256-CBC, and a SHA-256 MAC.
public enum PKCS12 {
    /// The largest input ``decode(_:passphrase:source:policy:)`` reads: far above any real file.
    public static let maximumSize = 1 << 20
    /// The iteration count written for the key derivations and the MAC: what OpenSSL 3 writes.
    public static let defaultIterations = 2048
    /// The most iterations any one key derivation of a file may ask for, so a hostile file
    /// cannot pin the CPU; all of a file's derivations together may use twice as many.
    public static let maximumIterations = EncryptedPrivateKey.maximumIterations

    /// Reads a DER PKCS#12 file. `source` names it in errors; `policy` applies to the key.
    ///
    /// A wrong passphrase, or a file altered after it was written, is
    /// ``X509Error/macMismatch(source:)``; anything else wrong with the file is
    /// ``X509Error/malformed(source:detail:)`` or ``X509Error/unsupported(source:detail:)``.
    public static func decode(
        _ bytes: [UInt8], passphrase: SecretBytes, source: String, policy: KeyPolicy = .strict
    ) throws -> PKCS12Contents {
        try checkShape(bytes, source: source)
        let pfx = try parsing(bytes, source: source) { try PKCS12Parser.parsePFX(bytes, source: source) }
        guard let mac = pfx.mac else {
            throw X509Error.malformed(source: source, detail: "no MAC: the file's integrity cannot be checked")
        }
        var decryptor = try PKCS12Decryptor(passphrase: passphrase, source: source)
        defer { decryptor.erase() }
        try decryptor.verify(mac, over: pfx.authenticatedSafe)

        let contents = try parsing(bytes, source: source) {
            try PKCS12Parser.parseAuthenticatedSafe(pfx.authenticatedSafe, source: source)
        }
        var bags: [PKCS12SafeBag] = []
        for content in contents {
            var safeContents: [UInt8]
            switch content {
            case .plain(let der):
                safeContents = der
            case .encrypted(let encryption, let ciphertext):
                safeContents = try decryptor.decrypt(ciphertext, with: encryption, what: "encrypted part of the file")
            }
            let room = PKCS12Parser.maximumBags - bags.count
            let parsed = try parsing(bytes, source: source) {
                try PKCS12Parser.parseSafeContents(safeContents, room: room, source: source)
            }
            SecretBytes.zero(&safeContents)
            bags += parsed
        }
        return try assemble(bags, decryptor: &decryptor, policy: policy)
    }

    /// Writes `privateKey` with its `certificate` and the `chain` above it (leaf first) as a
    /// PKCS#12 file in OpenSSL 3's default layout, all under `passphrase` (its UTF-8 bytes for
    /// PBES2, its BMPString form for the MAC, as OpenSSL uses them) with `iterations` for every
    /// key derivation and the MAC. The leaf's bag and the key's share a `localKeyId` (the
    /// SHA-1 of the leaf's DER, as OpenSSL computes it) and, when given, the `friendlyName`.
    ///
    /// A key that does not belong to the certificate is ``X509Error/keyMismatch(detail:)``.
    public static func encode(
        privateKey: PrivateKey, certificate: Certificate, chain: [Certificate] = [], passphrase: SecretBytes,
        friendlyName: String? = nil, iterations: Int = defaultIterations
    ) throws -> [UInt8] {
        guard !passphrase.isEmpty else { throw X509Error.invalidArgument(detail: "the PKCS#12 passphrase is empty") }
        guard (1...maximumIterations).contains(iterations) else {
            throw X509Error.invalidArgument(detail: "PKCS#12 iteration count \(iterations) (accepted: 1 to \(maximumIterations))")
        }
        guard var password = PKCS12KDF.bmpPassword(passphrase) else {
            throw X509Error.invalidArgument(detail: "the PKCS#12 passphrase is not valid UTF-8 text")
        }
        defer { SecretBytes.zero(&password) }
        guard publicKey(privateKey.publicKey, belongsTo: certificate) else {
            throw X509Error.keyMismatch(detail: "the private key does not belong to the certificate \(certificate.subject)")
        }
        let name = friendlyName.flatMap { $0.isEmpty ? nil : $0 }
        let leaf = try X509Files.derBytes(of: certificate)
        var others: [[UInt8]] = []
        for member in chain { others.append(try X509Files.derBytes(of: member)) }
        let localKeyID = Array(Insecure.SHA1.hash(data: leaf))

        var pkcs8 = try core("private key") { () throws in try privateKey.encoded(as: .der) }
        defer { SecretBytes.zero(&pkcs8) }
        let shrouded = try core("private key") { () throws in
            try EncryptedPrivateKey.encrypt(pkcs8: pkcs8, passphrase: passphrase, iterations: iterations)
        }
        do {
            var attributes = [try PKCS12Writer.Attribute.localKeyID(localKeyID)]
            if let name { attributes.append(try PKCS12Writer.Attribute.friendlyName(name)) }
            var certificates = DER.Serializer()
            try certificates.appendConstructedNode(identifier: .sequence) { contents in
                try PKCS12Writer.certificateBag(leaf, attributes: attributes, into: &contents)
                for der in others { try PKCS12Writer.certificateBag(der, attributes: [], into: &contents) }
            }
            let sealed = try core("certificates") { () throws in
                try EncryptedPrivateKey.encryptContent(certificates.serializedBytes, passphrase: passphrase, iterations: iterations)
            }
            var keys = DER.Serializer()
            try keys.appendConstructedNode(identifier: .sequence) { contents in
                try PKCS12Writer.safeBag(type: PKCS12OID.pkcs8ShroudedKeyBag, attributes: attributes, into: &contents) { value in
                    value.serializeRawBytes(shrouded)
                }
            }
            var authenticatedSafe = DER.Serializer()
            try authenticatedSafe.appendConstructedNode(identifier: .sequence) { parts in
                try PKCS12Writer.encryptedContentInfo(
                    algorithmIdentifier: sealed.algorithmIdentifier, ciphertext: sealed.ciphertext, into: &parts)
                try PKCS12Writer.dataContentInfo(keys.serializedBytes, into: &parts)
            }
            let salt = RandomBytes.make(8)
            let digest = PKCS12MACAlgorithm.sha256.authenticationCode(
                password: password, salt: salt, iterations: iterations, data: authenticatedSafe.serializedBytes)
            let mac = PKCS12MACData(algorithm: PKCS12OID.sha256, digest: digest, salt: salt, iterations: iterations)
            return try PKCS12Writer.pfx(authenticatedSafe: authenticatedSafe.serializedBytes, mac: mac)
        } catch let error as X509Error {
            throw error
        } catch {
            throw X509Error.invalidArgument(detail: "the PKCS#12 structure cannot be encoded: \(error)")
        }
    }

    // MARK: Reading

    /// Refuses what cannot be a DER PKCS#12 file before parsing it.
    private static func checkShape(_ bytes: [UInt8], source: String) throws {
        guard !bytes.isEmpty else { throw X509Error.malformed(source: source, detail: "the file is empty") }
        guard bytes.count <= maximumSize else {
            throw X509Error.malformed(source: source, detail: "too large for a PKCS#12 file (the limit is \(maximumSize / 1024 / 1024) MiB)")
        }
        let text = bytes.drop(while: { $0 == 0x20 || $0 == 0x09 || $0 == 0x0a || $0 == 0x0d })
        if text.starts(with: Array("-----BEGIN".utf8)) {
            throw X509Error.malformed(source: source, detail: "is PEM text, but a PKCS#12 (.p12) file is binary DER")
        }
    }

    /// Runs a parse, turning swift-asn1's errors into ``X509Error``s that name `source`.
    static func parsing<T>(_ bytes: [UInt8], source: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as X509Error {
            throw error
        } catch let error as ASN1Error {
            // An indefinite or non-minimal length in a file that starts as a SEQUENCE: BER.
            if error.code == .unsupportedFieldLength, bytes.first == 0x30 {
                throw X509Error.unsupported(
                    source: source, detail: "BER encoding (indefinite or non-minimal lengths): only DER PKCS#12 files are read; export the file again to get DER")
            }
            throw X509Error.malformed(source: source, detail: "not a valid DER PKCS#12 file (\(X509Files.asn1Detail(error)))")
        } catch {
            throw X509Error.malformed(source: source, detail: "not a valid DER PKCS#12 file (\(error))")
        }
    }

    /// The key, the certificates (the key's first) and the friendly name from the bags.
    private static func assemble(
        _ bags: [PKCS12SafeBag], decryptor: inout PKCS12Decryptor, policy: KeyPolicy
    ) throws -> PKCS12Contents {
        let source = decryptor.source
        let keyBags = bags.filter {
            switch $0.value {
            case .key, .shroudedKey: return true
            case .certificate, .other: return false
            }
        }
        guard keyBags.count <= 1 else {
            throw X509Error.unsupported(source: source, detail: "holds \(keyBags.count) private keys (files with one are read)")
        }
        var privateKey: PrivateKey?
        if let keyBag = keyBags.first {
            var pkcs8: [UInt8]
            switch keyBag.value {
            case .key(let der):
                pkcs8 = der
            case .shroudedKey(let encryption, let ciphertext):
                pkcs8 = try decryptor.decrypt(ciphertext, with: encryption, what: "private key")
            case .certificate, .other:
                pkcs8 = []
            }
            defer { SecretBytes.zero(&pkcs8) }
            privateKey = try key(pkcs8: pkcs8, source: source, policy: policy)
        }
        var certificates: [(certificate: Certificate, bag: PKCS12SafeBag)] = []
        var skipped = 0
        for bag in bags {
            guard case .certificate(let der) = bag.value else { continue }
            do {
                let certificate = try Certificate(derEncoded: der)
                certificates.append((certificate: certificate, bag: bag))
            } catch {
                if policy.allowWeakRSA, Self.hasWeakRSAKey(certificate: der) {
                    skipped += 1
                    continue
                }
                throw X509Error.malformed(
                    source: source, detail: "certificate \(certificates.count + 1) is not a valid X.509 certificate (\(X509Files.asn1Detail(error)))")
            }
        }
        if let publicKey = privateKey?.publicKey,
            let index = certificates.firstIndex(where: { Self.publicKey(publicKey, belongsTo: $0.certificate) })
        {
            let matching = certificates.remove(at: index)
            certificates.insert(matching, at: 0)
        }
        let friendlyName = keyBags.first?.friendlyName ?? certificates.first?.bag.friendlyName
        return PKCS12Contents(
            privateKey: privateKey, certificates: certificates.map(\.certificate), friendlyName: friendlyName,
            skippedWeakCertificates: skipped)
    }

    /// The private key in PKCS#8 DER, decoded by SignetCore under `policy`.
    private static func key(pkcs8: [UInt8], source: String, policy: KeyPolicy) throws -> PrivateKey {
        let decoded = try core("private key", source: source) { () throws in
            try KeyDecoder.decode(pkcs8, source: source, policy: policy)
        }
        guard case .privateKey(let key) = decoded else {
            throw X509Error.malformed(source: source, detail: "the key bag does not hold a PKCS#8 private key")
        }
        return key
    }

    /// Whether `key` is the certificate's public key: their DER SPKIs are compared, through
    /// SignetCore's canonical form when the bytes differ.
    static func publicKey(_ key: PublicKey, belongsTo certificate: Certificate) -> Bool {
        var serializer = DER.Serializer()
        guard (try? serializer.serialize(certificate.publicKey)) != nil else { return false }
        let spki = serializer.serializedBytes
        if spki == key.spkiDER { return true }
        guard case .publicKey(let certificateKey)? = try? KeyDecoder.decode(spki, source: "certificate", policy: KeyPolicy(allowWeakRSA: true))
        else { return false }
        return certificateKey == key
    }

    /// Runs a SignetCore operation on `what`, reporting its failure as this module does.
    static func core<T>(
        _ what: String, source: String = "PKCS#12 output", _ body: () throws -> T
    ) throws -> T {
        do {
            return try body()
        } catch {
            throw mapped(error, what: what, source: source)
        }
    }

    /// A SignetCore failure on `what` in `source` as an ``X509Error``.
    static func mapped(_ error: any Error, what: String, source: String) -> X509Error {
        guard let error = error as? SignetCoreError else { return X509Error(reading: error, source: source) }
        switch error {
        case .wrongPassphrase:
            return .malformed(
                source: source,
                detail: "the \(what) does not decrypt although the MAC verifies: it was encrypted under another passphrase, or is damaged")
        case .weakKey(_, let bits):
            return .unsupported(source: source, detail: "an RSA key of \(bits) bits (below the 2048-bit minimum)")
        case .invalidArgument(let detail), .cryptoFailure(let detail):
            return .invalidArgument(detail: "\(what): \(detail)")
        default:
            return X509Error(reading: error, source: source)
        }
    }
}

/// The secrets of one decode and the key-derivation work it has done: the passphrase as
/// PBES2 takes it (its UTF-8 bytes) and as the MAC and the legacy PBEs take it (a BMPString).
struct PKCS12Decryptor {
    /// All of a file's key derivations together: the MAC's, each encrypted part's, the key's.
    static let iterationBudget = 2 * PKCS12.maximumIterations
    /// The longest salt accepted (OpenSSL writes 8 bytes).
    static let maximumSaltLength = 1024

    let passphrase: SecretBytes
    let source: String
    private var password: [UInt8]
    private var spent = 0

    init(passphrase: SecretBytes, source: String) throws {
        guard let password = PKCS12KDF.bmpPassword(passphrase) else {
            throw X509Error.invalidArgument(detail: "the passphrase for \(source) is not valid UTF-8 text")
        }
        self.passphrase = passphrase
        self.source = source
        self.password = password
    }

    /// Zeroes the BMPString copy of the passphrase.
    mutating func erase() { SecretBytes.zero(&password) }

    /// Verifies `mac` over `data` in constant time. An empty passphrase is tried as the
    /// BMPString `00 00` (what OpenSSL writes) and then as no bytes at all (what some other
    /// tools write); the form that verifies is the one the legacy ciphers then use.
    mutating func verify(_ mac: PKCS12MACData, over data: [UInt8]) throws {
        guard let algorithm = PKCS12MACAlgorithm(oid: mac.algorithm) else {
            throw X509Error.unsupported(
                source: source, detail: "a MAC with \(PKCS12OID.describe(mac.algorithm)) (HMAC with SHA-1, SHA-256, SHA-384 or SHA-512 is read)")
        }
        guard mac.digest.count == algorithm.byteCount else {
            throw X509Error.malformed(
                source: source, detail: "the MAC is \(mac.digest.count) bytes long, but HMAC with \(algorithm.name) gives \(algorithm.byteCount)")
        }
        guard mac.salt.count <= Self.maximumSaltLength else {
            throw X509Error.malformed(source: source, detail: "the MAC salt is longer than \(Self.maximumSaltLength) bytes")
        }
        let candidates = passphrase.isEmpty ? [password, []] : [password]
        for candidate in candidates {
            try spend(mac.iterations, on: "the MAC")
            let computed = algorithm.authenticationCode(password: candidate, salt: mac.salt, iterations: mac.iterations, data: data)
            if ConstantTime.equals(computed, mac.digest) {
                password = candidate
                return
            }
        }
        throw X509Error.macMismatch(source: source)
    }

    /// Decrypts `ciphertext` (the `what` of the file, for messages) after the MAC verified.
    mutating func decrypt(_ ciphertext: [UInt8], with encryption: PKCS12Encryption, what: String) throws -> [UInt8] {
        let source = self.source
        let passphrase = self.passphrase
        switch encryption {
        case .pbes2(let algorithmIdentifier):
            let encrypted = try PKCS12.core(what, source: source) { () throws in
                try EncryptedPrivateKey(pbes2AlgorithmIdentifier: algorithmIdentifier, ciphertext: ciphertext, source: source)
            }
            try spend(encrypted.iterations, on: "the \(what)")
            return try PKCS12.core(what, source: source) { () throws in
                try encrypted.decryptContent(passphrase: passphrase, source: source)
            }
        case .legacy(let cipher, let salt, let iterations):
            guard salt.count <= Self.maximumSaltLength else {
                throw X509Error.malformed(source: source, detail: "the salt of the \(what) is longer than \(Self.maximumSaltLength) bytes")
            }
            try spend(iterations, on: "the \(what)")
            return try cipher.decrypt(ciphertext, salt: salt, iterations: iterations, password: password, what: what, source: source)
        case .unknown(let oid):
            throw X509Error.unsupported(
                source: source, detail: "the \(what) is encrypted with \(PKCS12OID.describe(oid)) (PBES2 and the 3DES and RC2 PBEs are read)")
        }
    }

    /// Counts `iterations` against the limits before any are run.
    private mutating func spend(_ iterations: Int, on what: String) throws {
        guard (1...PKCS12.maximumIterations).contains(iterations) else {
            throw X509Error.unsupported(
                source: source, detail: "\(what) asks for \(iterations) key-derivation iterations (accepted: 1 to \(PKCS12.maximumIterations))")
        }
        spent += iterations
        guard spent <= Self.iterationBudget else {
            throw X509Error.unsupported(source: source, detail: "the file asks for more than \(Self.iterationBudget) key-derivation iterations in all")
        }
    }
}
