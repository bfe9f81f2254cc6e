import Foundation
import SignetX509

// The case families of the differential corpus (docs/certificates.md): each adds the
// certificates it needs and its cases to a CorpusSpec.

extension CorpusSpec {
    /// Leaf EKU {none, serverAuth, clientAuth, both, anyEKU, msSGC} × CA EKU {none, serverAuth,
    /// clientAuth, anyEKU} × root EKU {none, clientAuth} × the three purposes.
    mutating func addExtendedKeyUsage() {
        cert("root-eku-client", "/CN=Differential Root EKU clientAuth", section: "root_eku_client")
        let roots: [(String, String)] = [("none", "root"), ("client", "root-eku-client")]
        let cas: [(String, String)] = [("none", "ca"), ("server", "ca_eku_server"), ("client", "ca_eku_client"), ("any", "ca_anyeku")]
        let leaves: [(String, String)] = [
            ("none", "leaf_noeku"), ("server", "leaf_server"), ("client", "leaf_client"), ("both", "leaf_both"), ("any", "leaf_anyeku"),
            ("sgc", "leaf_sgc"),
        ]
        for (rootName, root) in roots {
            for (caName, caSection) in cas {
                let ca = "eku-ca-\(caName).root-\(rootName)"
                cert(ca, "/CN=EKU CA \(caName) under root \(rootName)", issuer: root, section: caSection)
                for (leafName, leafSection) in leaves {
                    let leaf = "eku-leaf-\(leafName).ca-\(caName).root-\(rootName)"
                    cert(leaf, "/CN=www.example.com", issuer: ca, section: leafSection, days: 365, key: "leaf")
                    check(
                        .extendedKeyUsage, "leaf-\(leafName)/ca-\(caName)/root-\(rootName)", leaf: leaf, untrusted: [ca], roots: [root],
                        purposes: CertificatePurpose.allCases)
                }
            }
        }
    }

    /// Leaf key usages (EKU serverAuth+clientAuth, so only the KU decides); a CA without key
    /// usage, without keyCertSign, without basic constraints; a root without keyCertSign and
    /// one without basic constraints; version 1 certificates (no extensions) as CA, root and leaf.
    mutating func addKeyUsage() {
        let leaves: [(String, String)] = [
            ("none", "leaf_ku_none"), ("digitalSignature", "leaf_both"), ("keyEncipherment", "leaf_ku_ke"), ("keyAgreement", "leaf_ku_ka"),
            ("keyCertSign", "leaf_ku_certsign"), ("ca-true", "leaf_ca_true"),
        ]
        for (leafName, section) in leaves {
            cert("ku-leaf-\(leafName)", "/CN=www.example.com", issuer: "ca", section: section, days: 365, key: "leaf")
            check(.keyUsage, "leaf-\(leafName)", leaf: "ku-leaf-\(leafName)", untrusted: ["ca"], roots: ["root"], purposes: CertificatePurpose.allCases)
        }
        let cas: [(String, String, String)] = [
            ("no-key-usage", "ca_noku", "/CN=CA without key usage"), ("no-keyCertSign", "ca_noku_certsign", "/CN=CA without keyCertSign"),
            ("no-basicConstraints", "ca_nobc", "/CN=CA without basic constraints"),
        ]
        for (caName, section, subject) in cas {
            cert("ku-ca-\(caName)", subject, issuer: "root", section: section)
            cert("ku-leaf.ca-\(caName)", "/CN=www.example.com", issuer: "ku-ca-\(caName)", section: "leaf_server", days: 365, key: "leaf")
            check(.keyUsage, "ca-\(caName)", leaf: "ku-leaf.ca-\(caName)", untrusted: ["ku-ca-\(caName)"], roots: ["root"], purposes: [.server, .any])
        }
        let roots: [(String, String, String)] = [
            ("no-keyCertSign", "root_nocs", "/CN=Root without keyCertSign"), ("no-basicConstraints", "root_nobc", "/CN=Root without basic constraints"),
        ]
        for (rootName, section, subject) in roots {
            cert("ku-root-\(rootName)", subject, section: section)
            cert("ku-leaf.root-\(rootName)", "/CN=www.example.com", issuer: "ku-root-\(rootName)", section: "leaf_server", days: 365, key: "leaf")
            check(.keyUsage, "root-\(rootName)", leaf: "ku-leaf.root-\(rootName)", untrusted: [], roots: ["ku-root-\(rootName)"], purposes: [.server, .any])
        }
        // Version 1: nothing says it is a CA, so only a self-signed one is (a trust anchor, as
        // OpenSSL's check_ca has it); as an intermediate it is refused (error 79), or anyone
        // holding a tutorial-made v1 client certificate could issue for any name. A v1 leaf is fine.
        cert("ku-ca-version-1", "/CN=Version 1 CA", issuer: "root", version1: true)
        cert("ku-leaf.ca-version-1", "/CN=www.example.com", issuer: "ku-ca-version-1", section: "leaf_server", days: 365, key: "leaf")
        check(.keyUsage, "ca-version-1", leaf: "ku-leaf.ca-version-1", untrusted: ["ku-ca-version-1"], roots: ["root"], purposes: [.server, .any])
        cert("ku-root-version-1", "/CN=Version 1 Root", version1: true)
        cert("ku-leaf.root-version-1", "/CN=www.example.com", issuer: "ku-root-version-1", section: "leaf_server", days: 365, key: "leaf")
        check(.keyUsage, "root-version-1", leaf: "ku-leaf.root-version-1", untrusted: [], roots: ["ku-root-version-1"], purposes: [.server, .any])
        cert("ku-leaf-version-1", "/CN=www.example.com", issuer: "ca", days: 365, key: "leaf", version1: true)
        check(.keyUsage, "leaf-version-1", leaf: "ku-leaf-version-1", untrusted: ["ca"], roots: ["root"], purposes: CertificatePurpose.allCases)
    }

