import CPKCS11
import SignetCore

/// The algorithm of a key on a token (`CKA_KEY_TYPE`).
public enum PKCS11KeyType: Sendable, Equatable, CustomStringConvertible {
    /// `CKK_RSA`.
    case rsa
    /// `CKK_EC`: ECDSA keys (Signet uses P-256 and P-384).
    case ec
    /// `CKK_EC_EDWARDS`: EdDSA keys (Signet uses Ed25519).
    case ecEdwards
    /// Any other key type, by its number.
    case other(UInt)

    init(_ raw: CK_KEY_TYPE) {
        switch raw {
        case CKK_RSA: self = .rsa
        case CKK_EC: self = .ec
        case CKK_EC_EDWARDS: self = .ecEdwards
        default: self = .other(UInt(raw))
        }
    }

    /// `RSA`, `EC`, `EC-Edwards` or `key type 0x…`.
    public var description: String {
        switch self {
        case .rsa: return "RSA"
        case .ec: return "EC"
        case .ecEdwards: return "EC-Edwards"
        case .other(let raw): return "key type 0x" + String(raw, radix: 16, uppercase: true)
        }
    }
}

/// A key found on a token: its private key and public key objects (either may be missing), its
/// label and id, and its public key as Signet reads it.
public struct PKCS11KeyObject: Sendable, Equatable {
    /// The slot holding the token.
    public let slotID: UInt
    /// The token holding the key.
    public let token: PKCS11TokenInfo
    /// The key's label (`CKA_LABEL`, the URI's `object=`); empty when it has none.
    public let label: String
    /// The key's id (`CKA_ID`, the URI's `id=`); empty when it has none.
    public let id: [UInt8]
    /// The key's algorithm.
    public let keyType: PKCS11KeyType
    /// The private key object's handle; nil for a public key without a private one in view
    /// (not logged in, or none on the token).
    public let privateKeyHandle: UInt?
    /// The public key object's handle; nil when the token has none for this key.
    public let publicKeyHandle: UInt?
    /// The public key; nil when the key is of a kind Signet cannot use, or its public half
    /// cannot be read (``requirePublicKey()`` says why).
    public let publicKey: PublicKey?
    /// The key asks for the PIN before every signature (`CKA_ALWAYS_AUTHENTICATE`).
    public let alwaysAuthenticate: Bool
    /// Why ``publicKey`` is nil.
    let publicKeyProblem: String?

    /// The key's canonical URI: `pkcs11:token=…;object=…;id=%…;type=private` (`type=public`
    /// for a public key alone; `object` and `id` only when the key has them).
    public var uri: PKCS11URI {
        var uri = PKCS11URI()
        uri.token = token.label
        if !label.isEmpty { uri.object = label }
        if !id.isEmpty { uri.id = id }
        uri.type = privateKeyHandle != nil ? .privateKey : .publicKey
        return uri
    }

    /// The public key.
    /// - Throws: ``PKCS11Error/unsupportedKey(uri:detail:)`` when there is none Signet can use.
    public func requirePublicKey() throws -> PublicKey {
        guard let publicKey else {
            throw PKCS11Error.unsupportedKey(uri: uri.description, detail: publicKeyProblem ?? "its public key cannot be read")
        }
        return publicKey
    }
}

extension PKCS11Module {
    // MARK: Finding keys

