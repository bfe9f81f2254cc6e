import HTTPTypes

/// Who the client is, for rate limits and logs: the peer's address, or — when the peer is a
/// trusted proxy — the right-most address in `Forwarded` (RFC 7239 §5.2) or else
/// `X-Forwarded-For` that is not itself a trusted proxy. Hops to the left of it were written by
/// the client and prove nothing; from an untrusted peer both fields are ignored.
enum ClientAddress {
    /// The most hops read from the fields; a longer chain is read from its right end only.
    static let maximumHops = 32

    static func resolve(peer: String, fields: HTTPFields, trusted: [IPAddressRange]) -> String {
        guard !trusted.isEmpty, isTrusted(peer, trusted) else { return peer }
        let hops = forwardedHops(fields) ?? forwardedForHops(fields)
        guard !hops.isEmpty else { return peer }
        for hop in hops.reversed() {
            guard let bytes = IPAddressRange.bytes(of: hop) else {
                // "unknown" or an obfuscated identifier (RFC 7239 §6): the proxy could not name
                // the client, so the proxy stands for it.
                return peer
            }
            if !trusted.contains(where: { $0.contains(bytes) }) { return IPAddressRange.text(of: bytes) ?? hop }
        }
        return hops.first.flatMap { IPAddressRange.bytes(of: $0) }.flatMap(IPAddressRange.text(of:)) ?? peer
    }

    /// The key an address's budgets (rate limits, connections) are counted under: an IPv4
    /// address itself, an IPv6 address's /64 — the smallest block a subscriber is given, so one
    /// home network cannot take a fresh budget for each of its 2^64 addresses. An IPv4-mapped
    /// IPv6 address counts as its IPv4 address; anything unparsed as itself.
    static func budgetKey(_ address: String) -> String {
        guard let bytes = IPAddressRange.bytes(of: address) else { return address }
        if bytes.count == 16, bytes.prefix(12).elementsEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF]) {
            return IPAddressRange.text(of: Array(bytes.suffix(4))) ?? address
        }
        guard bytes.count == 16 else { return IPAddressRange.text(of: bytes) ?? address }
        let network = Array(bytes.prefix(8)) + [UInt8](repeating: 0, count: 8)
        return (IPAddressRange.text(of: network) ?? address) + "/64"
    }

    static func isTrusted(_ address: String, _ trusted: [IPAddressRange]) -> Bool {
        guard let bytes = IPAddressRange.bytes(of: address) else { return false }
        return trusted.contains { $0.contains(bytes) }
    }

    /// The `for=` nodes of every `Forwarded` element, in order, without quotes, brackets or
    /// ports; nil when the field is absent. A malformed element names no one (it is skipped).
    static func forwardedHops(_ fields: HTTPFields) -> [String]? {
        let values = fields[values: .forwarded]
        guard !values.isEmpty else { return nil }
        var hops: [String] = []
        for value in values {
            for element in value.split(separator: ",").suffix(maximumHops) {
                for pair in element.split(separator: ";") {
                    let parts = pair.split(separator: "=", maxSplits: 1)
                    guard parts.count == 2, parts[0].trimmingSpaces.lowercased() == "for" else { continue }
                    hops.append(node(String(parts[1].trimmingSpaces)))
                }
            }
        }
        return Array(hops.suffix(maximumHops))
    }

    /// The addresses of `X-Forwarded-For`, in order.
    static func forwardedForHops(_ fields: HTTPFields) -> [String] {
        let hops = fields[values: .xForwardedFor].flatMap { $0.split(separator: ",") }.suffix(maximumHops)
        return hops.map { node(String($0.trimmingSpaces)) }
    }

    /// A node without quotes, brackets and port: `"[2001:db8::1]:4711"` → `2001:db8::1`, `192.0.2.1:80` → `192.0.2.1`.
    static func node(_ text: String) -> String {
        var node = Substring(text)
        if node.hasPrefix("\""), node.hasSuffix("\""), node.count >= 2 { node = node.dropFirst().dropLast() }
        if node.hasPrefix("[") {
            guard let close = node.firstIndex(of: "]") else { return String(node) }
            return String(node[node.index(after: node.startIndex)..<close])
        }
        if node.filter({ $0 == ":" }).count == 1, let colon = node.firstIndex(of: ":") { return String(node[..<colon]) }
        return String(node)
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var text = self
        while text.first == " " || text.first == "\t" { text.removeFirst() }
        while text.last == " " || text.last == "\t" { text.removeLast() }
        return text
    }
}

extension HTTPField.Name {
    static let forwarded = HTTPField.Name("Forwarded")!
    static let xForwardedFor = HTTPField.Name("X-Forwarded-For")!
}
