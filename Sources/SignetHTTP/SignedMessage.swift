import Foundation
import HTTPTypes
import RawStructuredFieldValues
import SignetCore

/// The kind of a structured field (RFC 9651), needed to re-serialise it for `sf` and `key`.
public enum StructuredFieldKind: Sendable {
    /// An Item, a List or a Dictionary (RFC 9651 §3).
    case item, list, dictionary
}

/// Dictionary fields already parsed while one signature base is built, by field name (and
/// whether they are the related request's).
struct ParsedDictionaries {
    var fields: [String: [String: ItemOrInnerList]] = [:]
    /// Whole structured fields (`sf`) already serialised, by field name.
    var serialized: [String: String] = [:]
    /// The query's parameter values by encoded name, split and encoded once for every
    /// `@query-param` of the base.
    var queryParameters: [String: [String]]?
}

/// The message a signature covers: a request, or a response together with the request it
/// answers (for components marked `req`).
public struct SignedMessage: Sendable {
    /// The request, or for a response the request it answers (if known).
    public var request: HTTPRequest?
    /// The response, when the message is one.
    public var response: HTTPResponse?
    /// Structured fields known by name, for `sf` and `key`: the fields of RFC 9421, RFC 9530
    /// and RFC 9651's examples; add an application's own here.
    public var structuredFields: [String: StructuredFieldKind] = Self.knownStructuredFields

    /// The structured fields every message knows (built once: a dictionary literal here would
    /// be rebuilt for every message verified).
    public static let knownStructuredFields: [String: StructuredFieldKind] = [
        "signature": .dictionary, "signature-input": .dictionary, "accept-signature": .dictionary,
        "content-digest": .dictionary, "repr-digest": .dictionary, "want-content-digest": .dictionary,
        "want-repr-digest": .dictionary, "priority": .dictionary, "example-dict": .dictionary, "cache-status": .list,
        "proxy-status": .list, "example-list": .list, "example-item": .item,
    ]

    /// A request.
    public static func request(_ request: HTTPRequest) -> SignedMessage {
        SignedMessage(request: request, response: nil)
    }

    /// A response, and the request it answers if components refer to it (`req`).
    public static func response(_ response: HTTPResponse, answering request: HTTPRequest? = nil) -> SignedMessage {
        SignedMessage(request: request, response: response)
    }

    /// The header fields of the message itself.
    var fields: HTTPFields { response?.headerFields ?? request?.headerFields ?? [:] }

    /// The value of `component` for the signature base (RFC 9421 §2.1, §2.2).
    func value(of component: SignatureComponent) throws -> String {
        var parsed = ParsedDictionaries()
        return try value(of: component, parsed: &parsed)
    }

    /// The value of `component`, parsing a dictionary field that several `key` components
    /// name only once for the whole base (`parsed` keeps it).
    func value(of component: SignatureComponent, parsed: inout ParsedDictionaries) throws -> String {
        if component.fromRequest {
            guard response != nil, let request else {
                throw HTTPSignatureError.missingComponent("\(component) (no related request)")
            }
            var related = SignedMessage.request(request)
            related.structuredFields = structuredFields
            var plain = component
            plain.fromRequest = false
            return try related.fieldOrDerivedValue(plain, parsed: &parsed, related: true)
        }
        return try fieldOrDerivedValue(component, parsed: &parsed, related: false)
    }

    private func fieldOrDerivedValue(_ component: SignatureComponent, parsed: inout ParsedDictionaries, related: Bool) throws -> String {
        if component.isDerived { return try derivedValue(component, parsed: &parsed) }
        if let key = component.key, !component.byteSequence {
            let memoKey = (related ? "req " : "") + component.name
            let dictionary: [String: ItemOrInnerList]
            if let known = parsed.fields[memoKey] {
                dictionary = known
            } else {
                dictionary = try parseDictionary(component.name).lookup
                parsed.fields[memoKey] = dictionary
            }
            guard let member = dictionary[key] else { throw HTTPSignatureError.missingComponent(component.description) }
            do {
                return try SignatureInput.serialize(member)
            } catch {
                throw HTTPSignatureError.malformedField(field: component.name, detail: "not a structured field (\(error))")
            }
        }
        if component.structured, !component.byteSequence {
            let memoKey = (related ? "req " : "") + component.name
            if let known = parsed.serialized[memoKey] { return known }
            let value = try fieldValue(component, in: fields)
            parsed.serialized[memoKey] = value
            return value
        }
        return try fieldValue(component, in: fields)
    }

    /// The message's field `name` as a structured dictionary.
    private func parseDictionary(_ name: String) throws -> StructuredDictionaryParser.Parsed {
        guard let fieldName = HTTPField.Name(name) else { throw HTTPSignatureError.missingComponent(name) }
        let values = fields[values: fieldName]
        guard !values.isEmpty else { throw HTTPSignatureError.missingComponent(name) }
        return try Self.dictionary(Array(values.joined(separator: ", ").utf8), field: name)
    }

    /// A dictionary serialised (RFC 9651 §4.1.2) from its members in order, as the library's
    /// serialiser does it, without building the library's map (quadratic, unspecialised: 3 ms
    /// for 256 members, for each signature that covers the field).
    static func serialize(_ entries: [(key: String, value: ItemOrInnerList)]) throws -> String {
        var parts: [String] = []
        parts.reserveCapacity(entries.count)
        for (key, member) in entries {
            let serialized = try SignatureInput.serialize(member)
            if case .item(let item) = member, case .bool(true) = item.rfc9651BareItem {
                parts.append(key + serialized.dropFirst(2))  // "?1" left out: the parameters only
            } else {
                parts.append(key + "=" + serialized)
            }
        }
        return parts.joined(separator: ", ")
    }

