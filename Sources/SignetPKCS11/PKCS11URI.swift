/// The kind of object a URI's `type=` names (RFC 7512 §2.3).
public enum PKCS11ObjectType: String, Sendable, CaseIterable {
    /// `type=public`: a public key.
    case publicKey = "public"
    /// `type=private`: a private key.
    case privateKey = "private"
    /// `type=cert`: a certificate.
    case certificate = "cert"
    /// `type=secret-key`: a secret (symmetric) key.
    case secretKey = "secret-key"
    /// `type=data`: a data object.
    case data = "data"
}

/// A version as a URI's `library-version=M` or `M.N` gives it, or as a module reports it.
public struct PKCS11Version: Sendable, Equatable, CustomStringConvertible {
    /// The major version.
    public var major: UInt8
    /// The minor version; nil when a URI gives only the major one, which RFC 7512 reads as `M.0`.
    public var minor: UInt8?

    /// A version `major.minor`, or `major` alone.
    public init(major: UInt8, minor: UInt8? = nil) {
        self.major = major
        self.minor = minor
    }

    /// `M` or `M.N`, as written in a URI.
    public var description: String { minor.map { "\(major).\($0)" } ?? "\(major)" }
}

/// A `pkcs11:` URI (RFC 7512): which library, slot, token and object to use, and how to load
/// the module and obtain the PIN.
///
/// Parsing is strict: the `pkcs11:` prefix is required, an attribute may appear once, values
/// are percent-decoded (`%XX` in either case; a `%` that does not start one is an error, as is
/// a character the RFC requires to be encoded), unknown attributes are refused unless they are
/// vendor attributes (`x-…`, which are ignored), and the whole URI is at most 4 KiB. A nil
/// attribute matches anything.
public struct PKCS11URI: Sendable, Equatable, CustomStringConvertible {
    /// `token=`: the token's label.
    public var token: String?
    /// `manufacturer=`: the token's manufacturer.
    public var manufacturer: String?
    /// `serial=`: the token's serial number.
    public var serial: String?
    /// `model=`: the token's model.
    public var model: String?
    /// `library-manufacturer=`: the module's manufacturer.
    public var libraryManufacturer: String?
    /// `library-description=`: the module's description.
    public var libraryDescription: String?
    /// `library-version=`: the module's version.
    public var libraryVersion: PKCS11Version?
    /// `slot-id=`: the slot's number (decimal).
    public var slotID: UInt?
    /// `slot-description=`: the slot's description.
    public var slotDescription: String?
    /// `slot-manufacturer=`: the slot's manufacturer.
    public var slotManufacturer: String?
    /// `object=`: the object's label (`CKA_LABEL`).
    public var object: String?
    /// `id=`: the object's identifier (`CKA_ID`), binary.
    public var id: [UInt8]?
    /// `type=`: the kind of object.
    public var type: PKCS11ObjectType?
    /// `module-path=` (query): the module file to load.
    public var modulePath: String?
    /// `module-name=` (query): the module's name, looked up among the system's modules.
    public var moduleName: String?
    /// `pin-source=` (query): where the PIN is read from (Signet reads `file:` sources).
    public var pinSource: String?
    /// `pin-value=` (query): the PIN itself. Kept, so a caller can use or refuse it, but never
    /// written by ``description``.
    public var pinValue: String?

    /// The longest URI accepted, in bytes.
    public static let maximumLength = 4096

    /// The URI `pkcs11:`, which matches every token and object.
    public init() {}

