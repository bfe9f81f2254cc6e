import Crypto
import CPKCS11
import SignetCore

extension PKCS11Module {
    /// Generates a key pair on the one token `token` selects (by its `token`, `serial`, slot
    /// or library attributes; object attributes are ignored) and returns it, with its public key.
    ///
    /// The private key is a token object that is private, sensitive, never extractable and may
    /// sign; the public key is a public token object (readable without logging in) that may
    /// verify. Neither may do anything else: the private key is made with `CKA_DECRYPT`,
    /// `CKA_UNWRAP`, `CKA_DERIVE` and `CKA_SIGN_RECOVER` false, the public key with
    /// `CKA_ENCRYPT`, `CKA_WRAP`, `CKA_VERIFY_RECOVER` and `CKA_DERIVE` false, and all eight are
    /// read back: a token that sets one anyway, or does not report it, has the new pair
    /// destroyed and the call fails naming the attribute. Both carry `label` and, when it is not
    /// empty, `id`. P-256 and P-384 keys use
    /// `CKM_EC_KEY_PAIR_GEN` with the curve's OID; RSA keys `CKM_RSA_PKCS_KEY_PAIR_GEN` with the
    /// exponent 65537; Ed25519 keys `CKM_EC_EDWARDS_KEY_PAIR_GEN` with the OID 1.3.101.112, or,
    /// when a token refuses that, the PrintableString `edwards25519` older tokens expect.
    ///
    /// Nothing stops two keys from sharing a label or an id; a caller that wants them unique
    /// checks with ``listKeys(matching:pin:policy:)`` first.
    ///
    /// - Parameters:
    ///   - type: the kind of key; RSA-1024 only under a policy that allows weak RSA keys.
    ///   - pin: asked when the token needs a login.
    /// - Throws: ``PKCS11Error/noMatch(uri:detail:)`` or ``PKCS11Error/ambiguous(uri:count:)``
    ///   when the URI does not select exactly one token,
    ///   ``PKCS11Error/unsupportedMechanism(token:mechanism:)`` when the token cannot make such
    ///   keys, ``PKCS11Error/tokenFailure(function:rv:detail:)`` naming the attribute when the
    ///   token will not make a key that can only sign, and the PIN errors.
    public func generateKeyPair(
        token uri: PKCS11URI, type: KeyGenerationType, label: String, id: [UInt8],
        pin: any PKCS11PINProvider = PKCS11NoPIN(), policy: KeyPolicy = .strict
    ) throws -> PKCS11KeyObject {
        if type.isWeak && !policy.allowWeakRSA {
            throw PKCS11Error.unsupportedKey(uri: uri.description, detail: "RSA-1024 keys are generated only when weak RSA keys are allowed")
        }
        return try locked { (table: inout SessionTable) throws -> PKCS11KeyObject in
            let slot = try uniqueSlot(uri)
            guard let token = slot.token else { throw PKCS11Error.failed("C_GetTokenInfo", CKR_TOKEN_NOT_PRESENT) }
            return try withSession(slot, login: true, pin: pin, table: &table) { (session: CK_SESSION_HANDLE) throws -> PKCS11KeyObject in
                let (publicHandle, privateHandle) = try generate(type, label: label, id: id, token: token, session: session)
                try requireSignOnly(privateKey: privateHandle, publicKey: publicHandle, label: label, session: session)
                let keyType: PKCS11KeyType = (type == .p256 || type == .p384) ? .ec : type == .ed25519 ? .ecEdwards : .rsa
                var described = try describe(
                    slot: slot, label: label, id: id, keyType: keyType, privateHandle: privateHandle, publicHandle: publicHandle,
                    always: false, session: session, policy: policy)
                guard id.isEmpty else { return described }
                // No id asked for: the key's own (a SHA-1, as OpenSC derives it; docs/pkcs11.md), set on both halves.
                let intrinsic = Self.intrinsicID(of: try described.requirePublicKey())
                try setID(intrinsic, on: [publicHandle, privateHandle], session: session)
                described = try describe(
                    slot: slot, label: label, id: intrinsic, keyType: keyType, privateHandle: privateHandle, publicHandle: publicHandle,
                    always: false, session: session, policy: policy)
                return described
            }
        }
    }

    /// The id a key gets when none is asked for: SHA-1 over its public key's intrinsic value,
    /// as OpenSC's tools derive it — the RSA modulus (unsigned, minimal), the uncompressed EC
    /// point, the 32 bytes of an Ed25519 key — so other tools can select it by the same id.
    public static func intrinsicID(of key: PublicKey) -> [UInt8] {
        let value: [UInt8]
        if let rsa = key.rsaKey, let modulus = try? rsa.getKeyPrimitives().modulus {
            value = Array(Array(modulus).drop { $0 == 0 })
        } else if let ed25519 = key.ed25519Key {
            value = Array(ed25519.rawRepresentation)
        } else {
            // The SPKI of a P-256/P-384 key ends with its uncompressed point.
            let spki = key.spkiDER
            value = Array(spki.suffix(key.kind == .p256 ? 65 : 97))
        }
        return Array(Insecure.SHA1.hash(data: value))
    }

