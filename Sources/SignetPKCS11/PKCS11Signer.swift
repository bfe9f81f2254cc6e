import CPKCS11
import SignetCore

/// A signing mechanism Signet asks tokens for. Tokens such as SoftHSM2 lack most combined
/// hash-and-sign mechanisms for EC keys, so the hash is always computed by Signet.
public enum PKCS11SignMechanism: Sendable, Equatable, CustomStringConvertible {
    /// `CKM_ECDSA` over a digest; the token returns raw `r‖s`.
    case ecdsa
    /// `CKM_RSA_PKCS` over a DER `DigestInfo` and the digest (RSASSA-PKCS1-v1_5).
    case rsaPKCS1v15
    /// `CKM_RSA_PKCS_PSS` over a digest of this algorithm, with MGF1 of the same hash and a salt
    /// as long as the digest (SHA-256, SHA-384 or SHA-512).
    case rsaPSS(DigestAlgorithm)
    /// `CKM_EDDSA` (no parameters: pure Ed25519) over the whole message.
    case eddsa

    /// The mechanism's PKCS#11 name.
    public var description: String {
        switch self {
        case .ecdsa: return "CKM_ECDSA"
        case .rsaPKCS1v15: return "CKM_RSA_PKCS"
        case .rsaPSS(let digest): return "CKM_RSA_PKCS_PSS with \(digest.rawValue)"
        case .eddsa: return "CKM_EDDSA"
        }
    }

    /// Calls `body` with the mechanism as C sees it (its parameters live during the call).
    func withMechanism<R>(token: String, _ body: (UnsafeMutablePointer<CK_MECHANISM>) throws -> R) throws -> R {
        let type: CK_MECHANISM_TYPE
        switch self {
        case .ecdsa: type = CKM_ECDSA
        case .rsaPKCS1v15: type = CKM_RSA_PKCS
        case .eddsa: type = CKM_EDDSA
        case .rsaPSS(let digest):
            var parameters: CK_RSA_PKCS_PSS_PARAMS
            switch digest {
            case .sha256: parameters = CK_RSA_PKCS_PSS_PARAMS(hashAlg: CKM_SHA256, mgf: CKG_MGF1_SHA256, sLen: 32)
            case .sha384: parameters = CK_RSA_PKCS_PSS_PARAMS(hashAlg: CKM_SHA384, mgf: CKG_MGF1_SHA384, sLen: 48)
            case .sha512: parameters = CK_RSA_PKCS_PSS_PARAMS(hashAlg: CKM_SHA512, mgf: CKG_MGF1_SHA512, sLen: 64)
            default: throw PKCS11Error.unsupportedMechanism(token: token, mechanism: description)
            }
            return try withUnsafeMutablePointer(to: &parameters) { (pointer: UnsafeMutablePointer<CK_RSA_PKCS_PSS_PARAMS>) throws -> R in
                var mechanism = CK_MECHANISM(
                    mechanism: CKM_RSA_PKCS_PSS, pParameter: UnsafeMutableRawPointer(pointer),
                    ulParameterLen: CK_ULONG(MemoryLayout<CK_RSA_PKCS_PSS_PARAMS>.size))
                return try withUnsafeMutablePointer(to: &mechanism) { try body($0) }
            }
        }
        var mechanism = CK_MECHANISM(mechanism: type, pParameter: nil, ulParameterLen: 0)
        return try withUnsafeMutablePointer(to: &mechanism) { try body($0) }
    }
}

extension PKCS11Module {
    /// The longest signature accepted from a token (RSA-16384 makes 2 KiB).
    static let maximumSignatureLength: CK_ULONG = 4096

    /// The size of a signature by `key`, when its public key tells (0 otherwise).
    static func expectedSignatureLength(_ key: PKCS11KeyObject) -> CK_ULONG {
        switch key.publicKey?.kind {
        case .p256?: return 64
        case .p384?: return 96
        case .ed25519?: return 64
        case .rsa(let bits)?: return CK_ULONG((bits + 7) / 8)
        case nil: return 0
        }
    }

