import Foundation
import SignetTestSupport
import Testing

/// `signet token …` and `pkcs11:` URIs as keys, on a SoftHSM2 store of each test's own
/// (``SoftHSM``), checked against openssl, minisign, pkcs11-tool and python's `cryptography`.
/// The refusals (PINs, modules, URIs that match nothing or too much) are in TokenCLIErrorTests.swift.
@Suite("signet token and pkcs11: keys (SoftHSM2)")
struct TokenCLITests {
    /// The types generated in ``listAndGenerate()``, with their JSON `type`.
    static let generated: [(type: String, json: String)] = [("p256", "EC"), ("p384", "EC"), ("rsa2048", "RSA"), ("ed25519", "EC-Edwards")]

    @Test("token list shows the token; token generate prints URIs that token keys and key fingerprint agree on")
    func listAndGenerate() throws {
        let box = try Sandbox()
        let store = try SoftHSM(box, tokens: "demo")

        // Listing tokens needs no PIN.
        let listed = try store.signetOK("token", "list", pin: nil)
        #expect(listed.out.contains("pkcs11:token=demo;serial="), "\(listed)")
        #expect(listed.out.contains(SoftHSM.module), "\(listed)")
        let json = try #require(try SoftHSM.json(try store.signetOK("token", "list", "--json", pin: nil)) as? [String: Any])
        #expect(json["module"] as? String == SoftHSM.module, "\(json)")
        let slots = try #require(json["slots"] as? [[String: Any]], "\(json)")
        let demo = try #require(slots.first(where: { $0["label"] as? String == "demo" }), "no token demo in \(slots)")
        let tokenURI = try #require(demo["uri"] as? String)
        #expect(tokenURI.hasPrefix("pkcs11:token=demo;"), "\(demo)")
        #expect(demo["loginRequired"] as? Bool == true, "\(demo)")
        #expect(listed.out.contains(tokenURI), "the text and the JSON name different URIs: \(listed)")

        var fingerprints: [String: String] = [:]
        for (type, _) in Self.generated {
            let result = try store.signetOK("token", "generate", "pkcs11:token=demo;object=\(type)", "-t", type)
            let uri = result.out.trimmingCharacters(in: .newlines)
            #expect(result.out == uri + "\n", "not one URI line: \(result)")
            #expect(uri.hasPrefix("pkcs11:token=demo;object=\(type);id=%") && uri.hasSuffix(";type=private"), "\(uri)")
            let fingerprint = try store.fingerprint(uri)
            #expect(fingerprint.hasPrefix("sha256/"), "\(fingerprint)")
            #expect(result.stderr.contains("generated \(type) on token demo: \(fingerprint)"), "\(result)")
            fingerprints[uri] = fingerprint
        }

        // token keys --login lists each private key with its URI and fingerprint, as text and JSON.
        let text = try store.signetOK("token", "keys", "--login")
        let lines = text.out.split(separator: "\n").map(String.init)
        for (uri, fingerprint) in fingerprints {
            #expect(lines.contains { $0.hasPrefix(uri + " ") && $0.hasSuffix(" " + fingerprint) }, "\(uri) not listed: \(text)")
        }
        let keys = try store.keys()
        #expect(keys.count == Self.generated.count, "\(keys)")
        for (type, jsonType) in Self.generated {
            let key = try #require(keys.first(where: { ($0["uri"] as? String)?.contains("object=\(type);") == true }), "no \(type) in \(keys)")
            let uri = try #require(key["uri"] as? String)
            #expect(key["fingerprint"] as? String == fingerprints[uri], "\(key)")
            #expect(key["type"] as? String == jsonType, "\(key)")
            #expect(key["private"] as? Bool == true, "\(key)")
        }
        // Without --login only public objects (no PIN needed), with the same fingerprints.
        let publicKeys = try store.keys(login: false)
        #expect(Set(publicKeys.compactMap { $0["fingerprint"] as? String }) == Set(fingerprints.values), "\(publicKeys)")
        #expect(publicKeys.allSatisfy { $0["private"] as? Bool == false && ($0["uri"] as? String)?.hasSuffix(";type=public") == true })

        // The same object and id again is refused, and nothing is added.
        let again = try #require(fingerprints.keys.first(where: { $0.contains("object=p256;") }))
        let refused = try store.signet("token", "generate", again, "-t", "p256")
        #expect(refused.status == 2, "\(refused)")
        #expect(refused.stderr.contains("already has a key"), "\(refused)")
        #expect(refused.out.isEmpty, "\(refused)")
        #expect(try store.keys().count == Self.generated.count)
    }

