import RawStructuredFieldValues

/// The signature parameters of RFC 9421 §2.3.
public struct SignatureParameters: Sendable, Equatable {
    /// When the signature was made (Unix seconds).
    public var created: Int64?
    /// When it stops being valid (Unix seconds).
    public var expires: Int64?
    /// A value used once, against replay.
    public var nonce: String?
    /// The algorithm name; when present it must match the key's algorithm.
    public var algorithm: String?
    /// Which key made the signature.
    public var keyID: String?
    /// An application-specific tag.
    public var tag: String?

    /// Parameters for a new signature; those left nil are not written. Times are Unix seconds.
    public init(created: Int64? = nil, expires: Int64? = nil, nonce: String? = nil, algorithm: String? = nil, keyID: String? = nil, tag: String? = nil) {
        self.created = created
        self.expires = expires
        self.nonce = nonce
        self.algorithm = algorithm
        self.keyID = keyID
        self.tag = tag
    }
}

/// One signature's input: the covered components in order and the parameters, as
/// `Signature-Input` carries them under a label.
public struct SignatureInput: Sendable, Equatable {
    /// The covered components, in the order they are signed.
    public let components: [SignatureComponent]
    /// The parameters.
    public let parameters: SignatureParameters
    /// Where the `@signature-params` value comes from.
    enum Source: Sendable {
        /// An inner list as received or built: the value is its serialisation.
        case innerList(InnerList)
        /// Canonical text ``SignatureFieldScanner`` read: the value itself.
        case canonical(String)
    }

    let source: Source

    /// Builds an input from components and parameters (in the order created, expires,
    /// nonce, alg, keyid, tag).
    public init(components: [SignatureComponent], parameters: SignatureParameters) throws {
        try Self.checkDistinct(components, field: "components")
        var list: OrderedMap<String, RFC9651BareItem> = [:]
        if let created = parameters.created { list["created"] = .integer(created) }
        if let expires = parameters.expires { list["expires"] = .integer(expires) }
        if let nonce = parameters.nonce { list["nonce"] = .string(nonce) }
        if let algorithm = parameters.algorithm { list["alg"] = .string(algorithm) }
        if let keyID = parameters.keyID { list["keyid"] = .string(keyID) }
        if let tag = parameters.tag { list["tag"] = .string(tag) }
        self.components = components
        self.parameters = parameters
        var items = BareInnerList()
        for component in components { items.append(component.item) }
        self.source = .innerList(InnerList(bareInnerList: items, parameters: list))
        _ = try serializedParameters()
    }

    /// Reads a received `Signature-Input` member.
    init(member: ItemOrInnerList, label: String) throws {
        let field = "Signature-Input (\(label))"
        guard case .innerList(let list) = member else { throw HTTPSignatureError.malformedField(field: field, detail: "must be an inner list of components") }
        var components: [SignatureComponent] = []
        for item in list.bareInnerList { components.append(try SignatureComponent(item: item, field: field)) }
        try Self.checkDistinct(components, field: field)
        var parameters = SignatureParameters()
        for (name, value) in list.rfc9651Parameters {
            switch (name, value) {
            case ("created", .integer(let v)): parameters.created = v
            case ("expires", .integer(let v)): parameters.expires = v
            case ("nonce", .string(let v)): parameters.nonce = v
            case ("alg", .string(let v)): parameters.algorithm = v
            case ("keyid", .string(let v)): parameters.keyID = v
            case ("tag", .string(let v)): parameters.tag = v
            case ("created", _), ("expires", _):
                throw HTTPSignatureError.malformedField(field: field, detail: "\(name) must be an integer")
            case ("nonce", _), ("alg", _), ("keyid", _), ("tag", _):
                throw HTTPSignatureError.malformedField(field: field, detail: "\(name) must be a string")
            default: break  // RFC 9421 allows other parameters; they are signed as received.
            }
        }
        self.components = components
        self.parameters = parameters
        self.source = .innerList(list)
    }

    /// An input ``SignatureFieldScanner`` read from canonical text.
    init(scanned: SignatureFieldScanner.Input) {
        components = scanned.components
        parameters = scanned.parameters
        source = .canonical(scanned.serialized)
    }