    /// DNS name constraints (permitted example.com, excluded victim.test) on an intermediate
    /// and on the root × leaves with the name in or out of them as a SAN or as the CN only ×
    /// no host, the CN's and the SAN's; DNS SANs with a trailing dot under excluded subtrees;
    /// IP constraints; rfc822Name and directoryName ones.
    mutating func addNameConstraints() {
        cert("nc-ca-permitted", "/CN=NC CA permitted example.com", issuer: "root", section: "ca_nc_perm")
        cert("nc-ca-excluded", "/CN=NC CA excluded victim.test", issuer: "root", section: "ca_nc_excl")
        cert("nc-root-permitted", "/CN=NC Root permitted example.com", section: "root_nc_perm")
        cert("nc-root-excluded", "/CN=NC Root excluded victim.test", section: "root_nc_excl")
        cert("nc-ca.root-permitted", "/CN=CA under NC Root permitted example.com", issuer: "nc-root-permitted")
        cert("nc-ca.root-excluded", "/CN=CA under NC Root excluded victim.test", issuer: "nc-root-excluded")
        let leaves: [(String, String, String, [Reference])] = [
            ("san-in", "leaf_server", "/CN=www.example.com", [.dns("www.example.com")]),
            ("san-out", "leaf_san_victim", "/CN=victim.test", [.dns("victim.test")]),
            ("san-in-cn-out", "leaf_server", "/CN=victim.test", [.dns("www.example.com"), .dns("victim.test")]),
            ("cn-in", "leaf_nosan", "/CN=www.example.com", [.dns("www.example.com")]),
            ("cn-out", "leaf_nosan", "/CN=victim.test", [.dns("victim.test")]),
            ("cn-not-dns", "leaf_nosan", "/CN=Victim Service", [.dns("www.example.com")]),
            ("ip-san-cn-out", "leaf_san_ip", "/CN=victim.test", [.ip("127.0.0.1"), .dns("victim.test")]),
        ]
        let places: [(String, String, String)] = [
            ("permitted-on-ca", "nc-ca-permitted", "root"), ("excluded-on-ca", "nc-ca-excluded", "root"),
            ("permitted-on-root", "nc-ca.root-permitted", "nc-root-permitted"), ("excluded-on-root", "nc-ca.root-excluded", "nc-root-excluded"),
        ]
        for (place, issuer, root) in places {
            for (leafName, section, subject, references) in leaves {
                let leaf = "nc-leaf-\(leafName).\(place)"
                cert(leaf, subject, issuer: issuer, section: section, days: 365, key: "leaf")
                check(.nameConstraints, "\(place)/\(leafName)/no-host", leaf: leaf, untrusted: [issuer], roots: [root])
                for reference in references {
                    check(.nameConstraints, "\(place)/\(leafName)/\(reference)", leaf: leaf, untrusted: [issuer], roots: [root], reference: reference)
                }
            }
        }

        // A DNS SAN with a trailing dot under excluded evil.com and localhost, with no host and
        // with the host without the dot (which Signet matches to it): OpenSSL's nc_dns compares
        // the name with its dot and lets it through; Signet holds it to the constraints without
        // the dot. The last leaf, without a dot, is refused by both.
        cert("nc-ca-excluded-evil", "/CN=NC CA excluded evil.com and localhost", issuer: "root", section: "ca_nc_excl_evil")
        for (label, section, host) in Self.trailingDotLeaves + [("a.evil.com", "leaf_san_a_evil", "a.evil.com")] {
            let leaf = "nc-leaf-san-\(label).excluded-evil"
            cert(leaf, "/CN=Dotted Leaf", issuer: "nc-ca-excluded-evil", section: section, days: 365, key: "leaf")
            check(.nameConstraints, "excluded-evil/san-\(label)/no-host", leaf: leaf, untrusted: ["nc-ca-excluded-evil"], roots: ["root"])
            check(
                .nameConstraints, "excluded-evil/san-\(label)/dns-\(host)", leaf: leaf, untrusted: ["nc-ca-excluded-evil"], roots: ["root"],
                reference: .dns(host))
        }

        cert("nc-ca-permitted-ip", "/CN=NC CA permitted 10.0.0.0-8", issuer: "root", section: "ca_nc_perm_ip")
        cert("nc-ca-excluded-ip", "/CN=NC CA excluded 10.0.0.0-8", issuer: "root", section: "ca_nc_excl_ip")
        let ipLeaves: [(String, String, String, Reference)] = [
            ("ip-in", "leaf_san_ip10", "/CN=IP Leaf", .ip("10.1.2.3")), ("ip-out", "leaf_san_ip", "/CN=IP Leaf", .ip("127.0.0.1")),
            ("dns", "leaf_server", "/CN=www.example.com", .dns("www.example.com")),
        ]
        for place in ["permitted-ip", "excluded-ip"] {
            let ca = "nc-ca-\(place)"
            for (leafName, section, subject, reference) in ipLeaves {
                let leaf = "nc-leaf-\(leafName).\(place)"
                cert(leaf, subject, issuer: ca, section: section, days: 365, key: "leaf")
                check(.nameConstraints, "\(place)/\(leafName)/\(reference)", leaf: leaf, untrusted: [ca], roots: ["root"], reference: reference)
            }
        }

        cert("nc-ca-email", "/CN=NC CA permitted email example.com", issuer: "root", section: "ca_nc_email")
        cert("nc-leaf.email", "/CN=www.example.com", issuer: "nc-ca-email", section: "leaf_server", days: 365, key: "leaf")
        check(.nameConstraints, "rfc822Name/dns-www.example.com", leaf: "nc-leaf.email", untrusted: ["nc-ca-email"], roots: ["root"], reference: .dns("www.example.com"))
        cert("nc-ca-dirname", "/CN=NC CA permitted O=Example", issuer: "root", section: "ca_nc_dirname")
        cert("nc-leaf-in.dirname", "/O=Example/CN=www.example.com", issuer: "nc-ca-dirname", section: "leaf_server", days: 365, key: "leaf")
        cert("nc-leaf-out.dirname", "/O=Other/CN=www.example.com", issuer: "nc-ca-dirname", section: "leaf_server", days: 365, key: "leaf")
        check(.nameConstraints, "directoryName/subject-in", leaf: "nc-leaf-in.dirname", untrusted: ["nc-ca-dirname"], roots: ["root"])
        check(.nameConstraints, "directoryName/subject-out", leaf: "nc-leaf-out.dirname", untrusted: ["nc-ca-dirname"], roots: ["root"])
    }