    @Test("without id=, a generated key's id is SHA-1 of its public key (modulus, EC point), as OpenSC derives it; pkcs11-tool sees it")
    func intrinsicIDs() throws {
        let box = try Sandbox()
        let store = try SoftHSM(box, tokens: "demo")
        for (type, command) in [
            ("p256", "openssl pkey -pubin -in p256.pem -outform DER | tail -c 65 | sha1sum"),
            ("rsa2048", "openssl rsa -pubin -in rsa2048.pem -noout -modulus | cut -d= -f2 | xxd -r -p | sha1sum"),
        ] {
            let uri = try store.generate("pkcs11:token=demo;object=\(type)", type: type)
            try store.exportPublic(uri, to: "\(type).pem")
            let expected = String(try box.shell(command).out.prefix(40))
            let idText = try #require(uri.split(separator: ";").first { $0.hasPrefix("id=") }).dropFirst(3)
            let id = idText.replacingOccurrences(of: "%", with: "").lowercased()
            #expect(id == expected, "\(type): \(uri)")
            let listed = try store.pkcs11ToolOK(token: "demo", "--list-objects", "--type", "pubkey")
            #expect(listed.out.contains("ID:         \(expected)") || listed.out.lowercased().contains(expected), "\(listed)")
        }
    }

    @Test("token generate refuses a URI that already names a key, and never makes a key that cannot sign")
    func generateRefusesTakenNames() throws {
        let box = try Sandbox()
        let store = try SoftHSM(box, tokens: "demo")
        try box.write("file", "to be signed\n")
        let first = try store.generate("pkcs11:token=demo;object=k;id=%01", type: "p256")
        // `signet token generate --help`: a label or an id already on the token is refused.
        let sameObject = try store.signet("token", "generate", "pkcs11:token=demo;object=k", "-t", "p256")
        #expect(sameObject.status == 2, "object=k already names a key: \(sameObject)")
        #expect(sameObject.stderr.contains("already has a key labelled \"k\""), "\(sameObject)")
        #expect(!sameObject.stderr.contains("--force"), "\(sameObject)")
        // A new label with an id already in use: refused, or else both keys still sign.
        let sameID = try store.signet("token", "generate", "pkcs11:token=demo;object=other;id=%01", "-t", "p256")
        if sameID.status == 0 {
            for uri in [first, "pkcs11:token=demo;object=other"] {
                let signed = try store.signet("sign", "--key", uri, "file", "-o", box.path("sig"))
                #expect(signed.status == 0, "a key sharing its id with another cannot sign: \(signed)")
                try? FileManager.default.removeItem(atPath: box.path("sig"))
            }
        } else {
            #expect(sameID.status == 2, "\(sameID)")
        }
    }

    @Test("signatures made on the token verify with openssl, and with signet given the URI or the exported key",
          arguments: TokenSignCase.all)
    func signaturesVerify(test: TokenSignCase) throws {
        let box = try Sandbox()
        let store = try SoftHSM(box, tokens: "demo")
        try box.writeData("file", size: 1 << 20)
        let uri = "pkcs11:token=demo;object=key"
        let fingerprint = try store.fingerprint(try store.generate(uri, type: test.type))
        try store.exportPublic(uri, to: "key.pub")
        #expect(try box.readText("key.pub").hasPrefix("-----BEGIN PUBLIC KEY-----\n"))

        let signed = try store.signet(arguments: ["sign", "--key", uri] + test.algorithmArguments + ["file", "-o", "sig"])
        #expect(signed.status == 0, "\(signed)")
        #expect(signed.out.isEmpty, "\(signed)")
        let theirs = try test.opensslVerify(box, publicKey: "key.pub", signature: "sig", file: "file")
        #expect(theirs.status == 0, "\(theirs)")

        // signet verify: the token's public key (no PIN needed) and the exported file agree.
        for key in [uri, "key.pub"] {
            let verified = try store.signet(arguments: ["verify", "--key", key] + test.algorithmArguments + ["--signature", "sig", "file"], pin: nil)
            #expect(verified.status == 0, "\(verified)")
            #expect(verified.stderr.contains("file: signature OK (\(test.reported), key \(fingerprint))"), "\(verified)")
        }
        // Not vacuous: a changed file fails all three.
        try box.tamper("file")
        #expect(try test.opensslVerify(box, publicKey: "key.pub", signature: "sig", file: "file").status != 0)
        for key in [uri, "key.pub"] {
            let refused = try store.signet(arguments: ["verify", "--key", key] + test.algorithmArguments + ["--signature", "sig", "file"], pin: nil)
            #expect(refused.status == 1, "\(refused)")
        }
    }