    /// The keys that fit `uri` on every token it selects: private keys, logging in with `pin`
    /// where the token requires it, or, for `type=public`, public keys (no login).
    ///
    /// - Parameter policy: whether RSA keys of 1024 to 2047 bits are usable; a key refused by
    ///   it is still listed, without a ``PKCS11KeyObject/publicKey``.
    /// - Throws: ``PKCS11Error`` (``PKCS11Error/unsupportedKey(uri:detail:)`` for a `type` that
    ///   names no key), or whatever `pin` throws.
    public func findKeys(matching uri: PKCS11URI, pin: any PKCS11PINProvider = PKCS11NoPIN(), policy: KeyPolicy = .strict) throws -> [PKCS11KeyObject] {
        let wanted = uri.type ?? .privateKey
        guard wanted == .privateKey || wanted == .publicKey else {
            throw PKCS11Error.unsupportedKey(uri: uri.description, detail: "type=\(wanted.rawValue) names no key pair (use type=private or type=public)")
        }
        return try locked { (table: inout SessionTable) throws -> [PKCS11KeyObject] in
            var keys: [PKCS11KeyObject] = []
            for slot in try matchingSlots(uri) {
                keys += try withSession(slot, login: wanted == .privateKey, pin: pin, table: &table) { (session: CK_SESSION_HANDLE) throws -> [PKCS11KeyObject] in
                    try findHandles(wanted, uri: uri, session: session).map { handle in
                        try wanted == .privateKey
                            ? describePrivateKey(handle, slot: slot, session: session, policy: policy)
                            : describePublicKey(handle, slot: slot, session: session, policy: policy)
                    }
                }
            }
            return keys
        }
    }

    /// The one key that fits `uri` (a private key unless the URI says `type=public`).
    /// - Throws: ``PKCS11Error/noMatch(uri:detail:)`` naming what there is instead, or
    ///   ``PKCS11Error/ambiguous(uri:count:)``.
    public func uniqueKey(matching uri: PKCS11URI, pin: any PKCS11PINProvider = PKCS11NoPIN(), policy: KeyPolicy = .strict) throws -> PKCS11KeyObject {
        let keys = try findKeys(matching: uri, pin: pin, policy: policy)
        if keys.count == 1 { return keys[0] }
        if keys.count > 1 { throw PKCS11Error.ambiguous(uri: uri.description, count: keys.count) }
        let detail = (try? noMatchDetail(uri)) ?? "no such key"
        throw PKCS11Error.noMatch(uri: uri.description, detail: detail)
    }

    /// The public key `uri` names: a public key object read without logging in when there is
    /// one (and the URI does not say `type=private`), else the public half of the private key.
    public func publicKey(matching uri: PKCS11URI, pin: any PKCS11PINProvider = PKCS11NoPIN(), policy: KeyPolicy = .strict) throws -> PublicKey {
        if uri.type == nil || uri.type == .publicKey {
            var publicURI = uri
            publicURI.type = .publicKey
            let found = try findKeys(matching: publicURI, pin: pin, policy: policy)
            if found.count == 1 { return try found[0].requirePublicKey() }
            if found.count > 1 { throw PKCS11Error.ambiguous(uri: uri.description, count: found.count) }
            if uri.type == .publicKey {
                throw PKCS11Error.noMatch(uri: uri.description, detail: (try? noMatchDetail(publicURI)) ?? "no such key")
            }
        }
        return try uniqueKey(matching: uri, pin: pin, policy: policy).requirePublicKey()
    }

    /// Every key that fits `uri` (ignoring `type` other than `private` and `public`), for
    /// listings: private keys with their public halves, then public keys that have no private
    /// key in view. Without `pin`, nothing logs in, so tokens that hide private keys until then
    /// show only their public keys.
    public func listKeys(matching uri: PKCS11URI, pin: (any PKCS11PINProvider)? = nil, policy: KeyPolicy = .strict) throws -> [PKCS11KeyObject] {
        try locked { (table: inout SessionTable) throws -> [PKCS11KeyObject] in
            var keys: [PKCS11KeyObject] = []
            for slot in try matchingSlots(uri) {
                keys += try withSession(slot, login: pin != nil, pin: pin ?? PKCS11NoPIN(), table: &table) { (session: CK_SESSION_HANDLE) throws -> [PKCS11KeyObject] in
                    var found: [PKCS11KeyObject] = []
                    if uri.type != .publicKey {
                        for handle in try findHandles(.privateKey, uri: uri, session: session) {
                            found.append(try describePrivateKey(handle, slot: slot, session: session, policy: policy))
                        }
                    }
                    if uri.type != .privateKey {
                        let paired = Set(found.compactMap { $0.publicKeyHandle })
                        for handle in try findHandles(.publicKey, uri: uri, session: session) where !paired.contains(UInt(handle)) {
                            found.append(try describePublicKey(handle, slot: slot, session: session, policy: policy))
                        }
                    }
                    return found
                }
            }
            return keys
        }
    }

