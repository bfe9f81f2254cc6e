/// The rules for DNS names in certificates that Signet applies when it checks a server's name
/// and when it makes a CSR or a certificate (docs/certificates.md):
///
/// - a presented name matches a host exactly, ignoring case and one trailing dot;
/// - a wildcard is only the whole left-most label (`*.example.com`: not `f*.example.com`,
///   `www.*.example.com` or `xn--*.example.com`), matches exactly one label, and never covers a
///   public suffix or a single label (`*`, `*.com`, `*.co.uk`), as the CA/Browser Forum's
///   requirements and browsers have it.
package enum DNSNameRules {
    /// `name` lower-cased (ASCII only) with one trailing dot removed, or nil when it is not ASCII.
    package static func normalised(_ name: String) -> String? {
        guard name.utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
        let lower = name.lowercased()
        return lower.hasSuffix(".") ? String(lower.dropLast()) : lower
    }

    /// Whether the presented name `presented` (from a dNSName or, with the fallback, a CN)
    /// is for `host` (already ``normalised(_:)``).
    package static func matches(presented: String, host: String) -> Bool {
        guard let presented = normalised(presented), !presented.isEmpty, !host.isEmpty else { return false }
        if !presented.contains("*") { return presented == host }
        guard let base = wildcardBase(presented) else { return false }
        guard host.hasSuffix("." + base) else { return false }
        let label = host.dropLast(base.count + 1)
        return !label.isEmpty && !label.contains(".")
    }

    /// The part after `*.` of a wildcard name that may be presented or issued, or nil when
    /// the wildcard breaks a rule (see the type's description).
    package static func wildcardBase(_ name: String) -> String? {
        guard name.hasPrefix("*.") else { return nil }
        let base = String(name.dropFirst(2))
        guard !base.contains("*"), base.contains("."), !hasEmptyLabel(base), !PublicSuffixList.isPublicSuffix(base) else { return nil }
        return base
    }

    /// Why `name` may not be put in a certificate as a DNS name, or nil when it may.
    package static func problemIssuing(_ name: String) -> String? {
        // One trailing dot (the root) changes nothing: `*.co.uk.` is `*.co.uk`.
        let trimmed = name.hasSuffix(".") ? String(name.dropLast()) : name
        guard !hasEmptyLabel(trimmed) else { return "\(name): a DNS name has no empty labels (no leading dot, no two dots in a row)" }
        guard trimmed.contains("*") else { return nil }
        guard trimmed.hasPrefix("*."), !trimmed.dropFirst(2).contains("*") else {
            return "\(name): a wildcard must be the whole left-most label, as in *.example.com"
        }
        let base = String(trimmed.dropFirst(2)).lowercased()
        guard base.contains(".") else { return "\(name): a wildcard must cover a registrable domain: \(base) is a top-level domain" }
        if PublicSuffixList.isPublicSuffix(base) {
            return "\(name): a wildcard must cover a registrable domain: \(base) is a public suffix"
        }
        return nil
    }

    /// Whether a CN value is a DNS name by OpenSSL's rule for name constraints (`cn2dnsid`):
    /// letters, digits, `_`, `-` and `.`, at least two labels, no `-` or `.` first or last or
    /// beside a `.` (one trailing dot ignored). Such a CN in a leaf without DNS names is held
    /// to the chain's DNS name constraints.
    package static func commonNameIsDNSName(_ value: String) -> Bool {
        var bytes = Array(value.utf8)
        if bytes.last == UInt8(ascii: ".") { bytes.removeLast() }
        guard !bytes.isEmpty else { return false }
        var labels = false
        for (index, byte) in bytes.enumerated() {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"):
                continue
            case UInt8(ascii: "-") where index > 0 && index < bytes.count - 1:
                continue
            case UInt8(ascii: ".") where index > 0 && index < bytes.count - 1:
                let before = bytes[index - 1]
                let after = bytes[index + 1]
                guard after != UInt8(ascii: "."), before != UInt8(ascii: "-"), after != UInt8(ascii: "-") else { return false }
                labels = true
            default:
                return false
            }
        }
        return labels
    }

    /// Whether `name` is within the DNS subtree `base` of a name constraint, as OpenSSL's
    /// `nc_dns` decides: an empty base holds every name; `example.com` holds itself and every
    /// name under it; `.example.com` only the names under it. Case is ignored.
    package static func constraint(_ base: String, holds name: String) -> Bool {
        // One trailing dot (the root) on either side changes nothing.
        var base = base.lowercased()
        if base.hasSuffix(".") { base.removeLast() }
        var name = name.lowercased()
        if name.hasSuffix(".") { name.removeLast() }
        guard !base.isEmpty else { return true }
        if name.count > base.count {
            let cut = name.index(name.endIndex, offsetBy: -base.count)
            guard base.hasPrefix(".") || name[name.index(before: cut)] == "." else { return false }
            return name[cut...] == base
        }
        return name == base
    }

    /// Whether `name` has an empty label: a leading dot, two dots in a row, or (not removed
    /// before) a trailing one; the empty name is one empty label.
    package static func hasEmptyLabel(_ name: String) -> Bool {
        name.split(separator: ".", omittingEmptySubsequences: false).contains { $0.isEmpty }
    }
}
