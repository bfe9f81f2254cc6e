import Foundation
import SignetCore

/// The JSON that manifests and trust roots are made of: objects, arrays, strings, integers,
/// booleans and null (no fractions), written in one canonical form so that what is signed is
/// exactly what is written.
///
/// Canonical form: no whitespace; object members sorted by the UTF-8 bytes of their names;
/// strings as UTF-8 with only `"`, `\` and the control characters U+0000–U+001F escaped
/// (as `\"`, `\\` and `\u00XX` with lowercase hex); integers in decimal without a sign for
/// zero or leading zeros.
enum CanonicalJSON: Sendable, Equatable {
    case object([String: CanonicalJSON])
    case array([CanonicalJSON])
    case string(String)
    case integer(Int64)
    case bool(Bool)
    case null

    /// The canonical bytes.
    var bytes: [UInt8] {
        var out: [UInt8] = []
        write(to: &out)
        return out
    }

    private func write(to out: inout [UInt8]) {
        switch self {
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            let names = members.keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
            for (index, name) in names.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                Self.writeString(name, to: &out)
                out.append(UInt8(ascii: ":"))
                members[name]!.write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                element.write(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .string(let text): Self.writeString(text, to: &out)
        case .integer(let value): out.append(contentsOf: String(value).utf8)
        case .bool(let value): out.append(contentsOf: (value ? "true" : "false").utf8)
        case .null: out.append(contentsOf: "null".utf8)
        }
    }

    /// The canonical form of a string: only `"`, `\` and U+0000–U+001F escaped, the last as
    /// `\u00xx` (a line feed too).
    private static func writeString(_ text: String, to out: inout [UInt8]) {
        StrictJSON.appendString(text, to: &out, lineFeedAsN: false)
    }

    /// Parses JSON text (any valid formatting) with a nesting bound; numbers must be integers
    /// (`1e3` is read as 1000, `1.5` refused); a member name given twice is refused.
    static func parse(_ bytes: [UInt8], source: String) throws -> CanonicalJSON {
        do {
            return try parse(bytes)
        } catch {
            throw BundleError.malformed(source: source, detail: "not valid JSON: \(error.message) (byte \(error.offset))")
        }
    }

    /// Parses JSON text with SignetCore's strict parser (RFC 8259; strings valid UTF-8 without
    /// lone surrogates; no member name twice in one object, also not as canonically equivalent
    /// Unicode; at most `maximumDepth` levels of nesting) under its `int64` number rule:
    /// integers only, `1e3` read as 1000, `1.5` refused, within `Int64`.
    static func parse(_ bytes: [UInt8], maximumDepth: Int = 16) throws(JSONSyntaxError) -> CanonicalJSON {
        CanonicalJSON(parsed: try StrictJSON.parse(bytes, maximumDepth: maximumDepth, numbers: .int64))
    }

    /// `value`, parsed under the `int64` number rule, as canonical JSON. Its members have
    /// distinct names (the parser refused any name given twice), so none is lost to the
    /// dictionary.
    private init(parsed value: JSONValue) {
        switch value {
        case .object(let members):
            var dictionary: [String: CanonicalJSON] = [:]
            dictionary.reserveCapacity(members.count)
            for member in members { dictionary[member.name] = CanonicalJSON(parsed: member.value) }
            self = .object(dictionary)
        case .array(let elements):
            self = .array(elements.map { CanonicalJSON(parsed: $0) })
        case .string(let text):
            self = .string(text)
        case .number(let text):
            guard let integer = value.int64Value else { preconditionFailure("the number \(text) passed the int64 rule but is not an Int64") }
            self = .integer(integer)
        case .bool(let flag):
            self = .bool(flag)
        case .null:
            self = .null
        }
    }
}

/// Strict reading of one JSON object: every member named, of the expected type, and no others.
struct JSONObjectReader {
    let members: [String: CanonicalJSON]
    let source: String
    let context: String

    init(_ value: CanonicalJSON, source: String, context: String, allowed: Set<String>) throws {
        guard case .object(let members) = value else {
            throw BundleError.malformed(source: source, detail: "\(context) must be a JSON object")
        }
        if let unknown = members.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw BundleError.malformed(source: source, detail: "\(context) has an unknown member \"\(BundleError.printable(unknown))\"")
        }
        self.members = members
        self.source = source
        self.context = context
    }

    func string(_ name: String) throws -> String {
        guard case .string(let value)? = members[name] else { throw missing(name, "a string") }
        return value
    }

    func optionalString(_ name: String) throws -> String? {
        switch members[name] {
        case nil, .null?: return nil
        case .string(let value)?: return value
        default: throw missing(name, "a string or null")
        }
    }

    func integer(_ name: String, in range: ClosedRange<Int64>) throws -> Int64 {
        guard case .integer(let value)? = members[name] else { throw missing(name, "an integer") }
        guard range.contains(value) else {
            throw BundleError.malformed(source: source, detail: "\(context): \"\(name)\" is \(value), outside \(range.lowerBound)…\(range.upperBound)")
        }
        return value
    }

    func array(_ name: String, maximum: Int) throws -> [CanonicalJSON] {
        guard case .array(let value)? = members[name] else { throw missing(name, "an array") }
        guard value.count <= maximum else {
            throw BundleError.malformed(source: source, detail: "\(context): \"\(name)\" has \(value.count) elements, more than \(maximum)")
        }
        return value
    }

    private func missing(_ name: String, _ type: String) -> BundleError {
        BundleError.malformed(source: source, detail: "\(context): \"\(name)\" must be \(type)")
    }
}