    @Test("token public writes the key as DER, OpenSSH and JWK, all the same key as the PEM")
    func publicKeyFormats() throws {
        let box = try Sandbox()
        let store = try SoftHSM(box, tokens: "demo")
        let uri = "pkcs11:token=demo;object=p384"
        try store.generate(uri, type: "p384")
        try store.exportPublic(uri, to: "key.pem")
        try store.exportPublic(uri, to: "key.der", format: "der")
        let fromDER = try box.must("openssl", "pkey", "-pubin", "-inform", "DER", "-in", "key.der")
        #expect(fromDER.out == (try box.readText("key.pem")))
        // signet key public takes the URI as well, and says the same.
        #expect(try store.signetOK("key", "public", uri, pin: nil).out == (try box.readText("key.pem")))
        try store.exportPublic(uri, to: "key.ssh", format: "openssh")
        #expect(try box.readText("key.ssh").hasPrefix("ecdsa-sha2-nistp384 AAAA"))
        try store.exportPublic(uri, to: "key.jwk", format: "jwk")
        let jwk = try #require(try JSONSerialization.jsonObject(with: try box.read("key.jwk")) as? [String: Any])
        #expect(jwk["kty"] as? String == "EC" && jwk["crv"] as? String == "P-384", "\(jwk)")
        #expect(jwk["kid"] as? String == (try store.fingerprint(uri)), "\(jwk)")
    }

    @Test("minisign sign -s pkcs11:… makes signatures minisign -V verifies with token public --format minisign")
    func minisignWithToken() throws {
        let box = try Sandbox()
        let store = try SoftHSM(box, tokens: "demo")
        try box.writeData("data.bin")
        let ed = "pkcs11:token=demo;object=ed"
        try store.generate(ed, type: "ed25519")
        let signed = try store.signet("minisign", "sign", "-s", ed, "-m", "data.bin")
        #expect(signed.status == 0, "\(signed)")
        #expect(box.exists("data.bin.minisig"))
        try store.exportPublic(ed, to: "ed.pub", format: "minisign")
        let publicLines = try box.readText("ed.pub").split(separator: "\n")
        try #require(publicLines.count == 2, "\(publicLines)")
        let keyID = try #require(publicLines[0].split(separator: " ").last.map(String.init))
        #expect(publicLines[0] == "untrusted comment: minisign public key \(keyID)", "\(publicLines)")
        #expect(signed.stderr.contains("signed with key \(keyID)"), "\(signed)")
        let checked = try box.minisign("-V", "-p", "ed.pub", "-m", "data.bin")
        #expect(checked.status == 0, "\(checked)")
        #expect(checked.out.contains("Signature and comment signature verified"), "\(checked)")
        #expect(try store.signet("minisign", "verify", "-p", box.path("ed.pub"), "-m", "data.bin", pin: nil).status == 0)
        try box.tamper("data.bin")
        #expect(try box.minisign("-V", "-p", "ed.pub", "-m", "data.bin").status != 0)

        // A P-256 key is no minisign key: refused, and nothing is written.
        let p256 = "pkcs11:token=demo;object=p256"
        try store.generate(p256, type: "p256")
        let refused = try store.signet("minisign", "sign", "-s", p256, "-m", "data.bin", "-x", box.path("p256.minisig"))
        #expect(refused.status == 3, "\(refused)")
        #expect(refused.stderr.contains("minisign signs with Ed25519 keys") && refused.stderr.contains("P-256"), "\(refused)")
        #expect(!box.exists("p256.minisig"))
        let noPublic = try store.signet("token", "public", p256, "--format", "minisign", "-o", box.path("p256.pub"), pin: nil)
        #expect(noPublic.status == 2, "\(noPublic)")
        #expect(noPublic.stderr.contains("Ed25519"), "\(noPublic)")
        #expect(!box.exists("p256.pub"))
    }

