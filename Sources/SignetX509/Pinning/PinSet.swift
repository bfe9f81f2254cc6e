import SignetCore

/// SPKI pins per host, as TrustKit, OWASP and RFC 7469 describe them: a connection to a
/// pinned host is accepted only when one of the host's pinned keys is in the *validated*
/// certificate chain (`docs/formats/pins.md` has the file format and every rule).
///
/// A pin is ``KeyFingerprint``: SHA-256 over a DER `SubjectPublicKeyInfo`, written
/// `sha256/<base64>` — the same value `signet key fingerprint` and `signet cert pin` print.
/// Every pin set is checked when it is made: each host has at least two distinct pins (the key
/// in use and a backup), no host is listed twice, host names and report URIs are valid.
public struct PinSet: Sendable, Equatable {
    /// The version of the pin file format that ``decode(_:source:)`` reads and ``encoded()``
    /// writes.
    public static let formatVersion = 1
    /// The largest pin file read: 1 MiB.
    public static let maximumFileSize = 1 << 20

    /// The hosts, in the order given, normalised: host names in ASCII lowercase without a
    /// trailing dot, expiry dates in whole seconds.
    public let hosts: [HostPins]

    /// Checks and normalises `hosts`; refuses (``X509Error/pinSetInvalid(source:detail:)``
    /// naming `source`) an entry with fewer than two pins or the same pin twice, a host listed
    /// twice, an invalid host name, `includeSubdomains` on a top-level name or an IP address,
    /// and a report URI that is not an `https://` or `http://` URL.
    public init(hosts: [HostPins], source: String = "the pin set") throws {
        var checked: [HostPins] = []
        var seen = Set<String>()
        for entry in hosts {
            let valid: HostPins
            do {
                valid = try entry.validated()
            } catch {
                throw X509Error.pinSetInvalid(source: source, detail: error.detail)
            }
            guard seen.insert(valid.host).inserted else {
                throw X509Error.pinSetInvalid(source: source, detail: "\(valid.host) is listed twice; a host has one entry with all its pins")
            }
            checked.append(valid)
        }
        self.hosts = checked
    }

    /// Reads and decodes the pin file at `path` (`-` for standard input), refusing a file
    /// larger than ``maximumFileSize``.
    public static func load(path: String) throws -> PinSet {
        let source = path == "-" ? "standard input" : path
        let bytes: [UInt8]
        do {
            bytes = try FileInput.readAll(path: path, limit: maximumFileSize)
        } catch SignetCoreError.tooLarge {
            throw X509Error.malformed(source: source, detail: "larger than 1 MiB; not a pin set")
        } catch SignetCoreError.io(let name, let detail) {
            throw X509Error.io(path: name, detail: detail)
        } catch {
            throw X509Error.io(path: source, detail: "\(error)")
        }
        return try decode(bytes, source: source)
    }

    /// The pins for `host`: its own entry when it has one, otherwise the entry of its nearest
    /// parent domain that has `includeSubdomains` (`a.b.example.com` takes `b.example.com`'s
    /// before `example.com`'s); nil when the host is not pinned. `host` is compared in ASCII
    /// lowercase without a trailing dot; an internationalised name must be in its `xn--` form.
    public func policy(for host: String) -> HostPins? {
        let name = HostPins.normalize(host)
        if let exact = hosts.first(where: { $0.host == name }) { return exact }
        var rest = Substring(name)
        while let dot = rest.firstIndex(of: ".") {
            rest = rest[rest.index(after: dot)...]
            let parent = String(rest)
            if let entry = hosts.first(where: { $0.includeSubdomains && $0.host == parent }) { return entry }
        }
        return nil
    }

    /// Refuses the pins of `host` when every one of them is a key of `chain` (the SPKI
    /// fingerprints of the host's current certificate chain): such a set has no backup pin,
    /// and losing or replacing the key in use would lock every client out. Does nothing when
    /// `host` is not pinned.
    public func requireBackupPins(host: String, chain: [KeyFingerprint], source: String = "the pin set") throws {
        guard let entry = policy(for: host) else { return }
        let current = Set(chain)
        guard entry.pins.allSatisfy({ current.contains($0) }) else { return }
        let pins = entry.pins.map(\.description).joined(separator: ", ")
        throw X509Error.pinSetInvalid(
            source: source,
            detail: "\(entry.host): every pin (\(pins)) is a key of the current certificate chain, so there is no backup pin; add the pin of a key that is not in use yet and is kept apart, so the host can move to it without locking its clients out")
    }
}