    /// The most components one signature may cover. RFC 9421 sets no limit; real signatures
    /// cover a handful, and each component costs a look-up when the base is built, so a
    /// signature listing thousands is refused before anything is done with it.
    public static let maximumComponents = 64
    /// The most parameters one component or signature may carry (RFC 9421 defines six for a
    /// signature and five for a component).
    public static let maximumParameters = 16

    /// What the parser of a signature field takes at most (the member count is the caller's).
    static let parseLimits = StructuredDictionaryParser.Limits(
        members: .max, innerListItems: maximumComponents, parameters: maximumParameters)

    /// Refuses more than ``maximumComponents`` components, and a component listed twice. A
    /// pairwise scan up to 16 (inputs list a handful of components, and hashing each costs
    /// more than comparing them), a set beyond.
    static func checkDistinct(_ components: [SignatureComponent], field: String) throws {
        guard components.count <= maximumComponents else {
            throw HTTPSignatureError.tooLarge(what: "the number of components one signature covers", limit: maximumComponents)
        }
        if components.count <= 16 {
            for index in components.indices.dropFirst() where components[..<index].contains(components[index]) {
                throw HTTPSignatureError.malformedField(field: field, detail: "component \(components[index]) is listed twice")
            }
            return
        }
        var seen = Set<SignatureComponent>()
        for component in components where !seen.insert(component).inserted {
            throw HTTPSignatureError.malformedField(field: field, detail: "component \(component) is listed twice")
        }
    }

    /// The `@signature-params` value: the inner list serialised.
    public func serializedParameters() throws -> String {
        let innerList: InnerList
        switch source {
        case .canonical(let text): return text
        case .innerList(let list): innerList = list
        }
        if let fast = InnerListSerializer.serialize(innerList) { return fast }
        do {
            return try Self.serialize(.innerList(innerList))
        } catch {
            throw HTTPSignatureError.invalidArgument(detail: "a signature parameter cannot be serialised (strings must be printable ASCII)")
        }
    }

    /// The signature base of RFC 9421 §2.5 for `message`.
    public func signatureBase(for message: SignedMessage) throws -> String {
        String(decoding: try signatureBaseBytes(for: message), as: UTF8.self)
    }

    /// The signature base as the bytes that are signed, built without intermediate strings.
    func signatureBaseBytes(for message: SignedMessage) throws -> [UInt8] {
        var parsed = ParsedDictionaries()
        return try signatureBaseBytes(for: message, parsed: &parsed)
    }

    /// The signature base, with the dictionary fields and structured fields already parsed for
    /// another signature of the same message (`parsed`) reused, and those parsed here kept.
    func signatureBaseBytes(for message: SignedMessage, parsed: inout ParsedDictionaries) throws -> [UInt8] {
        var base: [UInt8] = []
        base.reserveCapacity(256)
        for component in components {
            component.appendIdentifier(to: &base)
            base.append(contentsOf: ": ".utf8)
            base.append(contentsOf: try message.value(of: component, parsed: &parsed).utf8)
            base.append(UInt8(ascii: "\n"))
        }
        base.append(contentsOf: "\"@signature-params\": ".utf8)
        base.append(contentsOf: try serializedParameters().utf8)
        return base
    }

    /// Serialises one dictionary member value (an item or an inner list) on its own.
    static func serialize(_ member: ItemOrInnerList) throws -> String {
        var serializer = StructuredFieldValueSerializer()
        switch member {
        case .innerList: return String(decoding: try serializer.writeListFieldValue([member]), as: UTF8.self)
        case .item(let item): return String(decoding: try serializer.writeItemFieldValue(item), as: UTF8.self)
        }
    }

    /// Equal when the components, in order, and the parameters match; how a received input was
    /// serialised (and any parameter Signet does not read) is not compared.
    public static func == (lhs: SignatureInput, rhs: SignatureInput) -> Bool {
        lhs.components == rhs.components && lhs.parameters == rhs.parameters
    }
}
