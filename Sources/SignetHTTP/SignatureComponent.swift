import RawStructuredFieldValues

/// One component identifier of RFC 9421 §2: a derived component (`@method`, `@query-param`
/// …) or an HTTP field name, with its parameters (`sf`, `key`, `bs`, `req`, `name`).
public struct SignatureComponent: Sendable, Hashable, CustomStringConvertible {
    /// The derived components Signet resolves (RFC 9421 §2.2).
    public static let derived: Set<String> = [
        "@method", "@target-uri", "@authority", "@scheme", "@request-target", "@path", "@query", "@query-param", "@status",
    ]

    /// The name: `@method`, or a lower-case field name such as `content-digest`.
    public let name: String
    /// Re-serialise the field as a structured field (`sf`).
    public var structured = false
    /// The dictionary member to take (`key`).
    public var key: String?
    /// Wrap each field line as a byte sequence (`bs`).
    public var byteSequence = false
    /// Take the component from the request that a response answers (`req`).
    public var fromRequest = false
    /// The query parameter's name for `@query-param`, percent-encoded as RFC 9421 §2.2.8 has it.
    public var parameterName: String?
    /// The identifier exactly as a received `Signature-Input` had it (its parameter order is
    /// what the signer signed); nil for components made here.
    private var received: Item?

    /// A component with no parameters; a field name is lower-cased.
    public init(_ name: String) {
        // Checked in this order: the scan is cheaper than hasPrefix, and nearly always false.
        self.name = name.hasCapitalOrNonASCII && !name.hasPrefix("@") ? name.lowercased() : name
    }

    /// `@method`: the request method, such as `POST`.
    public static let method = SignatureComponent("@method")
    /// `@target-uri`: the full request URI, `scheme://authority/path?query`.
    public static let targetURI = SignatureComponent("@target-uri")
    /// `@authority`: the host and port, lower-cased, without the scheme's default port.
    public static let authority = SignatureComponent("@authority")
    /// `@path`: the request target's path without the query (`/` when empty).
    public static let path = SignatureComponent("@path")
    /// `@query`: the query with its leading `?` (`?` alone when there is none).
    public static let query = SignatureComponent("@query")
    /// `@status`: a response's three-digit status code.
    public static let status = SignatureComponent("@status")
    /// The `Content-Digest` field (RFC 9530), which ties the signature to the body.
    public static let contentDigest = SignatureComponent("content-digest")

    /// `@query-param;name="…"` for one query parameter (its name given decoded).
    public static func queryParameter(_ decodedName: String) -> SignatureComponent {
        var component = SignatureComponent("@query-param")
        component.parameterName = QueryParameters.encode(decodedName)
        return component
    }

    /// Parses what a user types: `@method`, `content-type`, `"@query-param";name="id"`,
    /// `example-dict;key="a"`, `example-dict;sf` (quotes optional around the name).
    public init(parsing text: String) throws {
        let quoted = text.hasPrefix("\"") ? text : Self.quoteName(text)
        var parser = StructuredFieldValueParser(Array(quoted.utf8))
        let item: Item
        do { item = try parser.parseItemFieldValue() } catch {
            throw HTTPSignatureError.invalidArgument(detail: "component \"\(text)\" is not a component identifier (e.g. @method, content-type, \"@query-param\";name=\"id\")")
        }
        try self.init(item: item, field: "component \"\(text)\"")
    }

    private static func quoteName(_ text: String) -> String {
        guard let semicolon = text.firstIndex(of: ";") else { return "\"\(text)\"" }
        return "\"\(text[..<semicolon])\"" + text[semicolon...]
    }

