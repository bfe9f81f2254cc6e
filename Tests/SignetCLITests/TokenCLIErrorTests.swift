import Foundation
import SignetTestSupport
import Testing

/// The refusals of `pkcs11:` keys: PINs, URIs that select no key or several, modules that are
/// missing or not PKCS#11, malformed URIs. Each says why, exits with its documented status and
/// writes no output file.
extension TokenCLITests {
    /// Requires a refusal: `status`, every one of `phrases` on standard error, nothing on
    /// standard output, and no file `output` in the sandbox.
    static func expectRefused(
        _ result: RunResult, status: Int32, saying phrases: [String], output: String? = "sig", in box: Sandbox,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(result.status == status, "\(result)", sourceLocation: sourceLocation)
        for phrase in phrases {
            #expect(result.stderr.contains(phrase), "no \(phrase.debugDescription): \(result)", sourceLocation: sourceLocation)
        }
        #expect(result.out.isEmpty, "\(result)", sourceLocation: sourceLocation)
        if let output { #expect(!box.exists(output), "\(output) was written: \(result)", sourceLocation: sourceLocation) }
    }

    @Test("a wrong PIN exits 1 saying so and writes nothing; the right one still works")
    func wrongPIN() throws {
        let box = try Sandbox()
        // A token of its own: the wrong tries count against its user PIN.
        let store = try SoftHSM(box, tokens: "locked")
        let uri = "pkcs11:token=locked;object=k"
        try store.generate(uri, type: "p256")
        try box.write("file", "to be signed\n")

        let fromEnvironment = try store.signet("sign", "--key", uri, "file", "-o", "sig", pin: "0000")
        Self.expectRefused(fromEnvironment, status: 1, saying: ["wrong PIN", "locked"], in: box)
        try box.write("bad.pin", "0000\n")
        let fromFile = try store.signet("sign", "--key", uri, "--pin-file", box.path("bad.pin"), "file", "-o", "sig", pin: nil)
        Self.expectRefused(fromFile, status: 1, saying: ["wrong PIN"], in: box)
        let generate = try store.signet("token", "generate", "pkcs11:token=locked;object=k2", "-t", "p256", pin: "0000")
        Self.expectRefused(generate, status: 1, saying: ["wrong PIN"], output: nil, in: box)
        let list = try store.signet("token", "keys", "--login", pin: "0000")
        Self.expectRefused(list, status: 1, saying: ["wrong PIN"], output: nil, in: box)

        // Nothing was generated, and the right PIN signs.
        #expect(try store.keys().count == 1)
        let signed = try store.signet("sign", "--key", uri, "file", "-o", "sig")
        #expect(signed.status == 0, "\(signed)")
        #expect(box.exists("sig"))
    }

    @Test("with no PIN source and no terminal signet exits 4 saying how to give one; --pin-file and pin-source work")
    func pinSources() throws {
        let box = try Sandbox()
        let store = try SoftHSM(box, tokens: "demo")
        let uri = "pkcs11:token=demo;object=k"
        try store.generate(uri, type: "ed25519")
        try box.write("file", "to be signed\n")

        let none = try store.signet("sign", "--key", uri, "file", "-o", "sig", pin: nil)
        Self.expectRefused(none, status: 4, saying: ["PIN", "--pin-file", "SIGNET_PKCS11_PIN", "pin-source"], in: box)
        let noLogin = try store.signet("token", "keys", "--login", pin: nil)
        Self.expectRefused(noLogin, status: 4, saying: ["--pin-file"], output: nil, in: box)
        let missingFile = try store.signet("sign", "--key", uri, "--pin-file", box.path("nosuch.pin"), "file", "-o", "sig", pin: nil)
        Self.expectRefused(missingFile, status: 4, saying: ["nosuch.pin"], in: box)

        // Public keys need no PIN.
        #expect(try store.signet("token", "public", uri, pin: nil).status == 0)
        #expect(try store.signet("key", "fingerprint", uri, pin: nil).status == 0)

        try box.write("pin.txt", SoftHSM.pin + "\n")
        let pinFile = try store.signet("sign", "--key", uri, "--pin-file", box.path("pin.txt"), "file", "-o", "sig1", pin: nil)
        #expect(pinFile.status == 0, "\(pinFile)")
        let pinSource = try store.signet("sign", "--key", uri + "?pin-source=file:" + box.path("pin.txt"), "file", "-o", "sig2", pin: nil)
        #expect(pinSource.status == 0, "\(pinSource)")
        // A PIN in the URI itself would be on the command line: refused, and never echoed.
        let pinValue = try store.signet("sign", "--key", uri + "?pin-value=" + SoftHSM.pin, "file", "-o", "sig4", pin: nil)
        Self.expectRefused(pinValue, status: 2, saying: ["pin-value is not accepted here", "pin-source"], in: box)
        #expect(!pinValue.stderr.contains("=" + SoftHSM.pin), "\(pinValue)")
        // --pin-file wins over a wrong SIGNET_PKCS11_PIN.
        let overridden = try store.signet("sign", "--key", uri, "--pin-file", box.path("pin.txt"), "file", "-o", "sig3", pin: "0000")
        #expect(overridden.status == 0, "\(overridden)")
        // Ed25519 signatures are deterministic: all three are the same bytes.
        #expect(try box.read("sig1") == (try box.read("sig2")))
        #expect(try box.read("sig1") == (try box.read("sig3")))
        try store.exportPublic(uri, to: "key.pub")
        try box.must("openssl", "pkeyutl", "-verify", "-pubin", "-inkey", "key.pub", "-rawin", "-in", "file", "-sigfile", "sig1")
    }

    @Test("a URI matching nothing exits 3 listing what there is; one matching two keys exits 2 asking for id=")
    func matching() throws {
        let box = try Sandbox()
        let store = try SoftHSM(box, tokens: "demo")
        try store.generate("pkcs11:token=demo;object=k", type: "p256")
        // Two keys with one label: signet token generate refuses to make them, pkcs11-tool does not.
        try store.pkcs11ToolOK(token: "demo", "--keypairgen", "--key-type", "EC:prime256v1", "--id", "01", "--label", "dup")
        try store.pkcs11ToolOK(token: "demo", "--keypairgen", "--key-type", "EC:prime256v1", "--id", "02", "--label", "dup")
        try box.write("file", "to be signed\n")

        let missing = try store.signet("sign", "--key", "pkcs11:token=demo;object=nothere", "file", "-o", "sig")
        Self.expectRefused(missing, status: 3, saying: ["nothing on the token matches", "it has", #""k""#, #""dup""#], in: box)
        let noToken = try store.signet("sign", "--key", "pkcs11:token=nosuch;object=k", "file", "-o", "sig")
        Self.expectRefused(noToken, status: 3, saying: ["nothing on the token matches", #""demo""#], in: box)
        let noPublic = try store.signet("token", "public", "pkcs11:token=demo;object=nothere", "-o", box.path("k.pub"))
        Self.expectRefused(noPublic, status: 3, saying: ["nothing on the token matches"], output: "k.pub", in: box)

        let ambiguous = try store.signet("sign", "--key", "pkcs11:token=demo;object=dup", "file", "-o", "sig")
        Self.expectRefused(ambiguous, status: 2, saying: ["2 objects match", "id="], in: box)
        let ambiguousPublic = try store.signet("token", "public", "pkcs11:token=demo;object=dup", "-o", box.path("dup.pub"), pin: nil)
        Self.expectRefused(ambiguousPublic, status: 2, saying: ["id="], output: "dup.pub", in: box)

        // id= names one of them.
        let named = try store.signet("sign", "--key", "pkcs11:token=demo;object=dup;id=%02", "file", "-o", "sig")
        #expect(named.status == 0, "\(named)")
        try store.expectVerifies(key: "pkcs11:token=demo;id=%02", reporting: "ecdsa-p256-sha256")
    }

    @Test("a library that is not a PKCS#11 module exits 3, a missing module 4, a malformed URI 2")
    func modulesAndURIs() throws {
        let box = try Sandbox()
        let store = try SoftHSM(box, tokens: "demo")
        let uri = "pkcs11:token=demo;object=k"
        try store.generate(uri, type: "p256")
        try box.write("file", "to be signed\n")
        let candidates = ["/usr/lib/x86_64-linux-gnu/libz.so.1", "/usr/lib/aarch64-linux-gnu/libz.so.1", "/lib/x86_64-linux-gnu/libz.so.1"]
        let zlib = try #require(
            candidates.first(where: { FileManager.default.fileExists(atPath: $0) }), "zlib is missing: install the Debian package zlib1g")

        let notModule = try store.signet("sign", "--module", zlib, "--key", uri, "file", "-o", "sig")
        Self.expectRefused(notModule, status: 3, saying: [zlib, "not a PKCS#11 module"], in: box)
        let notModuleInURI = try store.signet("sign", "--key", uri + "?module-path=" + zlib, "file", "-o", "sig")
        Self.expectRefused(notModuleInURI, status: 3, saying: ["not a PKCS#11 module"], in: box)
        let listNotModule = try store.signet("token", "list", "--module", zlib, pin: nil)
        Self.expectRefused(listNotModule, status: 3, saying: ["not a PKCS#11 module"], output: nil, in: box)

        let absent = try store.signet("sign", "--module", "/nonexistent.so", "--key", uri, "file", "-o", "sig")
        Self.expectRefused(absent, status: 4, saying: ["/nonexistent.so"], in: box)
        let listAbsent = try store.signet("token", "list", "--module", "/nonexistent.so", pin: nil)
        Self.expectRefused(listAbsent, status: 4, saying: ["/nonexistent.so"], output: nil, in: box)

        // The URI's module-path comes before --module.
        let fromURI = try store.signet("sign", "--module", zlib, "--key", uri + "?module-path=" + SoftHSM.module, "file", "-o", "sig")
        #expect(fromURI.status == 0, "\(fromURI)")
        try FileManager.default.removeItem(atPath: box.path("sig"))

        for malformed in ["pkcs11:token=%zz", "pkcs11:token=demo;object=k;object=j", "pkcs11:token=demo;colour=blue"] {
            let refused = try store.signet("sign", "--key", malformed, "file", "-o", "sig")
            Self.expectRefused(refused, status: 2, saying: ["not a valid PKCS#11 URI"], in: box)
        }
        let malformedGenerate = try store.signet("token", "generate", "pkcs11:token=%zz;object=n", "-t", "p256")
        Self.expectRefused(malformedGenerate, status: 2, saying: ["not a valid PKCS#11 URI"], output: nil, in: box)
    }
}
