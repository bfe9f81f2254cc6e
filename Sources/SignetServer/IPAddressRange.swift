#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import SignetX509

/// An IPv4 or IPv6 address block in CIDR notation (`10.0.0.0/8`, `::1/128`, or one address):
/// the proxies a server trusts to name the client (``ServerConfiguration/trustedProxies``).
public struct IPAddressRange: Sendable, Hashable, CustomStringConvertible {
    /// The network's address bytes (4 or 16), host bits cleared.
    package let network: [UInt8]
    /// The prefix length in bits.
    package let prefixLength: Int

    /// Parses `10.0.0.0/8`, `192.0.2.7`, `2001:db8::/32` or `::1`; the host bits must be zero.
    public init(_ text: String) throws {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = Self.bytes(of: String(parts[0])) else {
            throw ServerError.configuration(detail: "\"\(text.prefix(60))\" is not an IP address or CIDR block (10.0.0.0/8, 2001:db8::/32)")
        }
        var length = address.count * 8
        if parts.count == 2 {
            guard let given = Int(parts[1]), (0...length).contains(given), parts[1].allSatisfy(\.isASCII) else {
                throw ServerError.configuration(detail: "\"\(text.prefix(60))\": the prefix length must be 0 to \(length)")
            }
            length = given
        }
        guard Self.masked(address, length) == address else {
            throw ServerError.configuration(detail: "\"\(text.prefix(60))\": the address has bits set past the /\(length) prefix")
        }
        network = address
        prefixLength = length
    }

    /// Whether `address` (textual, as a peer or a proxy header gives it) lies in the block; an
    /// IPv4-mapped IPv6 address (`::ffff:192.0.2.7`) counts as the IPv4 address.
    package func contains(_ address: String) -> Bool {
        guard let bytes = Self.bytes(of: address) else { return false }
        return contains(bytes)
    }

    func contains(_ bytes: [UInt8]) -> Bool {
        var bytes = bytes
        if network.count == 4, bytes.count == 16, bytes.prefix(12).elementsEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF]) {
            bytes = Array(bytes.suffix(4))
        }
        return bytes.count == network.count && Self.masked(bytes, prefixLength) == network
    }

    public var description: String {
        guard let text = Self.text(of: network) else { return "?" }
        return "\(text)/\(prefixLength)"
    }

    /// The bytes of a textual IPv4 or IPv6 address (no brackets, port or zone), or nil.
    static func bytes(of text: String) -> [UInt8]? {
        guard !text.isEmpty, text.utf8.count <= 45 else { return nil }
        return SubjectParsing.ipAddressBytes(text)
    }

    /// The canonical text of 4 or 16 address bytes.
    static func text(of bytes: [UInt8]) -> String? {
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let ok = bytes.withUnsafeBytes { raw in inet_ntop(family, raw.baseAddress, &buffer, socklen_t(buffer.count)) != nil }
        guard ok else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func masked(_ bytes: [UInt8], _ length: Int) -> [UInt8] {
        bytes.enumerated().map { index, byte in
            let bits = length - index * 8
            if bits >= 8 { return byte }
            if bits <= 0 { return 0 }
            return byte & UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
        }
    }
}