    /// The leaves with a trailing-dot DNS SAN of the name-constraint family: the label in
    /// their case names, their ext.cnf section, and the host (without the dot) they are checked for.
    static let trailingDotLeaves: [(String, String, String)] = [
        ("a.evil.com-dot", "leaf_san_a_evil_dot", "a.evil.com"), ("evil.com-dot", "leaf_san_evil_dot", "evil.com"),
        ("wildcard.evil.com-dot", "leaf_san_wild_evil_dot", "a.evil.com"), ("localhost-dot", "leaf_san_localhost_dot", "localhost"),
    ]

    /// Host names against DNS SANs (case, a trailing dot on either side), wildcards in SANs (an
    /// empty label after the `*` too) and in a CN-only leaf, IP SANs against IP addresses, a CN
    /// that is an IP address, and an IP-only SAN with a DNS-like CN.
    mutating func addNames() {
        let leaves: [(String, String, String, [Reference?])] = [
            ("san-www", "leaf_server", "/CN=www.example.com",
             [.dns("www.example.com"), .dns("WWW.EXAMPLE.COM"), .dns("www.example.com."), .dns("other.example.com"), .ip("127.0.0.1")]),
            ("san-www-dot", "leaf_san_www_dot", "/CN=Dotted Leaf", [.dns("www.example.com")]),
            ("san-wildcard", "leaf_wild_ok", "/CN=Wildcard Leaf",
             [nil, .dns("a.example.com"), .dns("A.EXAMPLE.COM"), .dns("a.b.example.com"), .dns("example.com")]),
            ("san-wildcard-com", "leaf_wild_com", "/CN=Wildcard Leaf", [nil, .dns("bank.com")]),
            ("san-wildcard-star", "leaf_wild_star", "/CN=Wildcard Leaf", [.dns("localhost")]),
            ("san-wildcard-co.uk", "leaf_wild_couk", "/CN=Wildcard Leaf", [.dns("bank.co.uk")]),
            ("san-wildcard-co.uk-dot", "leaf_wild_couk_dot", "/CN=Wildcard Leaf", [.dns("bank.co.uk")]),
            ("san-wildcard-empty-label", "leaf_wild_empty_couk", "/CN=Wildcard Leaf", [.dns("a..co.uk")]),
            ("san-wildcard-empty-label-example", "leaf_wild_empty_example", "/CN=Wildcard Leaf", [.dns("a..example.com")]),
            ("san-wildcard-partial", "leaf_wild_partial", "/CN=Wildcard Leaf", [.dns("foo.example.com"), .dns("bar.example.com")]),
            ("san-wildcard-middle", "leaf_wild_mid", "/CN=Wildcard Leaf", [.dns("www.a.example.com")]),
            ("san-wildcard-idn", "leaf_wild_idn", "/CN=Wildcard Leaf", [.dns("xn--abc.example.com")]),
            ("cn-wildcard", "leaf_nosan", "/CN=*.example.com", [.dns("a.example.com"), .dns("a.b.example.com")]),
            ("cn-wildcard-com", "leaf_nosan", "/CN=*.com", [.dns("bank.com")]),
            ("cn-wildcard-star", "leaf_nosan", "/CN=*", [.dns("localhost")]),
            ("cn-www", "leaf_nosan", "/CN=www.example.com", [.dns("www.example.com"), .dns("other.example.com")]),
            ("san-ip", "leaf_san_ip", "/CN=IP Leaf", [.ip("127.0.0.1"), .ip("127.0.0.2"), .dns("www.example.com")]),
            ("san-ipv6", "leaf_san_ip6", "/CN=IP Leaf", [.ip("::1"), .ip("::2")]),
            ("cn-ip", "leaf_nosan", "/CN=127.0.0.1", [.ip("127.0.0.1")]),
            ("san-ip-cn-www", "leaf_san_ip", "/CN=www.example.com", [.dns("www.example.com"), .ip("127.0.0.1")]),
        ]
        for (leafName, section, subject, references) in leaves {
            let leaf = "name-leaf-\(leafName)"
            cert(leaf, subject, issuer: "ca", section: section, days: 365, key: "leaf")
            for reference in references {
                let label = reference.map { "\($0)" } ?? "no-host"
                check(.names, "\(leafName)/\(label)", leaf: leaf, untrusted: ["ca"], roots: ["root"], reference: reference)
            }
        }
    }