    /// The objects of class `kind` whose label and id fit the URI.
    func findHandles(_ kind: PKCS11ObjectType, uri: PKCS11URI, session: CK_SESSION_HANDLE) throws -> [CK_OBJECT_HANDLE] {
        var template = AttributeTemplate()
        template.add(CKA_CLASS, ulong: kind == .privateKey ? CKO_PRIVATE_KEY : CKO_PUBLIC_KEY)
        if let object = uri.object { template.add(CKA_LABEL, text: object) }
        if let id = uri.id { template.add(CKA_ID, bytes: id) }
        return try findObjects(template, session: session)
    }

    /// What there is on the tokens `uri` selects, when no key fits it.
    func noMatchDetail(_ uri: PKCS11URI) throws -> String {
        try locked { (table: inout SessionTable) throws -> String in
            let slots = try matchingSlots(uri)
            guard !slots.isEmpty else { return try tokenMismatchDetail(uri) }
            let kind = uri.type ?? .privateKey
            var wanted = uri
            wanted.object = nil
            wanted.id = nil
            var criteria: [String] = []
            if let object = uri.object { criteria.append("object=" + PKCS11Error.shown(object)) }
            if let id = uri.id { criteria.append("id=" + Hex.encode(id)) }
            var parts: [String] = []
            for slot in slots.prefix(4) {
                let label = slot.token?.label ?? ""
                // Listing the others needs no login: the search that found nothing was made with one
                // where the token asks for it, and the session is still logged in.
                let others = try withSession(slot, login: false, pin: PKCS11NoPIN(), table: &table) { (session: CK_SESSION_HANDLE) throws -> [String] in
                    try findHandles(kind, uri: wanted, session: session).prefix(8).map { (handle: CK_OBJECT_HANDLE) throws -> String in
                        let name = try attribute(CKA_LABEL, of: handle, session: session).map { String(decoding: $0, as: UTF8.self) } ?? ""
                        let id = try attribute(CKA_ID, of: handle, session: session) ?? []
                        return PKCS11Error.shown(name) + (id.isEmpty ? "" : " (id \(Hex.encode(id)))")
                    }
                }
                let missing = criteria.isEmpty ? "no \(kind.rawValue) key" : "no \(kind.rawValue) key with \(criteria.joined(separator: " "))"
                parts.append("\(missing) on token \(PKCS11Error.shown(label)); " + (others.isEmpty ? "it has none" : "it has \(others.joined(separator: ", "))"))
            }
            return parts.joined(separator: "; ")
        }
    }

    // MARK: Describing keys

    /// A private key object, with its public half: the public key object with the same id, or
    /// with the same label when the key has no id (one of the key's type, when several fit).
    func describePrivateKey(_ handle: CK_OBJECT_HANDLE, slot: PKCS11SlotInfo, session: CK_SESSION_HANDLE, policy: KeyPolicy) throws -> PKCS11KeyObject {
        let (label, id, keyType) = try identity(of: handle, session: session)
        let always = try boolAttribute(CKA_ALWAYS_AUTHENTICATE, of: handle, session: session, fallback: false)
        var publicHandle: CK_OBJECT_HANDLE? = nil
        if !id.isEmpty || !label.isEmpty {
            var template = AttributeTemplate()
            template.add(CKA_CLASS, ulong: CKO_PUBLIC_KEY)
            if !id.isEmpty { template.add(CKA_ID, bytes: id) } else { template.add(CKA_LABEL, text: label) }
            var candidates = try findObjects(template, session: session)
            if candidates.count > 1 {
                candidates = try candidates.filter { try ulongAttribute(CKA_KEY_TYPE, of: $0, session: session).map { PKCS11KeyType($0) } == keyType }
            }
            if candidates.count == 1 { publicHandle = candidates[0] }
        }
        return try describe(
            slot: slot, label: label, id: id, keyType: keyType, privateHandle: handle, publicHandle: publicHandle, always: always,
            session: session, policy: policy)
    }

