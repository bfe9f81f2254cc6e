import SwiftASN1
import X509

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Parses the subject names people type: `CN=api.example.com,O=Example\, Inc.,C=GB` (RFC 4514
/// order, most specific first, `\` escaping a comma, plus or backslash) and SAN lists such as
/// `DNS:api.example.com,IP:127.0.0.1,email:ops@example.com,URI:https://example.com`.
public enum SubjectParsing {
    /// Attribute names accepted in a subject, and their types.
    static let attributeTypes: [String: ASN1ObjectIdentifier] = [
        "CN": .RDNAttributeType.commonName,
        "O": .RDNAttributeType.organizationName,
        "OU": .RDNAttributeType.organizationalUnitName,
        "C": .RDNAttributeType.countryName,
        "ST": .RDNAttributeType.stateOrProvinceName,
        "L": .RDNAttributeType.localityName,
        "STREET": .RDNAttributeType.streetAddress,
        "DC": .RDNAttributeType.domainComponent,
        "EMAILADDRESS": .RDNAttributeType.emailAddress,
        "E": .RDNAttributeType.emailAddress,
    ]

    /// The longest subject accepted, in characters.
    public static let maximumLength = 4096

    /// A distinguished name from its RFC 4514 string. The first attribute written is the most
    /// specific (`CN=…,O=…`), as openssl's `-nameopt RFC2253` prints it.
    public static func distinguishedName(_ text: String) throws -> DistinguishedName {
        guard !text.isEmpty else { throw X509Error.invalidArgument(detail: "the subject is empty (write it as CN=name,O=organisation)") }
        guard text.count <= maximumLength else { throw X509Error.invalidArgument(detail: "the subject is longer than \(maximumLength) characters") }
        var attributes: [RelativeDistinguishedName.Attribute] = []
        for part in try splitUnescaped(text, on: ",", what: "subject") {
            guard let equals = part.firstIndex(of: "=") else {
                throw X509Error.invalidArgument(detail: "subject part '\(part)' has no '=' (write it as CN=name,O=organisation)")
            }
            let name = String(part[..<equals]).trimmingSpaces()
            let value = try unescape(String(part[part.index(after: equals)...]).trimmingSpaces(), what: "subject")
            guard let type = attributeTypes[name.uppercased()] else {
                throw X509Error.invalidArgument(
                    detail: "unknown subject attribute '\(name)' (known: CN, O, OU, C, ST, L, STREET, DC, emailAddress)")
            }
            guard !value.isEmpty else { throw X509Error.invalidArgument(detail: "subject attribute \(name) is empty") }
            do {
                switch type {
                case .RDNAttributeType.countryName:
                    guard value.count == 2, value.allSatisfy({ $0.isASCII && $0.isLetter }) else {
                        throw X509Error.invalidArgument(detail: "country (C) must be two letters, such as GB or US, not '\(value)'")
                    }
                    attributes.append(try .init(type: type, printableString: value.uppercased()))
                case .RDNAttributeType.emailAddress, .RDNAttributeType.domainComponent:
                    guard value.allSatisfy(\.isASCII) else {
                        throw X509Error.invalidArgument(detail: "subject attribute \(name) must be ASCII: '\(value)'")
                    }
                    attributes.append(try .init(type: type, ia5String: value))
                default:
                    attributes.append(.init(type: type, utf8String: value))
                }
            } catch let error as X509Error {
                throw error
            } catch {
                throw X509Error.invalidArgument(detail: "subject attribute \(name): \(error)")
            }
        }
        // RFC 4514 strings list the most specific RDN first; the DER order is the reverse.
        return DistinguishedName(attributes.reversed().map { RelativeDistinguishedName($0) })
    }

    /// Subject alternative names from `TYPE:value` items separated by commas: `DNS:`, `IP:`
    /// (IPv4 or IPv6), `email:` and `URI:`.
    public static func alternativeNames(_ text: String) throws -> [GeneralName] {
        guard text.count <= maximumLength else { throw X509Error.invalidArgument(detail: "the SAN list is longer than \(maximumLength) characters") }
        var names: [GeneralName] = []
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            let item = String(item).trimmingSpaces()
            guard let colon = item.firstIndex(of: ":") else {
                throw X509Error.invalidArgument(detail: "SAN '\(item)' has no type (write DNS:name, IP:address, email:address or URI:uri)")
            }
            let type = item[..<colon].uppercased()
            let value = String(item[item.index(after: colon)...])
            guard !value.isEmpty else { throw X509Error.invalidArgument(detail: "SAN '\(item)' is empty") }
            switch type {
            case "DNS":
                guard isDNSName(value) else {
                    throw X509Error.invalidArgument(detail: "SAN DNS:\(value) is not a host name (letters, digits, '-', dots; '*.' only as the first label)")
                }
                if let problem = DNSNameRules.problemIssuing(value) { throw X509Error.invalidArgument(detail: "SAN DNS:\(problem)") }
                names.append(.dnsName(value.lowercased()))
            case "IP":
                guard let bytes = ipAddressBytes(value) else {
                    throw X509Error.invalidArgument(detail: "SAN IP:\(value) is not an IPv4 or IPv6 address")
                }
                names.append(.ipAddress(ASN1OctetString(contentBytes: bytes[...])))
            case "EMAIL":
                guard value.contains("@"), value.allSatisfy(\.isASCII) else {
                    throw X509Error.invalidArgument(detail: "SAN email:\(value) is not an ASCII e-mail address")
                }
                names.append(.rfc822Name(value))
            case "URI":
                guard value.contains(":"), value.allSatisfy(\.isASCII) else {
                    throw X509Error.invalidArgument(detail: "SAN URI:\(value) is not an absolute ASCII URI")
                }
                names.append(.uniformResourceIdentifier(value))
            default:
                throw X509Error.invalidArgument(detail: "SAN type '\(item[..<colon])' is not known (DNS, IP, email or URI)")
            }
        }
        guard Set(names).count == names.count else { throw X509Error.invalidArgument(detail: "the SAN list names the same entry twice") }
        return names
    }

    /// Whether `name` is a DNS name a certificate may carry (a leading `*.` wildcard allowed).
    static func isDNSName(_ name: String) -> Bool {
        var labels = name.split(separator: ".", omittingEmptySubsequences: false)
        if labels.first == "*" { labels.removeFirst() }
        guard !labels.isEmpty, name.utf8.count <= 253 else { return false }
        return labels.allSatisfy { label in
            !label.isEmpty && label.utf8.count <= 63 && label.first != "-" && label.last != "-"
                && label.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
        }
    }

    /// The 4 or 16 bytes of an IP address literal, or nil.
    public static func ipAddressBytes(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return withUnsafeBytes(of: &v4) { Array($0) }
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            return withUnsafeBytes(of: &v6) { Array($0) }
        }
        return nil
    }

    /// Splits on `separator` where it is not escaped with a backslash.
    static func splitUnescaped(_ text: String, on separator: Character, what: String) throws -> [Substring] {
        var parts: [Substring] = []
        var start = text.startIndex
        var index = text.startIndex
        var escaped = false
        while index < text.endIndex {
            let character = text[index]
            if escaped {
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == separator {
                parts.append(text[start..<index])
                start = text.index(after: index)
            }
            index = text.index(after: index)
        }
        guard !escaped else { throw X509Error.invalidArgument(detail: "the \(what) ends with a lone backslash") }
        parts.append(text[start...])
        return parts
    }

    /// Removes RFC 4514 backslash escapes (`\,` `\+` `\\` `\"` `\=` `\<` `\>` `\;` `\#` and `\ `).
    static func unescape(_ text: String, what: String) throws -> String {
        var out = ""
        var escaped = false
        for character in text {
            if escaped {
                guard ",+\\\"=<>;# ".contains(character) else {
                    throw X509Error.invalidArgument(detail: "the \(what) has an unknown escape '\\\(character)'")
                }
                out.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else {
                out.append(character)
            }
        }
        return out
    }
}

extension String {
    func trimmingSpaces() -> String {
        var slice = Substring(self)
        while slice.first == " " { slice.removeFirst() }
        while slice.last == " " { slice.removeLast() }
        return String(slice)
    }
}