    /// pathlen:0 with no and one sub-CA, pathlen:1 with one and two, and pathlen:0 followed
    /// by a self-issued rollover certificate (which does not count, RFC 5280 §4.2.1.9).
    mutating func addPathLength() {
        cert("pl-ca0", "/CN=PathLen 0 CA", issuer: "root", section: "ca_pl0")
        cert("pl-ca0-sub", "/CN=Sub CA under PathLen 0", issuer: "pl-ca0")
        cert("pl-leaf.ca0", "/CN=www.example.com", issuer: "pl-ca0", section: "leaf_server", days: 365, key: "leaf")
        cert("pl-leaf.ca0-sub", "/CN=www.example.com", issuer: "pl-ca0-sub", section: "leaf_server", days: 365, key: "leaf")
        check(.pathLength, "0/no-sub-ca", leaf: "pl-leaf.ca0", untrusted: ["pl-ca0"], roots: ["root"])
        check(.pathLength, "0/one-sub-ca", leaf: "pl-leaf.ca0-sub", untrusted: ["pl-ca0", "pl-ca0-sub"], roots: ["root"])
        cert("pl-ca1", "/CN=PathLen 1 CA", issuer: "root", section: "ca_pl1")
        cert("pl-ca1-sub", "/CN=Sub CA under PathLen 1", issuer: "pl-ca1")
        cert("pl-ca1-sub2", "/CN=Sub-sub CA under PathLen 1", issuer: "pl-ca1-sub")
        cert("pl-leaf.ca1-sub", "/CN=www.example.com", issuer: "pl-ca1-sub", section: "leaf_server", days: 365, key: "leaf")
        cert("pl-leaf.ca1-sub2", "/CN=www.example.com", issuer: "pl-ca1-sub2", section: "leaf_server", days: 365, key: "leaf")
        check(.pathLength, "1/one-sub-ca", leaf: "pl-leaf.ca1-sub", untrusted: ["pl-ca1", "pl-ca1-sub"], roots: ["root"])
        check(.pathLength, "1/two-sub-cas", leaf: "pl-leaf.ca1-sub2", untrusted: ["pl-ca1", "pl-ca1-sub", "pl-ca1-sub2"], roots: ["root"])
        cert("pl-rollover-old", "/CN=Rollover CA", issuer: "root", section: "ca_pl0")
        cert("pl-rollover-new", "/CN=Rollover CA", issuer: "pl-rollover-old")
        cert("pl-leaf.rollover", "/CN=www.example.com", issuer: "pl-rollover-new", section: "leaf_server", days: 365, key: "leaf")
        check(.pathLength, "0/self-issued-rollover", leaf: "pl-leaf.rollover", untrusted: ["pl-rollover-old", "pl-rollover-new"], roots: ["root"])
    }