    /// Parses `text`.
    /// - Throws: ``PKCS11Error/invalidURI(uri:detail:)``, whose message shows the URI with any
    ///   `pin-value` hidden.
    public init(parsing text: String) throws {
        let shown = Self.redacted(text)
        let bytes = Array(text.utf8)
        guard bytes.count <= Self.maximumLength else {
            throw PKCS11Error.invalidURI(uri: String(shown.prefix(48)) + "…", detail: "longer than \(Self.maximumLength) bytes")
        }
        let scheme = Array("pkcs11:".utf8)
        guard bytes.starts(with: scheme) else { throw PKCS11Error.invalidURI(uri: shown, detail: "it does not start with pkcs11:") }
        let rest = bytes[scheme.count...]
        let question = rest.firstIndex(of: UInt8(ascii: "?"))
        let path = rest[..<(question ?? rest.endIndex)]
        var seen: Set<String> = []
        if !path.isEmpty {
            for component in path.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: false) {
                let (name, value) = try Self.attribute(component, literal: Self.isPathLiteral, uri: shown)
                guard seen.insert(name).inserted else { throw PKCS11Error.invalidURI(uri: shown, detail: "\(name) appears twice") }
                try setPathAttribute(name, value, uri: shown)
            }
        }
        if let question, rest.index(after: question) < rest.endIndex {
            var afterPIN = false
            for component in rest[rest.index(after: question)...].split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: false) {
                // Perhaps the rest of the PIN: not to be named in a message.
                guard !afterPIN || Self.isKnownQueryAttribute(component) else {
                    throw PKCS11Error.invalidURI(uri: shown, detail: "what follows pin-value is not an attribute (an '&' in a PIN is written %26)")
                }
                let (name, value) = try Self.attribute(component, literal: Self.isQueryLiteral, uri: shown)
                guard seen.insert(name).inserted else { throw PKCS11Error.invalidURI(uri: shown, detail: "\(name) appears twice") }
                try setQueryAttribute(name, value, uri: shown)
                afterPIN = name == "pin-value"
            }
        }
        if pinSource != nil, pinValue != nil {
            throw PKCS11Error.invalidURI(uri: shown, detail: "pin-source and pin-value cannot both be given")
        }
    }

    /// The URI in canonical form: attributes in a fixed order, everything outside the RFC's
    /// unreserved and allowed characters percent-encoded (upper-case hex), `id` encoded byte by
    /// byte. A `pin-value` is never written; vendor attributes were dropped when parsing.
    public var description: String {
        var path: [String] = []
        func add(_ name: String, _ value: String?) {
            if let value { path.append(name + "=" + Self.encode(Array(value.utf8), literal: Self.isPathLiteral)) }
        }
        add("token", token)
        add("manufacturer", manufacturer)
        add("model", model)
        add("serial", serial)
        add("slot-description", slotDescription)
        add("slot-manufacturer", slotManufacturer)
        if let slotID { path.append("slot-id=\(slotID)") }
        add("library-description", libraryDescription)
        add("library-manufacturer", libraryManufacturer)
        if let libraryVersion { path.append("library-version=\(libraryVersion)") }
        add("object", object)
        if let id { path.append("id=" + Self.encode(id, literal: { _ in false })) }
        if let type { path.append("type=" + type.rawValue) }
        var query: [String] = []
        for (name, value) in [("module-name", moduleName), ("module-path", modulePath), ("pin-source", pinSource)] {
            if let value { query.append(name + "=" + Self.encode(Array(value.utf8), literal: Self.isQueryLiteral)) }
        }
        return "pkcs11:" + path.joined(separator: ";") + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
    }

    /// Whether the URI names an object (by `object`, `id` or `type`) rather than only a token.
    public var namesObject: Bool { object != nil || id != nil || type != nil }

    /// Whether any token attribute (`token`, `manufacturer`, `serial`, `model`) is given.
    public var namesToken: Bool { token != nil || manufacturer != nil || serial != nil || model != nil }

    /// Whether the module's own information fits the `library-…` attributes. A `library-version`
    /// without a minor version matches `M.0` only.
    public func matches(library: PKCS11LibraryInfo) -> Bool {
        if let libraryManufacturer, libraryManufacturer != library.manufacturer { return false }
        if let libraryDescription, libraryDescription != library.libraryDescription { return false }
        if let libraryVersion {
            guard libraryVersion.major == library.version.major, (libraryVersion.minor ?? 0) == (library.version.minor ?? 0) else { return false }
        }
        return true
    }

    /// Whether a token fits the `token`, `manufacturer`, `serial` and `model` attributes.
    public func matches(token info: PKCS11TokenInfo) -> Bool {
        if let token, token != info.label { return false }
        if let manufacturer, manufacturer != info.manufacturer { return false }
        if let serial, serial != info.serial { return false }
        if let model, model != info.model { return false }
        return true
    }

    /// Whether a slot fits the `slot-…` attributes and, when token attributes are given, holds
    /// a token that fits them.
    public func matches(slot: PKCS11SlotInfo) -> Bool {
        if let slotID, slotID != slot.id { return false }
        if let slotDescription, slotDescription != slot.slotDescription { return false }
        if let slotManufacturer, slotManufacturer != slot.manufacturer { return false }
        if namesToken {
            guard let token = slot.token, matches(token: token) else { return false }
        }
        return true
    }

    // MARK: Parsing

    private mutating func setPathAttribute(_ name: String, _ value: [UInt8], uri: String) throws {
        switch name {
        case "token": token = try Self.text(value, name, uri)
        case "manufacturer": manufacturer = try Self.text(value, name, uri)
        case "serial": serial = try Self.text(value, name, uri)
        case "model": model = try Self.text(value, name, uri)
        case "library-manufacturer": libraryManufacturer = try Self.text(value, name, uri)
        case "library-description": libraryDescription = try Self.text(value, name, uri)
        case "slot-description": slotDescription = try Self.text(value, name, uri)
        case "slot-manufacturer": slotManufacturer = try Self.text(value, name, uri)
        case "object": object = try Self.text(value, name, uri)
        case "id": id = value
        case "library-version":
            let parts = value.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
            guard parts.count <= 2, let major = Self.decimal(parts[0], maximum: 255),
                parts.count == 1 || Self.decimal(parts[1], maximum: 255) != nil
            else { throw PKCS11Error.invalidURI(uri: uri, detail: "library-version must be M or M.N (numbers up to 255)") }
            libraryVersion = PKCS11Version(major: UInt8(major), minor: parts.count == 2 ? Self.decimal(parts[1], maximum: 255).map { UInt8($0) } : nil)
        case "slot-id":
            guard let number = Self.decimal(value[...], maximum: UInt.max) else {
                throw PKCS11Error.invalidURI(uri: uri, detail: "slot-id must be a decimal number")
            }
            slotID = number
        case "type":
            guard let text = String(validating: value, as: UTF8.self), let kind = PKCS11ObjectType(rawValue: text) else {
                throw PKCS11Error.invalidURI(uri: uri, detail: "type must be one of \(PKCS11ObjectType.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            type = kind
        default:
            guard name.hasPrefix("x-") else { throw PKCS11Error.invalidURI(uri: uri, detail: "unknown attribute \(name) (vendor attributes start with x-)") }
        }
    }

    private mutating func setQueryAttribute(_ name: String, _ value: [UInt8], uri: String) throws {
        switch name {
        case "module-path": modulePath = try Self.text(value, name, uri)
        case "module-name": moduleName = try Self.text(value, name, uri)
        case "pin-source": pinSource = try Self.text(value, name, uri)
        case "pin-value": pinValue = try Self.text(value, name, uri)
        default:
            guard name.hasPrefix("x-") else {
                throw PKCS11Error.invalidURI(uri: uri, detail: "unknown query attribute \(name) (vendor attributes start with x-)")
            }
        }
    }

    /// Splits `name=value`, checks the name and decodes the value.
    static func attribute(_ component: ArraySlice<UInt8>, literal: (UInt8) -> Bool, uri: String) throws -> (String, [UInt8]) {
        guard let equals = component.firstIndex(of: UInt8(ascii: "=")) else {
            throw PKCS11Error.invalidURI(uri: uri, detail: component.isEmpty ? "an empty attribute (two separators in a row?)" : "an attribute without '='")
        }
        let nameBytes = component[..<equals]
        guard !nameBytes.isEmpty, nameBytes.allSatisfy({ isAlphanumeric($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }) else {
            throw PKCS11Error.invalidURI(uri: uri, detail: "an attribute name must be letters, digits, '-' or '_'")
        }
        let name = String(decoding: nameBytes, as: UTF8.self)
        var value: [UInt8] = []
        var index = component.index(after: equals)
        while index < component.endIndex {
            let byte = component[index]
            if byte == UInt8(ascii: "%") {
                guard component.endIndex - index >= 3, let high = hexValue(component[index + 1]), let low = hexValue(component[index + 2]) else {
                    throw PKCS11Error.invalidURI(uri: uri, detail: "in \(name): '%' must start an escape of two hex digits (write a '%' itself as %25)")
                }
                value.append(high << 4 | low)
                index += 3
            } else {
                guard literal(byte) else {
                    // Never a character of a PIN, even in an error message.
                    let isSecret = name.lowercased() == "pin-value"
                    let shownByte = isSecret ? "a character" : byte >= 0x21 && byte < 0x7f
                        ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x" + String(byte, radix: 16, uppercase: true)
                    throw PKCS11Error.invalidURI(uri: uri, detail: "in \(name): \(shownByte) must be percent-encoded (a space is %20)")
                }
                value.append(byte)
                index += 1
            }
        }
        return (name, value)
    }

    private static func text(_ value: [UInt8], _ name: String, _ uri: String) throws -> String {
        guard let text = String(validating: value, as: UTF8.self) else {
            throw PKCS11Error.invalidURI(uri: uri, detail: "\(name) is not UTF-8 text once decoded")
        }
        return text
    }

    private static func decimal(_ digits: ArraySlice<UInt8>, maximum: UInt) -> UInt? {
        guard !digits.isEmpty, digits.count <= 20, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            let number = UInt(String(decoding: digits, as: UTF8.self)), number <= maximum
        else { return nil }
        return number
    }

    // MARK: Characters

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
    }

    /// RFC 3986 `unreserved`: letters, digits, `-._~`.
    private static func isUnreserved(_ byte: UInt8) -> Bool {
        isAlphanumeric(byte) || Array("-._~".utf8).contains(byte)
    }

    /// `pk11-res-avail`: what both parts may carry unencoded besides `unreserved`.
    private static let reservedAvailable = Array(":[]@!$'()*+,=".utf8)

    /// `pk11-pchar`: a path value's unencoded characters (`&` included).
    static func isPathLiteral(_ byte: UInt8) -> Bool {
        isUnreserved(byte) || reservedAvailable.contains(byte) || byte == UInt8(ascii: "&")
    }

    /// `pk11-qchar`: a query value's unencoded characters (`/`, `?` and `|` included).
    static func isQueryLiteral(_ byte: UInt8) -> Bool {
        isUnreserved(byte) || reservedAvailable.contains(byte) || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?")
            || byte == UInt8(ascii: "|")
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    private static let upperHex = Array("0123456789ABCDEF".utf8)

    /// Percent-encodes every byte `literal` refuses.
    static func encode(_ bytes: [UInt8], literal: (UInt8) -> Bool) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 3)
        for byte in bytes {
            if literal(byte) {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(upperHex[Int(byte >> 4)])
                out.append(upperHex[Int(byte & 0x0f)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension PKCS11URI: CustomDebugStringConvertible, CustomReflectable {
    /// The canonical form, which never shows a `pin-value`.
    public var debugDescription: String { "PKCS11URI(\(description))" }

    /// Only the canonical form, so that `dump` cannot print a `pin-value`.
    public var customMirror: Mirror { Mirror(self, children: ["uri": description]) }
}