    /// Signs `data` with the private key of `key`. `data` is what the mechanism takes: a digest
    /// for ``PKCS11SignMechanism/ecdsa`` and ``PKCS11SignMechanism/rsaPSS(_:)``, a `DigestInfo`
    /// for ``PKCS11SignMechanism/rsaPKCS1v15``, the message for ``PKCS11SignMechanism/eddsa``.
    /// The signature is returned as the token makes it (raw `r‖s` for ECDSA).
    ///
    /// Logs in with `pin` when the session is not logged in yet, and again for every signature
    /// when the key asks for it (`CKA_ALWAYS_AUTHENTICATE`). A key whose handle went stale (the
    /// token was taken out and put back) is found again by its id or label.
    public func sign(_ data: [UInt8], with key: PKCS11KeyObject, mechanism: PKCS11SignMechanism, pin: any PKCS11PINProvider = PKCS11NoPIN()) throws -> [UInt8] {
        guard let privateHandle = key.privateKeyHandle else {
            throw PKCS11Error.unsupportedKey(uri: key.uri.description, detail: "only its public key is in view; signing needs the private key")
        }
        return try locked { (table: inout SessionTable) throws -> [UInt8] in
            do {
                return try sign(data, privateHandle: privateHandle, key: key, mechanism: mechanism, pin: pin, table: &table)
            } catch {
                // A sign operation that C_SignInit started and nothing finished stays active on
                // the session; a fresh session is the portable way to end it (PKCS#11 2.40 has
                // no cancel), at the cost of logging in again.
                if let failure = error as? PKCS11Error, !failure.mayLeaveOperationActive { throw error }
                dropSession(key.slotID, table: &table)
                throw error
            }
        }
    }

    private func sign(
        _ data: [UInt8], privateHandle: UInt, key: PKCS11KeyObject, mechanism: PKCS11SignMechanism, pin: any PKCS11PINProvider,
        table: inout SessionTable
    ) throws -> [UInt8] {
        // The fast path: the session already open (and logged in) for this token. A token
        // swapped in the meantime makes the handle stale, and the slow path below checks.
        if let cached = table.sessions[CK_SLOT_ID(key.slotID)], cached.label == key.token.label, cached.serial == key.token.serial,
            cached.loggedIn || !key.token.loginRequired
        {
            do {
                return try signOnce(
                    data, handle: CK_OBJECT_HANDLE(privateHandle), key: key, token: key.token, mechanism: mechanism, pin: pin,
                    session: cached.handle)
            } catch let error as PKCS11Error where error.isStaleSession || error.isStaleHandle {
                dropSession(key.slotID, table: &table)
            }
        }
        let slot = try slotInfo(CK_SLOT_ID(key.slotID))
        guard let token = slot.token, token.label == key.token.label, token.serial == key.token.serial else {
            throw PKCS11Error.noMatch(uri: key.uri.description, detail: "the token is no longer in slot \(key.slotID)")
        }
        return try withSession(slot, login: true, pin: pin, table: &table) { (session: CK_SESSION_HANDLE) throws -> [UInt8] in
            do {
                return try signOnce(data, handle: CK_OBJECT_HANDLE(privateHandle), key: key, token: token, mechanism: mechanism, pin: pin, session: session)
            } catch PKCS11Error.tokenFailure(_, let rv, _) where rv == "CKR_KEY_HANDLE_INVALID" || rv == "CKR_OBJECT_HANDLE_INVALID" {
                var again = PKCS11URI()
                if !key.id.isEmpty { again.id = key.id } else { again.object = key.label }
                let handles = try findHandles(.privateKey, uri: again, session: session)
                guard handles.count == 1 else {
                    throw PKCS11Error.noMatch(uri: key.uri.description, detail: "the key is no longer on the token")
                }
                return try signOnce(data, handle: handles[0], key: key, token: token, mechanism: mechanism, pin: pin, session: session)
            }
        }
    }