    /// A leaf, an intermediate and a root valid one day, checked now and a week later; a leaf
    /// and an intermediate valid only from 30 days on (openssl ca -startdate), checked now and
    /// 40 days later; everything checked a day before it was made.
    mutating func addValidity() {
        let day = Self.day
        cert("val-leaf-1day", "/CN=www.example.com", issuer: "ca", section: "leaf_server", days: 1, key: "leaf")
        check(.validity, "leaf-valid-1-day/now", leaf: "val-leaf-1day", untrusted: ["ca"], roots: ["root"], reference: .dns("www.example.com"))
        check(
            .validity, "leaf-valid-1-day/in-7-days", leaf: "val-leaf-1day", untrusted: ["ca"], roots: ["root"], reference: .dns("www.example.com"),
            after: 7 * day)
        check(
            .validity, "everything/yesterday", leaf: "val-leaf-1day", untrusted: ["ca"], roots: ["root"], reference: .dns("www.example.com"),
            after: -day)
        cert("val-ca-1day", "/CN=CA valid 1 day", issuer: "root", days: 1)
        cert("val-leaf.ca-1day", "/CN=www.example.com", issuer: "val-ca-1day", section: "leaf_server", days: 365, key: "leaf")
        check(.validity, "ca-valid-1-day/now", leaf: "val-leaf.ca-1day", untrusted: ["val-ca-1day"], roots: ["root"])
        check(.validity, "ca-valid-1-day/in-7-days", leaf: "val-leaf.ca-1day", untrusted: ["val-ca-1day"], roots: ["root"], after: 7 * day)
        cert("val-root-1day", "/CN=Root valid 1 day", section: "root", days: 1)
        cert("val-leaf.root-1day", "/CN=www.example.com", issuer: "val-root-1day", section: "leaf_server", days: 365, key: "leaf")
        check(.validity, "root-valid-1-day/now", leaf: "val-leaf.root-1day", untrusted: [], roots: ["val-root-1day"])
        check(.validity, "root-valid-1-day/in-7-days", leaf: "val-leaf.root-1day", untrusted: [], roots: ["val-root-1day"], after: 7 * day)
        cert("val-leaf-future", "/CN=www.example.com", issuer: "ca", section: "leaf_server", days: 365, key: "leaf", startDays: 30)
        check(.validity, "leaf-from-30-days/now", leaf: "val-leaf-future", untrusted: ["ca"], roots: ["root"])
        check(.validity, "leaf-from-30-days/in-40-days", leaf: "val-leaf-future", untrusted: ["ca"], roots: ["root"], after: 40 * day)
        cert("val-ca-future", "/CN=CA valid from 30 days", issuer: "root", days: 400, startDays: 30)
        cert("val-leaf.ca-future", "/CN=www.example.com", issuer: "val-ca-future", section: "leaf_server", days: 365, key: "leaf")
        check(.validity, "ca-from-30-days/now", leaf: "val-leaf.ca-future", untrusted: ["val-ca-future"], roots: ["root"])
        check(.validity, "ca-from-30-days/in-40-days", leaf: "val-leaf.ca-future", untrusted: ["val-ca-future"], roots: ["root"], after: 40 * day)
    }