    /// Reads a component identifier from a parsed `Signature-Input` inner-list item.
    init(item: Item, field: String) throws {
        guard case .string(let name) = item.rfc9651BareItem, !name.isEmpty else {
            throw HTTPSignatureError.malformedField(field: field, detail: "a component identifier must be a non-empty string")
        }
        guard name == name.lowercased() else {
            throw HTTPSignatureError.malformedField(field: field, detail: "component \"\(name)\" must be lower case")
        }
        if name.hasPrefix("@") {
            guard Self.derived.contains(name) else {
                throw HTTPSignatureError.malformedField(field: field, detail: "unknown derived component \"\(name)\"")
            }
        } else {
            guard name.utf8.allSatisfy(Self.isTokenByte) else {
                throw HTTPSignatureError.malformedField(field: field, detail: "\"\(name)\" is not a field name")
            }
        }
        self.init(name)
        received = item
        for (parameter, value) in item.rfc9651Parameters {
            switch (parameter, value) {
            case ("sf", .bool(let flag)): structured = flag
            case ("bs", .bool(let flag)): byteSequence = flag
            case ("req", .bool(let flag)): fromRequest = flag
            case ("key", .string(let member)): key = member
            case ("name", .string(let parameter)): parameterName = parameter
            default:
                throw HTTPSignatureError.malformedField(field: field, detail: "component \"\(name)\": unsupported parameter \"\(parameter)\"")
            }
        }
        if isDerived {
            guard !structured, key == nil, !byteSequence else {
                throw HTTPSignatureError.malformedField(field: field, detail: "component \"\(name)\": sf, key and bs apply to fields only")
            }
            guard (name == "@query-param") == (parameterName != nil) else {
                throw HTTPSignatureError.malformedField(field: field, detail: "\"name\" goes with @query-param, and @query-param needs it")
            }
        } else {
            guard parameterName == nil else { throw HTTPSignatureError.malformedField(field: field, detail: "\"name\" goes with @query-param only") }
            guard !(byteSequence && (structured || key != nil)) else {
                throw HTTPSignatureError.malformedField(field: field, detail: "component \"\(name)\": bs cannot be combined with sf or key")
            }
        }
    }

    /// No parameters set.
    private var isBare: Bool { !structured && key == nil && !byteSequence && !fromRequest && parameterName == nil }

    /// Whether this is a derived component (`@…`).
    public var isDerived: Bool { name.hasPrefix("@") }

    /// The structured-field item that identifies the component in the signature base.
    var item: Item {
        if let received { return received }
        var parameters: OrderedMap<String, RFC9651BareItem> = [:]
        if let parameterName { parameters["name"] = .string(parameterName) }
        if structured { parameters["sf"] = .bool(true) }
        if let key { parameters["key"] = .string(key) }
        if byteSequence { parameters["bs"] = .bool(true) }
        if fromRequest { parameters["req"] = .bool(true) }
        return Item(bareItem: .string(name), parameters: parameters)
    }

    /// The identifier as it appears in a signature base line, e.g. `"@query-param";name="id"`.
    public var description: String {
        // Most components are a bare name that needs no escaping.
        if isPlainName { return "\"" + name + "\"" }
        var serializer = StructuredFieldValueSerializer()
        let bytes = (try? serializer.writeItemFieldValue(item)) ?? Array("\"\(name)\"".utf8)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A bare name that needs no escaping, written `"name"` (most components).
    private var isPlainName: Bool {
        isBare && (received?.rfc9651Parameters.isEmpty ?? true) && (isDerived ? Self.isKnownDerived(name) : name.utf8.allSatisfy(Self.isTokenByte))
    }

    /// Appends the identifier as it appears in a signature base line (``description``'s bytes).
    func appendIdentifier(to base: inout [UInt8]) {
        guard isPlainName else { return base.append(contentsOf: description.utf8) }
        base.append(UInt8(ascii: "\""))
        base.append(contentsOf: name.utf8)
        base.append(UInt8(ascii: "\""))
    }

    /// Whether `name` is one of ``derived`` (a switch: cheaper than hashing into the set).
    static func isKnownDerived(_ name: String) -> Bool {
        switch name {
        case "@method", "@target-uri", "@authority", "@scheme", "@request-target", "@path", "@query", "@query-param", "@status": return true
        default: return false
        }
    }

    /// Equal when the name and every parameter match, whatever order a received identifier wrote
    /// its parameters in.
    public static func == (lhs: SignatureComponent, rhs: SignatureComponent) -> Bool {
        lhs.name == rhs.name && lhs.structured == rhs.structured && lhs.key == rhs.key && lhs.byteSequence == rhs.byteSequence
            && lhs.fromRequest == rhs.fromRequest && lhs.parameterName == rhs.parameterName
    }

    /// Hashes the name and parameters, as `==` compares them.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(key)
        hasher.combine(parameterName)
        hasher.combine(structured)
        hasher.combine(byteSequence)
        hasher.combine(fromRequest)
    }

    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): return true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "*"),
            UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"),
            UInt8(ascii: "~"):
            return true
        default: return false
        }
    }
}

extension String {
    /// Whether `lowercased()` could change the string: it has an ASCII capital or a byte
    /// outside ASCII.
    var hasCapitalOrNonASCII: Bool {
        utf8.contains { $0 >= 0x80 || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }
    }

    /// `lowercased()`, without its copy when there is nothing to lower, as with nearly every
    /// field name, scheme and host.
    var lowercasedIfNeeded: String { hasCapitalOrNonASCII ? lowercased() : self }
}