    @Test("a key pkcs11-tool generated signs through signet, named by its label")
    func pkcs11ToolKeySignsWithSignet() throws {
        let box = try Sandbox()
        let store = try SoftHSM(box, tokens: "demo")
        try store.pkcs11ToolOK(token: "demo", "--keypairgen", "--key-type", "EC:prime256v1", "--id", "01", "--label", "fromtool")
        try box.writeData("file", size: 1 << 16)
        let uri = "pkcs11:token=demo;object=fromtool"
        #expect(try store.signet("sign", "--key", uri, "file", "-o", "sig").status == 0)
        try store.exportPublic(uri, to: "key.pub")
        #expect(try box.must("openssl", "dgst", "-sha256", "-verify", "key.pub", "-signature", "sig", "file").out == "Verified OK\n")
        // signet lists it with the id pkcs11-tool gave it, and the same key pkcs11-tool reads out.
        let listed = try store.keys("pkcs11:token=demo")
        #expect(listed.compactMap { $0["uri"] as? String } == ["pkcs11:token=demo;object=fromtool;id=%01;type=private"], "\(listed)")
        try store.pkcs11ToolOK(token: "demo", "--read-object", "--type", "pubkey", "--id", "01", "-o", box.path("tool.der"))
        #expect(try box.must("openssl", "pkey", "-pubin", "-inform", "DER", "-in", "tool.der").out == (try box.readText("key.pub")))
    }

    @Test("a key signet generated signs with pkcs11-tool, and signet verifies what it made")
    func signetKeySignsWithPKCS11Tool() throws {
        let box = try Sandbox()
        let store = try SoftHSM(box, tokens: "demo")
        let uri = try store.generate("pkcs11:token=demo;object=forTool;id=%A1%B2", type: "p256")
        #expect(uri == "pkcs11:token=demo;object=forTool;id=%A1%B2;type=private")
        try box.writeData("file", size: 1 << 16)
        try box.shell("openssl dgst -sha256 -binary file > digest.bin")
        try store.pkcs11ToolOK(
            token: "demo", "--sign", "--mechanism", "ECDSA", "--id", "a1b2", "-i", box.path("digest.bin"), "-o", box.path("sig"),
            "--signature-format", "openssl")
        try store.exportPublic("pkcs11:token=demo;object=forTool", to: "key.pub")
        #expect(try box.must("openssl", "dgst", "-sha256", "-verify", "key.pub", "-signature", "sig", "file").out == "Verified OK\n")
        try store.expectVerifies(key: "pkcs11:token=demo;object=forTool", reporting: "ecdsa-p256-sha256")
    }

    @Test("bundles signed on the token verify against trust roots made from the exported keys or the URIs")
    func bundleWithTokenKeys() throws {
        let box = try Sandbox()
        let store = try SoftHSM(box, tokens: "demo")
        let ed = "pkcs11:token=demo;object=ed", p256 = "pkcs11:token=demo;object=p256"
        try store.generate(ed, type: "ed25519")
        try store.generate(p256, type: "p256")
        try store.exportPublic(ed, to: "ed.pub")
        try store.exportPublic(p256, to: "p256.pub")
        try box.makeTree("src", ["a.txt": "alpha\n", "sub/b.txt": "beta\n"])
        try store.signetOK("bundle", "create", "-q", "--key", ed, "--key", p256, "--name", "app", "--version", "1", "-o", box.path("app.bundle"), box.path("src"))
        try box.trustInit("trust.json", keys: ["ed", "p256"], threshold: 2)
        let verified = try box.bundleVerify("app.bundle")
        #expect(verified.status == 0, "\(verified)")
        // A trust root made straight from the token's public keys (no PIN) is the same root.
        try store.signetOK("bundle", "trust", "init", "-q", "--threshold", "2", "--key", ed, "--key", p256, "-o", box.path("token-trust.json"), pin: nil)
        #expect(try box.read("token-trust.json") == (try box.read("trust.json")))
        #expect(try box.bundleVerify("app.bundle", trust: "token-trust.json", state: "state2").status == 0)
        // The token key signs a rotation to a file key; the pinned root follows it.
        try box.makeKey("next")
        try store.signetOK("bundle", "trust", "rotate", "-q", "--trust", box.path("token-trust.json"), "--key", box.path("next.pub"),
                           "--sign", ed, "--sign", p256, "-o", box.path("next.json"))
        #expect(try box.signet("bundle", "trust", "update", "-q", "--trust", box.path("token-trust.json"), box.path("next.json")).status == 0)
        // Signed by one key only, the bundle falls short of the threshold of 2.
        try store.signetOK("bundle", "create", "-q", "--key", ed, "--name", "app", "--version", "2", "-o", box.path("one.bundle"), box.path("src"))
        #expect(try box.bundleVerify("one.bundle").status == 1)
    }

