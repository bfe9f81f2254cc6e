#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SignetCore

/// The pin file (`docs/formats/pins.md`): decoding with every refusal named, and writing.
extension PinSet {
    private static let fileMembers = ["version", "hosts"]
    private static let hostMembers = ["host", "pins", "includeSubdomains", "expires", "reportOnly", "reportURIs"]

    /// Decodes a pin file read from `source` (named in every message).
    ///
    /// Refuses, as ``X509Error/malformed(source:detail:)``, more than ``maximumFileSize`` bytes
    /// and text that is not JSON; as ``X509Error/unsupported(source:detail:)``, a version other
    /// than 1; and as ``X509Error/pinSetInvalid(source:detail:)`` everything else: an unknown
    /// or repeated member, a member of the wrong type, a pin that is not `sha256/<base64>` of
    /// 32 bytes, a date not like `2027-06-01T00:00:00Z`, and whatever ``init(hosts:source:)``
    /// refuses.
    public static func decode(_ bytes: [UInt8], source: String) throws -> PinSet {
        guard bytes.count <= maximumFileSize else {
            throw X509Error.malformed(source: source, detail: "larger than 1 MiB; not a pin set")
        }
        let root: JSONValue
        do {
            root = try StrictJSON.parse(bytes)
        } catch {
            if let name = error.duplicateMemberName {
                throw X509Error.pinSetInvalid(
                    source: source,
                    detail: "the member \"\(X509Error.printable(name))\" appears twice in one object (byte \(error.offset)); each member may appear once")
            }
            throw X509Error.malformed(source: source, detail: "not valid JSON: \(error.message) (byte \(error.offset))")
        }
        let file = try PinFileObject(root, source: source, context: "the pin set", allowed: fileMembers)
        guard let versionValue = file.members["version"] else {
            throw X509Error.pinSetInvalid(source: source, detail: "the pin set has no \"version\" (it must be 1)")
        }
        guard case .number(let versionText) = versionValue, let version = Int(versionText), version >= 1 else {
            throw X509Error.pinSetInvalid(source: source, detail: "\"version\" must be the integer 1, not \(versionValue.kindDescription) (\(describe(versionValue)))")
        }
        guard version == formatVersion else {
            throw X509Error.unsupported(source: source, detail: "pin set version \(version); this version of Signet reads version \(formatVersion)")
        }
        var hosts: [HostPins] = []
        for (position, element) in try file.array("hosts").enumerated() {
            hosts.append(try hostPins(element, position: position, source: source))
        }
        return try PinSet(hosts: hosts, source: source)
    }

    private static func hostPins(_ value: JSONValue, position: Int, source: String) throws -> HostPins {
        var entry = try PinFileObject(value, source: source, context: "hosts[\(position)]", allowed: hostMembers)
        let host = try entry.string("host")
        entry.context = "hosts[\(position)] (\(X509Error.printable(host)))"
        var pins: [KeyFingerprint] = []
        for text in try entry.strings("pins") {
            guard let pin = KeyFingerprint(string: text), pin.description == text else {
                let hint: String
                if let bare = Base64.decode(text), bare.count == 32 {
                    hint = "it is bare base64 (as TrustKit's kTSKPublicKeyHashes hold it); write it as sha256/\(Base64.encode(bare))"
                } else {
                    hint = "a pin is \"sha256/\" and the base64 of a 32-byte SHA-256 digest (44 characters)"
                }
                throw X509Error.pinSetInvalid(source: source, detail: "\(entry.context): \"\(X509Error.printable(text))\" is not a pin: \(hint)")
            }
            pins.append(pin)
        }
        var expires: Date?
        if let text = try entry.optionalString("expires") {
            guard let date = PinDate.parse(text) else {
                throw X509Error.pinSetInvalid(
                    source: source,
                    detail: "\(entry.context): expires \"\(X509Error.printable(text))\" is not a date like 2027-06-01T00:00:00Z (UTC, to the second)")
            }
            expires = date
        }
        return HostPins(
            host: host, pins: pins, includeSubdomains: try entry.bool("includeSubdomains", default: false), expires: expires,
            reportOnly: try entry.bool("reportOnly", default: false), reportURIs: try entry.strings("reportURIs", default: []))
    }