    // MARK: Sign only

    /// What a generated private key must not do besides signing, each a `CK_BBOOL` made false.
    static let forbiddenPrivateKeyUses: [(attribute: CK_ATTRIBUTE_TYPE, name: String)] = [
        (CKA_DECRYPT, "CKA_DECRYPT"), (CKA_UNWRAP, "CKA_UNWRAP"), (CKA_DERIVE, "CKA_DERIVE"), (CKA_SIGN_RECOVER, "CKA_SIGN_RECOVER"),
    ]

    /// What a generated public key must not do besides verifying, each a `CK_BBOOL` made false.
    static let forbiddenPublicKeyUses: [(attribute: CK_ATTRIBUTE_TYPE, name: String)] = [
        (CKA_ENCRYPT, "CKA_ENCRYPT"), (CKA_WRAP, "CKA_WRAP"), (CKA_VERIFY_RECOVER, "CKA_VERIFY_RECOVER"), (CKA_DERIVE, "CKA_DERIVE"),
    ]

    /// Reads back the uses the templates made false; when the token set one anyway, or does
    /// not report it, destroys both objects and throws naming the attribute.
    private func requireSignOnly(privateKey: CK_OBJECT_HANDLE, publicKey: CK_OBJECT_HANDLE, label: String, session: CK_SESSION_HANDLE) throws {
        let problem: String?
        do {
            problem = try signOnlyProblem(privateKey: privateKey, publicKey: publicKey, session: session)
        } catch {
            _ = destroy([privateKey, publicKey], label: label, session: session)
            throw error
        }
        guard let problem else { return }
        let outcome = destroy([privateKey, publicKey], label: label, session: session)
        throw PKCS11Error.misbehaved("C_GenerateKeyPair", "\(problem); \(outcome) (Signet makes token keys that can only sign)")
    }

    /// The first forbidden use the new pair has, said for a message; nil when it has none.
    private func signOnlyProblem(privateKey: CK_OBJECT_HANDLE, publicKey: CK_OBJECT_HANDLE, session: CK_SESSION_HANDLE) throws -> String? {
        let halves = [(privateKey, "private", Self.forbiddenPrivateKeyUses), (publicKey, "public", Self.forbiddenPublicKeyUses)]
        for (handle, half, uses) in halves {
            for use in uses {
                guard let value = try attribute(use.attribute, of: handle, session: session) else {
                    return "the token does not report \(use.name) of the new \(half) key, so Signet cannot tell that the key only signs"
                }
                guard value.count == 1 else {
                    return "the token reports \(use.name) of the new \(half) key in \(value.count) bytes, where a CK_BBOOL is one"
                }
                if value[0] != 0 {
                    return "the token made the \(half) key with \(use.name) true although Signet asked for false"
                }
            }
        }
        return nil
    }

    /// Destroys `handles` (a key pair that must not stay); says whether that worked.
    private func destroy(_ handles: [CK_OBJECT_HANDLE], label: String, session: CK_SESSION_HANDLE) -> String {
        let remedy = "delete the key pair labelled \(PKCS11Error.shown(label)) with the token's own tools"
        guard let destroyCall = functions.pointee.C_DestroyObject else {
            return "the module has no C_DestroyObject, so the new key pair is still on the token: \(remedy)"
        }
        var failures: [String] = []
        for handle in handles {
            let rv = destroyCall(session, handle)
            if rv != CKR_OK { failures.append(PKCS11Error.returnValueName(rv)) }
        }
        if failures.isEmpty { return "the new key pair was destroyed" }
        return "the new key pair could not be destroyed (C_DestroyObject: \(failures.joined(separator: ", "))): \(remedy)"
    }

    /// Sets `CKA_ID` on `handles`.
    private func setID(_ id: [UInt8], on handles: [CK_OBJECT_HANDLE], session: CK_SESSION_HANDLE) throws {
        guard let setCall = functions.pointee.C_SetAttributeValue else { throw PKCS11Error.missing("C_SetAttributeValue") }
        for handle in handles {
            var template = AttributeTemplate()
            template.add(CKA_ID, bytes: id)
            let rv: CK_RV = try template.withAttributes { attributes, count in setCall(session, handle, attributes, count) }
            guard rv == CKR_OK else { throw PKCS11Error.failed("C_SetAttributeValue", rv) }
        }
    }