    /// W keys all named "CN=Mesh CA", each certified by every other (`mesh-MODE-I-J`: key J
    /// signed by key I), with key identifiers (aki) and without (noaki); the leaf is signed by
    /// key 1. Anchors: an unrelated root, key 4's self-signed certificate, and key 4's with
    /// EKU clientAuth. The certificates of W = 7 hold those of every smaller W.
    mutating func addMesh() {
        for i in 1...7 { cert("mesh-self\(i)", "/CN=Mesh CA", section: "root", key: "mesh\(i)") }
        cert("mesh-self4-client", "/CN=Mesh CA", section: "root_eku_client", key: "mesh4")
        cert("mesh-unrelated-root", "/CN=Unrelated Root", section: "root")
        for mode in ["aki", "noaki"] {
            for i in 1...7 {
                for j in 1...7 where i != j {
                    cert("mesh-\(mode)-\(i)-\(j)", "/CN=Mesh CA", issuer: "mesh-self\(i)", section: "meshca_\(mode)", days: 365, key: "mesh\(j)")
                }
            }
            cert("mesh-\(mode)-leaf", "/CN=www.example.com", issuer: "mesh-self1", section: "leaf_\(mode)", days: 365, key: "leaf")
        }
        for width in 4...7 {
            for mode in ["aki", "noaki"] {
                var intermediates: [String] = []
                for i in 1...width {
                    for j in 1...width where i != j { intermediates.append("mesh-\(mode)-\(i)-\(j)") }
                }
                let leaf = "mesh-\(mode)-leaf"
                check(.mesh, "w\(width)-\(mode)/unrelated-root", leaf: leaf, untrusted: intermediates, roots: ["mesh-unrelated-root"])
                check(.mesh, "w\(width)-\(mode)/root-key4", leaf: leaf, untrusted: intermediates, roots: ["mesh-self4"])
                check(
                    .mesh, "w\(width)-\(mode)/root-key4-clientAuth", leaf: leaf, untrusted: intermediates, roots: ["mesh-self4-client"],
                    purposes: CertificatePurpose.allCases)
            }
        }
    }
}