    @Test("request sign with a token key: signet verifies with the URI or the exported key, python cryptography agrees",
          arguments: [("p256", "ecdsa-p256-sha256"), ("rsa2048", "rsa-pss-sha512"), ("ed25519", "ed25519")])
    func requestWithTokenKey(type: String, algorithm: String) throws {
        let box = try Sandbox()
        let store = try SoftHSM(box, tokens: "demo")
        let uri = "pkcs11:token=demo;object=api"
        try store.generate(uri, type: type)
        try store.exportPublic(uri, to: "key.pub")
        try box.write("body", "{\"order\": 42}\n")
        let url = RequestCLITests.url
        let fingerprint = try store.fingerprint(uri)
        let signed = try store.signetOK("request", "sign", "-X", "POST", "--url", url, "--body", "body", "--key", uri)
        let fields = signed.out.split(separator: "\n").map(String.init)
        try #require(fields.count == 3, "\(signed)")
        #expect(fields[1].contains(";alg=\"\(algorithm)\";keyid=\"\(fingerprint)\""), "\(fields)")
        try box.write("signed.txt", signed.out)
        #expect(try box.python(RequestCLITests.crossCheck, algorithm, "key.pub", "", "POST", url, "body", "signed.txt").out == "OK\n")
        for key in [uri, "key.pub"] {
            let verified = try store.signet(
                arguments: ["request", "verify", "-X", "POST", "--url", url, "--body", "body", "--key", key] + fields.flatMap { ["-H", $0] }, pin: nil)
            #expect(verified.status == 0, "\(verified)")
            #expect(verified.stderr.contains("signature sig1 valid (\(algorithm),"), "\(verified)")
            let other = try store.signet(
                arguments: ["request", "verify", "-X", "GET", "--url", url, "--body", "body", "--key", key] + fields.flatMap { ["-H", $0] }, pin: nil)
            #expect(other.status == 1, "\(other)")
        }
    }

    @Test("cert self-signed, csr and issue with token keys make certificates and requests openssl accepts")
    func certificatesWithTokenKeys() throws {
        let box = try Sandbox()
        let store = try SoftHSM(box, tokens: "demo")
        let leafKey = "pkcs11:token=demo;object=leaf", caKey = "pkcs11:token=demo;object=ca"
        try store.generate(leafKey, type: "p384")
        try store.generate(caKey, type: "rsa2048")
        try store.exportPublic(leafKey, to: "leaf.pub")

        let fingerprint = try store.fingerprint(leafKey)
        let selfSigned = try store.signetOK("cert", "self-signed", "--key", leafKey, "--subject", "CN=x", "--san", "DNS:x.test", "-o", "cert.pem")
        #expect(selfSigned.stderr.contains("pin \(fingerprint)"), "\(selfSigned)")
        #expect(try box.must("openssl", "verify", "-CAfile", "cert.pem", "cert.pem").out == "cert.pem: OK\n")
        #expect(try box.must("openssl", "x509", "-in", "cert.pem", "-pubkey", "-noout").out == (try box.readText("leaf.pub")))

        try store.signetOK("cert", "csr", "--key", leafKey, "--subject", "CN=leaf", "--san", "DNS:leaf.test", "-o", "req.csr")
        try box.must("openssl", "req", "-in", "req.csr", "-verify", "-noout")
        #expect(try box.must("openssl", "req", "-in", "req.csr", "-pubkey", "-noout").out == (try box.readText("leaf.pub")))

        // A CA whose key is on the token issues for the CSR.
        try store.signetOK("cert", "self-signed", "--key", caKey, "--subject", "CN=Token CA", "--ca", "-o", "ca.pem")
        try store.signetOK("cert", "issue", "--ca-cert", "ca.pem", "--ca-key", caKey, "req.csr", "-o", "leaf.pem")
        #expect(try box.must("openssl", "verify", "-CAfile", "ca.pem", "leaf.pem").out == "leaf.pem: OK\n")
    }
}