    /// The most a dictionary field named by a component (`key`, `sf`) may hold: the library's
    /// map searches its members on each insertion, so a field of thousands of members a client
    /// names in its signature would cost the verifier their square.
    static let componentFieldLimits = StructuredDictionaryParser.Limits(members: 256, innerListItems: 256, parameters: 32)

    /// Parses a dictionary with Signet's parser (held to the library's verdicts by the
    /// differential tests) within ``componentFieldLimits``.
    static func dictionary(_ bytes: [UInt8], field: String) throws -> StructuredDictionaryParser.Parsed {
        do {
            return try StructuredDictionaryParser.parse(bytes, limits: componentFieldLimits)
        } catch StructuredDictionaryParser.Failure.tooManyMembers, StructuredDictionaryParser.Failure.innerListTooLong,
            StructuredDictionaryParser.Failure.tooManyParameters {
            throw HTTPSignatureError.tooLarge(what: "the \(field) field a component names", limit: 256)
        } catch {
            throw HTTPSignatureError.malformedField(field: field, detail: "not a structured field")
        }
    }

    private func derivedValue(_ component: SignatureComponent, parsed: inout ParsedDictionaries) throws -> String {
        if component.name == "@status" {
            guard let response else { throw HTTPSignatureError.missingComponent("@status (not a response)") }
            return String(format: "%03d", response.status.code)
        }
        guard response == nil, let request else { throw HTTPSignatureError.missingComponent("\(component) (a request component, in a response)") }
        // CONNECT's request target is the authority (HTTP/2 and swift-http-types carry no path).
        let target = request.method == .connect ? (request.path ?? request.authority ?? "") : (request.path ?? "")
        // Split only for the components that need the parts.
        var pathPart: String { target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? "" }
        var queryPart: String? { target.firstIndex(of: "?").map { String(target[target.index(after: $0)...]) } }
        switch component.name {
        case "@method": return request.method.rawValue
        case "@scheme":
            guard let scheme = request.scheme else { throw HTTPSignatureError.missingComponent("@scheme") }
            return scheme.lowercasedIfNeeded
        case "@authority": return try authority(of: request)
        case "@target-uri":
            guard let scheme = request.scheme else { throw HTTPSignatureError.missingComponent("@target-uri (no scheme)") }
            return scheme.lowercasedIfNeeded + "://" + (try authority(of: request)) + (target.isEmpty ? "/" : target)
        case "@request-target": return target
        case "@path": return pathPart.isEmpty ? "/" : pathPart
        case "@query": return "?" + (queryPart ?? "")
        case "@query-param":
            let wanted = component.parameterName ?? ""
            let parameters = parsed.queryParameters
                ?? Dictionary(QueryParameters.parse(queryPart ?? "").map { (QueryParameters.encode($0.name), [$0.value]) }, uniquingKeysWith: +)
            parsed.queryParameters = parameters
            let matches = parameters[wanted] ?? []
            guard let match = matches.first else { throw HTTPSignatureError.missingComponent(component.description) }
            guard matches.count == 1 else {
                throw HTTPSignatureError.malformedField(field: "@query", detail: "query parameter \"\(wanted)\" occurs \(matches.count) times; sign @query instead")
            }
            return QueryParameters.encode(match)
        default: throw HTTPSignatureError.missingComponent(component.name)
        }
    }

    /// The authority, lower-cased, without the scheme's default port (RFC 9421 §2.2.3).
    private func authority(of request: HTTPRequest) throws -> String {
        guard var authority = request.authority?.lowercasedIfNeeded, !authority.isEmpty else { throw HTTPSignatureError.missingComponent("@authority") }
        let scheme = request.scheme?.lowercasedIfNeeded
        if scheme == "http", authority.hasSuffix(":80") { authority.removeLast(3) }
        if scheme == "https", authority.hasSuffix(":443") { authority.removeLast(4) }
        return authority
    }

    private func fieldValue(_ component: SignatureComponent, in fields: HTTPFields) throws -> String {
        guard let name = HTTPField.Name(component.name) else { throw HTTPSignatureError.missingComponent(component.name) }
        let values = fields[values: name]
        guard !values.isEmpty else { throw HTTPSignatureError.missingComponent(component.name) }
        if component.byteSequence {
            return values.map { ":" + Base64.encode($0.utf8) + ":" }.joined(separator: ", ")
        }
        let combined = values.joined(separator: ", ")
        guard component.structured || component.key != nil else { return combined }
        let kind = component.key != nil ? .dictionary : structuredFields[component.name]
        guard let kind else {
            throw HTTPSignatureError.invalidArgument(detail: "\(component.name) is not a structured field Signet knows the type of; add it to SignedMessage.structuredFields")
        }
        var parser = StructuredFieldValueParser(Array(combined.utf8))
        var serializer = StructuredFieldValueSerializer()
        do {
            switch kind {
            case .item:
                return String(decoding: try serializer.writeItemFieldValue(try parser.parseItemFieldValue()), as: UTF8.self)
            case .list:
                return String(decoding: try serializer.writeListFieldValue(try parser.parseListFieldValue()), as: UTF8.self)
            case .dictionary:
                let dictionary = try Self.dictionary(Array(combined.utf8), field: component.name)
                guard let key = component.key else { return try Self.serialize(dictionary.entries) }
                guard let member = dictionary.lookup[key] else { throw HTTPSignatureError.missingComponent(component.description) }
                return try SignatureInput.serialize(member)
            }
        } catch let error as HTTPSignatureError {
            throw error
        } catch {
            throw HTTPSignatureError.malformedField(field: component.name, detail: "not a structured field (\(error))")
        }
    }
}
