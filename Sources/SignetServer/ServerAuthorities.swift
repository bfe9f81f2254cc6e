import X509

/// The names a server answers to, so that a request signed for another server — another
/// deployment of the same app, or `https://evil.example` relayed here — is refused before its
/// signature is even checked (a signature binds the server's own authority).
///
/// Behind a proxy the server is told its public authority (``ServerConfiguration/publicAuthority``)
/// and verifies every signature against it, whatever `Host` says, so no list is needed. Otherwise
/// the authority of a request must name one of ``hosts`` — the names its TLS certificate is for,
/// and the address it is bound to — and the port the connection came in on.
struct ServerAuthorities: Sendable {
    /// Lower-case host names and canonical IP addresses; `*.example.com` matches one label.
    let hosts: Set<String>

    init(hostname: String, certificate: Certificate?) {
        var hosts: Set<String> = []
        if let address = IPAddressRange.bytes(of: hostname).flatMap(IPAddressRange.text(of:)) {
            // A wildcard bind names no address a client would use.
            if address != "0.0.0.0", address != "::" { hosts.insert(address) }
        } else {
            hosts.insert(hostname.lowercased())
        }
        for name in certificate.flatMap({ try? $0.extensions.subjectAlternativeNames }).map(Array.init) ?? [] {
            switch name {
            case .dnsName(let dns): hosts.insert(dns.lowercased())
            case .ipAddress(let bytes): IPAddressRange.text(of: Array(bytes.bytes)).map { _ = hosts.insert($0) }
            default: break
            }
        }
        self.hosts = hosts
    }

    /// Throws ``ServerError/wrongAuthority(authority:)`` unless `authority` (`host[:port]`, as
    /// the request's `Host` gives it) names this server on `localPort`.
    func check(_ authority: String?, localPort: Int?, scheme: String) throws {
        guard let authority, !authority.isEmpty else { throw ServerError.wrongAuthority(authority: "") }
        let (host, port) = Self.split(authority)
        let defaultPort = scheme == "https" ? 443 : 80
        guard let host, accepts(host), (port ?? defaultPort) == (localPort ?? defaultPort) else {
            throw ServerError.wrongAuthority(authority: String(authority.prefix(200)))
        }
    }

    func accepts(_ host: String) -> Bool {
        if let address = IPAddressRange.bytes(of: host).flatMap(IPAddressRange.text(of:)) { return hosts.contains(address) }
        let host = host.lowercased()
        if hosts.contains(host) { return true }
        guard let dot = host.firstIndex(of: ".") else { return false }
        return hosts.contains("*" + host[dot...])
    }

    /// `example.com:8443` → (`example.com`, 8443); `[::1]:8443` → (`::1`, 8443); nil host when malformed.
    static func split(_ authority: String) -> (host: String?, port: Int?) {
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return (nil, nil) }
            let host = String(authority[authority.index(after: authority.startIndex)..<close])
            let rest = authority[authority.index(after: close)...]
            if rest.isEmpty { return (host, nil) }
            guard rest.hasPrefix(":"), let port = Int(rest.dropFirst()), (1...65535).contains(port) else { return (nil, nil) }
            return (host, port)
        }
        let parts = authority.split(separator: ":", omittingEmptySubsequences: false)
        switch parts.count {
        case 1: return (String(parts[0]), nil)
        case 2:
            guard let port = Int(parts[1]), (1...65535).contains(port), !parts[0].isEmpty else { return (nil, nil) }
            return (String(parts[0]), port)
        default: return (nil, nil)
        }
    }
}