    /// A public key object alone.
    func describePublicKey(_ handle: CK_OBJECT_HANDLE, slot: PKCS11SlotInfo, session: CK_SESSION_HANDLE, policy: KeyPolicy) throws -> PKCS11KeyObject {
        let (label, id, keyType) = try identity(of: handle, session: session)
        return try describe(
            slot: slot, label: label, id: id, keyType: keyType, privateHandle: nil, publicHandle: handle, always: false,
            session: session, policy: policy)
    }

    private func identity(of handle: CK_OBJECT_HANDLE, session: CK_SESSION_HANDLE) throws -> (String, [UInt8], PKCS11KeyType) {
        let label = try attribute(CKA_LABEL, of: handle, session: session).map { String(decoding: $0, as: UTF8.self) } ?? ""
        let id = try attribute(CKA_ID, of: handle, session: session) ?? []
        guard let type = try ulongAttribute(CKA_KEY_TYPE, of: handle, session: session) else {
            throw PKCS11Error.misbehaved("C_GetAttributeValue", "a key object without CKA_KEY_TYPE")
        }
        return (label, id, PKCS11KeyType(type))
    }

    func describe(
        slot: PKCS11SlotInfo, label: String, id: [UInt8], keyType: PKCS11KeyType, privateHandle: CK_OBJECT_HANDLE?,
        publicHandle: CK_OBJECT_HANDLE?, always: Bool, session: CK_SESSION_HANDLE, policy: KeyPolicy
    ) throws -> PKCS11KeyObject {
        guard let token = slot.token else { throw PKCS11Error.failed("C_GetTokenInfo", CKR_TOKEN_NOT_PRESENT) }
        var key = PKCS11KeyObject(
            slotID: slot.id, token: token, label: label, id: id, keyType: keyType, privateKeyHandle: privateHandle.map { UInt($0) },
            publicKeyHandle: publicHandle.map { UInt($0) }, publicKey: nil, alwaysAuthenticate: always, publicKeyProblem: nil)
        // Read from the public key object, or, when there is none, from the private key (RSA
        // private keys carry the modulus and exponent; EC private keys seldom carry the point).
        guard let source = publicHandle ?? privateHandle else { return key }
        let read: PublicKey
        do {
            read = try readPublicKey(source, keyType: keyType, fromPrivateKey: publicHandle == nil, session: session, name: key.uri.description, policy: policy)
        } catch let error as PKCS11Error {
            if error.isStaleSession { throw error }
            if case .unsupportedKey(_, let detail) = error { return key.replacingProblem(detail) }
            return key.replacingProblem("\(error)")
        } catch {
            return key.replacingProblem("\(error)")
        }
        key = PKCS11KeyObject(
            slotID: key.slotID, token: token, label: label, id: id, keyType: keyType, privateKeyHandle: key.privateKeyHandle,
            publicKeyHandle: key.publicKeyHandle, publicKey: read, alwaysAuthenticate: always, publicKeyProblem: nil)
        return key
    }
}

extension PKCS11KeyObject {
    /// The same key without a public key, for the reason given.
    func replacingProblem(_ problem: String) -> PKCS11KeyObject {
        PKCS11KeyObject(
            slotID: slotID, token: token, label: label, id: id, keyType: keyType, privateKeyHandle: privateKeyHandle,
            publicKeyHandle: publicKeyHandle, publicKey: nil, alwaysAuthenticate: alwaysAuthenticate, publicKeyProblem: problem)
    }
}