    private static func describe(_ value: JSONValue) -> String {
        switch value {
        case .number(let text): return X509Error.printable(text)
        case .string(let text): return "\"\(X509Error.printable(text))\""
        default: return String(decoding: value.bytes(pretty: false).prefix(40), as: UTF8.self)
        }
    }

    /// The pin file: pretty JSON (two-space indents, a final newline) with its members in
    /// the documented order; `expires` is left out when the pins never expire. Decoding it
    /// gives this pin set back.
    public func encoded() -> [UInt8] {
        let entries = hosts.map { entry -> JSONValue in
            var members: [JSONMember] = [
                .init("host", .string(entry.host)),
                .init("pins", .array(entry.pins.map { JSONValue.string($0.description) })),
                .init("includeSubdomains", .bool(entry.includeSubdomains)),
            ]
            if let expires = entry.expires { members.append(.init("expires", .string(PinDate.format(expires)))) }
            members.append(.init("reportOnly", .bool(entry.reportOnly)))
            members.append(.init("reportURIs", .array(entry.reportURIs.map { JSONValue.string($0) })))
            return .object(members)
        }
        return JSONValue.object([.init("version", .number(String(Self.formatVersion))), .init("hosts", .array(entries))]).bytes(pretty: true)
    }
}

/// Strict reading of one object of a pin file: no member but the allowed ones, each of the
/// expected type.
struct PinFileObject {
    let members: [String: JSONValue]
    let source: String
    var context: String

    init(_ value: JSONValue, source: String, context: String, allowed: [String]) throws {
        guard case .object(let list) = value else {
            throw X509Error.pinSetInvalid(source: source, detail: "\(context) must be a JSON object, not \(value.kindDescription)")
        }
        var members: [String: JSONValue] = [:]
        for member in list {
            guard allowed.contains(member.name) else {
                throw X509Error.pinSetInvalid(
                    source: source,
                    detail: "\(context) has an unknown member \"\(X509Error.printable(member.name))\" (the members are \(allowed.joined(separator: ", ")))")
            }
            members[member.name] = member.value
        }
        self.members = members
        self.source = source
        self.context = context
    }

    func string(_ name: String) throws -> String {
        guard let value = members[name] else { throw missing(name) }
        guard case .string(let text) = value else { throw wrongType(name, "a string", value) }
        return text
    }

    /// A string, or nil when the member is absent or null.
    func optionalString(_ name: String) throws -> String? {
        switch members[name] {
        case nil, .null?: return nil
        case .string(let text)?: return text
        case let value?: throw wrongType(name, "a string or null", value)
        }
    }

    func bool(_ name: String, default fallback: Bool) throws -> Bool {
        switch members[name] {
        case nil: return fallback
        case .bool(let flag)?: return flag
        case let value?: throw wrongType(name, "true or false", value)
        }
    }

    func array(_ name: String) throws -> [JSONValue] {
        guard let value = members[name] else { throw missing(name) }
        guard case .array(let elements) = value else { throw wrongType(name, "an array", value) }
        return elements
    }

    /// An array of strings; `fallback` when the member is absent (nil: it is required).
    func strings(_ name: String, default fallback: [String]? = nil) throws -> [String] {
        guard let value = members[name] else {
            if let fallback { return fallback }
            throw missing(name)
        }
        guard case .array(let elements) = value else { throw wrongType(name, "an array of strings", value) }
        var result: [String] = []
        for element in elements {
            guard case .string(let text) = element else { throw wrongType(name, "an array of strings", element) }
            result.append(text)
        }
        return result
    }

    private func missing(_ name: String) -> X509Error {
        X509Error.pinSetInvalid(source: source, detail: "\(context) has no \"\(name)\"")
    }

    private func wrongType(_ name: String, _ expected: String, _ found: JSONValue) -> X509Error {
        X509Error.pinSetInvalid(source: source, detail: "\(context): \"\(name)\" must be \(expected), not \(found.kindDescription)")
    }
}