    /// Makes the two objects; returns the public key's handle, then the private key's.
    private func generate(
        _ type: KeyGenerationType, label: String, id: [UInt8], token: PKCS11TokenInfo, session: CK_SESSION_HANDLE
    ) throws -> (CK_OBJECT_HANDLE, CK_OBJECT_HANDLE) {
        guard let generateCall = functions.pointee.C_GenerateKeyPair else { throw PKCS11Error.missing("C_GenerateKeyPair") }
        var publicTemplate = AttributeTemplate()
        publicTemplate.add(CKA_TOKEN, bool: true)
        publicTemplate.add(CKA_PRIVATE, bool: false)
        publicTemplate.add(CKA_VERIFY, bool: true)
        for use in Self.forbiddenPublicKeyUses { publicTemplate.add(use.attribute, bool: false) }
        publicTemplate.add(CKA_LABEL, text: label)
        if !id.isEmpty { publicTemplate.add(CKA_ID, bytes: id) }
        var privateTemplate = AttributeTemplate()
        privateTemplate.add(CKA_TOKEN, bool: true)
        privateTemplate.add(CKA_PRIVATE, bool: true)
        privateTemplate.add(CKA_SENSITIVE, bool: true)
        privateTemplate.add(CKA_EXTRACTABLE, bool: false)
        privateTemplate.add(CKA_SIGN, bool: true)
        for use in Self.forbiddenPrivateKeyUses { privateTemplate.add(use.attribute, bool: false) }
        privateTemplate.add(CKA_LABEL, text: label)
        if !id.isEmpty { privateTemplate.add(CKA_ID, bytes: id) }

        let mechanismType: CK_MECHANISM_TYPE
        let mechanismName: String
        // The CKA_EC_PARAMS forms to try in turn; one empty entry for RSA, which has none.
        var parameterForms: [[UInt8]] = [[]]
        switch type {
        case .p256, .p384:
            mechanismType = CKM_EC_KEY_PAIR_GEN
            mechanismName = "CKM_EC_KEY_PAIR_GEN"
            parameterForms = [type == .p256 ? CurveParameters.p256 : CurveParameters.p384]
        case .ed25519:
            mechanismType = CKM_EC_EDWARDS_KEY_PAIR_GEN
            mechanismName = "CKM_EC_EDWARDS_KEY_PAIR_GEN"
            parameterForms = [CurveParameters.ed25519, CurveParameters.edwards25519]
        case .rsa1024, .rsa2048, .rsa3072, .rsa4096:
            mechanismType = CKM_RSA_PKCS_KEY_PAIR_GEN
            mechanismName = "CKM_RSA_PKCS_KEY_PAIR_GEN"
            let bits: CK_ULONG = type == .rsa1024 ? 1024 : type == .rsa2048 ? 2048 : type == .rsa3072 ? 3072 : 4096
            publicTemplate.add(CKA_MODULUS_BITS, ulong: bits)
            publicTemplate.add(CKA_PUBLIC_EXPONENT, bytes: [0x01, 0x00, 0x01])
        }

        var lastFailure: CK_RV = CKR_OK
        for parameters in parameterForms {
            var attempt = publicTemplate
            if !parameters.isEmpty { attempt.add(CKA_EC_PARAMS, bytes: parameters) }
            var mechanism = CK_MECHANISM(mechanism: mechanismType, pParameter: nil, ulParameterLen: 0)
            var publicHandle: CK_OBJECT_HANDLE = 0
            var privateHandle: CK_OBJECT_HANDLE = 0
            let rv: CK_RV = try attempt.withAttributes { publicAttributes, publicCount in
                try privateTemplate.withAttributes { privateAttributes, privateCount in
                    generateCall(session, &mechanism, publicAttributes, publicCount, privateAttributes, privateCount, &publicHandle, &privateHandle)
                }
            }
            switch rv {
            case CKR_OK:
                return (publicHandle, privateHandle)
            case CKR_MECHANISM_INVALID:
                throw PKCS11Error.unsupportedMechanism(token: token.label, mechanism: mechanismName)
            case CKR_ATTRIBUTE_VALUE_INVALID, CKR_DOMAIN_PARAMS_INVALID, CKR_CURVE_NOT_SUPPORTED, CKR_TEMPLATE_INCONSISTENT:
                lastFailure = rv  // perhaps the other form of the curve's parameters
            case CKR_KEY_SIZE_RANGE:
                throw PKCS11Error.unsupportedMechanism(token: token.label, mechanism: "\(mechanismName) for \(type.rawValue) keys")
            case CKR_ATTRIBUTE_TYPE_INVALID:
                // Never retried without them: a key that could also decrypt is not made at all.
                let names = Set((Self.forbiddenPrivateKeyUses + Self.forbiddenPublicKeyUses).map { $0.name }).sorted()
                throw PKCS11Error.failed(
                    "C_GenerateKeyPair", rv,
                    "the token does not accept one of the attributes that keep a key to signing (\(names.joined(separator: ", ")) "
                        + "set to false), and Signet makes no key that could do more")
            default:
                throw PKCS11Error.failed("C_GenerateKeyPair", rv)
            }
        }
        if lastFailure == CKR_CURVE_NOT_SUPPORTED || lastFailure == CKR_DOMAIN_PARAMS_INVALID {
            throw PKCS11Error.unsupportedMechanism(token: token.label, mechanism: "\(mechanismName) for \(type.rawValue) keys")
        }
        throw PKCS11Error.failed("C_GenerateKeyPair", lastFailure)
    }
}