    private func signOnce(
        _ data: [UInt8], handle: CK_OBJECT_HANDLE, key: PKCS11KeyObject, token: PKCS11TokenInfo, mechanism: PKCS11SignMechanism,
        pin: any PKCS11PINProvider, session: CK_SESSION_HANDLE
    ) throws -> [UInt8] {
        guard let signInit = functions.pointee.C_SignInit else { throw PKCS11Error.missing("C_SignInit") }
        guard let signCall = functions.pointee.C_Sign else { throw PKCS11Error.missing("C_Sign") }
        let started: CK_RV = try mechanism.withMechanism(token: token.label) { signInit(session, $0, handle) }
        switch started {
        case CKR_OK: break
        case CKR_MECHANISM_INVALID, CKR_MECHANISM_PARAM_INVALID:
            throw PKCS11Error.unsupportedMechanism(token: token.label, mechanism: mechanism.description)
        case CKR_KEY_TYPE_INCONSISTENT, CKR_KEY_FUNCTION_NOT_PERMITTED:
            throw PKCS11Error.unsupportedKey(
                uri: key.uri.description, detail: "the token does not allow \(mechanism) with this key (\(PKCS11Error.returnValueName(started)))")
        default: throw PKCS11Error.failed("C_SignInit", started)
        }
        if key.alwaysAuthenticate { try logIn(session, token: token, pin: pin, contextSpecific: true) }
        // An empty message still gets a valid pointer: some modules refuse a null one.
        var input = data.isEmpty ? [0] : data
        let inputLength = CK_ULONG(data.count)
        // One call when the signature's size is known from the key; else (or when the module
        // wants more) the length is asked for first, as PKCS#11 allows.
        var length: CK_ULONG = Self.expectedSignatureLength(key)
        if length == 0 {
            let measured: CK_RV = input.withUnsafeMutableBufferPointer { buffer in
                signCall(session, buffer.baseAddress, inputLength, nil, &length)
            }
            guard measured == CKR_OK else { throw PKCS11Error.failed("C_Sign", measured) }
        }
        guard length > 0, length <= Self.maximumSignatureLength else {
            throw PKCS11Error.misbehaved("C_Sign", "it asks for a signature buffer of \(length) bytes")
        }
        var signature = [UInt8](repeating: 0, count: Int(length))
        var written = length
        var signed: CK_RV = input.withUnsafeMutableBufferPointer { inputBuffer in
            signature.withUnsafeMutableBufferPointer { outputBuffer in
                signCall(session, inputBuffer.baseAddress, inputLength, outputBuffer.baseAddress, &written)
            }
        }
        if signed == CKR_BUFFER_TOO_SMALL {
            // The operation stays active; `written` is the size the module needs.
            guard written > length, written <= Self.maximumSignatureLength else {
                throw PKCS11Error.misbehaved("C_Sign", "it asks for a signature buffer of \(written) bytes")
            }
            length = written
            signature = [UInt8](repeating: 0, count: Int(length))
            signed = input.withUnsafeMutableBufferPointer { inputBuffer in
                signature.withUnsafeMutableBufferPointer { outputBuffer in
                    signCall(session, inputBuffer.baseAddress, inputLength, outputBuffer.baseAddress, &written)
                }
            }
        }
        guard signed == CKR_OK else { throw PKCS11Error.failed("C_Sign", signed) }
        guard written > 0, written <= length else {
            throw PKCS11Error.misbehaved("C_Sign", "it wrote a signature of \(written) bytes into a buffer of \(length)")
        }
        return Array(signature[0..<Int(written)])
    }
}

/// A ``Signer`` whose private key stays on a PKCS#11 token.
///
/// The algorithm follows the key as ``SoftwareSigner``'s does: by default
/// ``KeyKind/defaultAlgorithm`` (`rsa-v1_5-sha256` for RSA, ECDSA with the curve's hash,
/// Ed25519), or the one asked for when it fits the key. Signet hashes; the token signs the
/// digest (`CKM_ECDSA`, `CKM_RSA_PKCS` over a `DigestInfo`, `CKM_RSA_PKCS_PSS`), or, for
/// Ed25519, the whole message (`CKM_EDDSA`). ECDSA signatures come back DER-encoded, as every
/// Signet signer returns them. Signing blocks the calling thread while the token works.
public struct PKCS11Signer: Signer {
    /// The algorithm every signature is made with; it fits ``publicKey``.
    public let algorithm: SignatureAlgorithm
    /// The public key read from the token, which verifies the signatures.
    public let publicKey: PublicKey
    /// The key on the token.
    public let key: PKCS11KeyObject
    /// The module that drives the token.
    public let module: PKCS11Module
    private let pin: any PKCS11PINProvider

    /// DER `DigestInfo` prefixes (RFC 8017 §9.2, note 1).
    static let sha256DigestInfo: [UInt8] = [
        0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20,
    ]
    static let sha512DigestInfo: [UInt8] = [
        0x30, 0x51, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x03, 0x05, 0x00, 0x04, 0x40,
    ]

    /// A signer over `key`, a private key found on a token of `module`; nil `algorithm` picks
    /// the key's default. `pin` is asked when the token needs a login.
    /// - Throws: ``PKCS11Error/unsupportedKey(uri:detail:)`` for a key without a usable public
    ///   key or without its private half, ``SignetCoreError/algorithmMismatch(algorithm:keyDescription:hint:)``
    ///   for an algorithm that does not fit it.
    public init(module: PKCS11Module, key: PKCS11KeyObject, algorithm: SignatureAlgorithm? = nil, pin: any PKCS11PINProvider = PKCS11NoPIN()) throws {
        guard key.privateKeyHandle != nil else {
            throw PKCS11Error.unsupportedKey(uri: key.uri.description, detail: "only its public key is in view; signing needs the private key")
        }
        let publicKey = try key.requirePublicKey()
        let chosen = algorithm ?? publicKey.kind.defaultAlgorithm
        try chosen.requireFits(publicKey.kind)
        self.algorithm = chosen
        self.publicKey = publicKey
        self.key = key
        self.module = module
        self.pin = pin
    }

    /// Signs a digest of ``SignatureAlgorithm/digest`` on the token.
    public func sign(digest: MessageDigest) async throws -> [UInt8] {
        guard let expected = algorithm.digest else {
            throw SignetCoreError.invalidArgument(detail: "Ed25519 signs the message itself, not a digest")
        }
        guard digest.algorithm == expected else {
            throw SignetCoreError.invalidArgument(detail: "\(algorithm.rawValue) needs a \(expected.rawValue) digest, not \(digest.algorithm.rawValue)")
        }
        guard let input = tokenInput(for: digest) else {
            throw SignetCoreError.algorithmMismatch(algorithm: algorithm.rawValue, keyDescription: publicKey.kind.description, hint: "")
        }
        let (module, key, pin) = (self.module, self.key, self.pin)
        let signature = try await TokenCalls.run { try module.sign(input.data, with: key, mechanism: input.mechanism, pin: pin) }
        guard case .ecdsa = input.mechanism else { return try rsaSized(signature) }
        let length = algorithm == .ecdsaP256SHA256 ? 64 : 96
        guard signature.count == length else {
            throw PKCS11Error.misbehaved("C_Sign", "an ECDSA signature of \(signature.count) bytes (\(length) expected)")
        }
        return try algorithm.derSignature(fromRaw: signature)
    }

    /// What the token is asked to sign for `digest`, and how: the digest itself (`CKM_ECDSA`,
    /// `CKM_RSA_PKCS_PSS`) or `DigestInfo` ‖ digest (`CKM_RSA_PKCS`); nil for Ed25519. The
    /// benchmark's raw loop signs the same input.
    @_spi(Benchmarking)
    public func tokenInput(for digest: MessageDigest) -> (mechanism: PKCS11SignMechanism, data: [UInt8])? {
        switch algorithm {
        case .ecdsaP256SHA256, .ecdsaP384SHA384: return (.ecdsa, digest.bytes)
        case .rsaPKCS1v15SHA256: return (.rsaPKCS1v15, Self.sha256DigestInfo + digest.bytes)
        case .rsaPKCS1v15SHA512: return (.rsaPKCS1v15, Self.sha512DigestInfo + digest.bytes)
        case .rsaPSSSHA256, .rsaPSSSHA512: return (.rsaPSS(digest.algorithm), digest.bytes)
        default: return nil
        }
    }

    /// Signs a whole message: Ed25519 on the token itself (`CKM_EDDSA`), every other algorithm
    /// by hashing it here and signing the digest.
    public func sign(message: [UInt8]) async throws -> [UInt8] {
        guard algorithm == .ed25519 else {
            return try await sign(digest: algorithm.digest!.hash(message))
        }
        let (module, key, pin) = (self.module, self.key, self.pin)
        let signature = try await TokenCalls.run { try module.sign(message, with: key, mechanism: .eddsa, pin: pin) }
        guard signature.count == 64 else {
            throw PKCS11Error.misbehaved("C_Sign", "an Ed25519 signature of \(signature.count) bytes (64 expected)")
        }
        return signature
    }

    /// An RSA signature as long as the modulus: a shorter one (leading zeros dropped by the
    /// token) is padded back, a longer one refused.
    private func rsaSized(_ signature: [UInt8]) throws -> [UInt8] {
        guard case .rsa(let bits) = publicKey.kind else { return signature }
        let length = (bits + 7) / 8
        guard signature.count <= length else {
            throw PKCS11Error.misbehaved("C_Sign", "an RSA-\(bits) signature of \(signature.count) bytes")
        }
        return [UInt8](repeating: 0, count: length - signature.count) + signature
    }
}
