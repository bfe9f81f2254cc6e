import Foundation
import Testing

/// Every command that reads a key meets hostile and broken input with a precise message and
/// the contract's exit code, never a crash.
@Suite("signet: bad input")
struct CLINegativeTests {
    /// A broken key input: how to make it, the exit code and a phrase the message must hold.
    struct BadKey: CustomTestStringConvertible, Sendable {
        var name: String
        var status: Int32
        var message: String
        var testDescription: String { name }
    }

    static let badKeys: [BadKey] = [
        BadKey(name: "garbage.pem", status: 3, message: "garbage.pem: not a key in any supported format"),
        BadKey(name: "binary.der", status: 3, message: "binary.der: not a key in any supported format"),
        BadKey(name: "truncated.pem", status: 3, message: "truncated.pem: PEM block \"PRIVATE KEY\" from line 1 has no END line"),
        BadKey(name: "truncated.der", status: 3, message: "truncated.der: not a key in any supported format (the DER is damaged or truncated)"),
        BadKey(name: "badbase64.pem", status: 3, message: "badbase64.pem: PEM body holds a character that is not base64 (line 2)"),
        BadKey(name: "empty.pem", status: 3, message: "empty.pem: the file is empty"),
        BadKey(name: "folder", status: 4, message: "folder: is a directory, not a file"),
        BadKey(name: "huge.pem", status: 3, message: "huge.pem: too large (the limit is 1 MiB)"),
        BadKey(name: "missing.pem", status: 4, message: "missing.pem: no such file or directory"),
        BadKey(name: "cert.pem", status: 3, message: "cert.pem: unsupported: a certificate where a key is expected"),
        BadKey(name: "k1.pem", status: 3, message: "k1.pem: unsupported"),
        BadKey(name: "bad.jwk", status: 3, message: "bad.jwk:"),
        BadKey(name: "bad.pub", status: 3, message: "bad.pub:"),
    ]

    /// Creates the broken inputs in `box`.
    static func makeBadKeys(_ box: Sandbox) throws {
        try box.write("garbage.pem", "hello, I am not a key\n")
        try box.write("binary.der", Data((0..<700).map { UInt8(truncatingIfNeeded: $0 &* 97 &+ 3) }))
        try box.must("openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "good.pem")
        try box.write("truncated.pem", String(try box.readText("good.pem").prefix(100)))
        try box.must("openssl", "pkey", "-in", "good.pem", "-outform", "DER", "-out", "good.der")
        try box.write("truncated.der", try box.read("good.der").prefix(60))
        try box.write("badbase64.pem", "-----BEGIN PUBLIC KEY-----\nMFkw!!EwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----\n")
        try box.write("empty.pem", "")
        try FileManager.default.createDirectory(atPath: box.path("folder"), withIntermediateDirectories: true)
        try box.write("huge.pem", "-----BEGIN PUBLIC KEY-----\n" + String(repeating: String(repeating: "A", count: 64) + "\n", count: 20_000) + "-----END PUBLIC KEY-----\n")
        try box.must("openssl", "req", "-x509", "-key", "good.pem", "-subj", "/CN=test", "-days", "1", "-out", "cert.pem")
        try box.must("openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:secp256k1", "-out", "k1.pem")
        try box.write("bad.jwk", #"{"kty":"EC","crv":"P-256","x":"AAAA"}"#)
        try box.write("bad.pub", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA== short\n")
    }

    static let readers: [[String]] = [
        ["key", "public"], ["key", "fingerprint"], ["key", "convert", "-o", "out.pem", "--format", "pem"],
        ["sign", "file", "--key"], ["verify", "file", "--signature", "sig", "--key"],
    ]

    @Test("every key-reading command reports broken keys precisely", arguments: readers)
    func brokenKeys(command: [String]) throws {
        let box = try Sandbox()
        try Self.makeBadKeys(box)
        try box.write("file", "data")
        try box.write("sig", Data(repeating: 1, count: 64))
        for bad in Self.badKeys {
            let result = try box.signet(arguments: command + [bad.name])
            #expect(result.status == bad.status, "\(command) \(bad.name): \(result)")
            #expect(result.stderr.contains(bad.message), "\(command) \(bad.name): \(result.stderr)")
            #expect(result.stderr.hasPrefix("signet: error: "))
            #expect(result.stdout.isEmpty)
        }
        #expect(!box.exists("out.pem"), "nothing is written on failure")
    }

    @Test("a public key where a private one is needed")
    func publicWherePrivateNeeded() throws {
        let box = try Sandbox()
        try box.must("openssl", "genpkey", "-algorithm", "ED25519", "-out", "key.pem")
        try box.must("openssl", "pkey", "-in", "key.pem", "-pubout", "-out", "pub.pem")
        try box.write("file", "data")
        let result = try box.signet("sign", "--key", "pub.pem", "file")
        #expect(result.status == 3)
        #expect(result.stderr.contains("pub.pem: is a public key, but a private key is needed here"))
        let encrypt = try box.signet("key", "convert", "pub.pem", "-o", "x.pem", "--encrypt", "--passphrase-file", "pub.pem")
        #expect(encrypt.status == 2)
        #expect(encrypt.stderr.contains("is a public key; there is nothing to encrypt"))
    }

    @Test("a key of the wrong type for the algorithm")
    func wrongKeyType() throws {
        let box = try Sandbox()
        try box.must("openssl", "genpkey", "-algorithm", "ED25519", "-out", "key.pem")
        try box.write("file", "data")
        try box.write("sig", Data(repeating: 0, count: 64))
        let sign = try box.signet("sign", "--key", "key.pem", "-a", "ecdsa-p256-sha256", "file")
        #expect(sign.status == 2)
        #expect(sign.stderr.contains("algorithm ecdsa-p256-sha256 cannot be used with an Ed25519 key"))
        let verify = try box.signet("verify", "--key", "key.pem", "-a", "rsa-v1_5-sha256", "--signature", "sig", "file")
        #expect(verify.status == 2)
    }

    @Test("broken signature files are rejected, not crashed on")
    func brokenSignatures() throws {
        let box = try Sandbox()
        try box.must("openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "key.pem")
        try box.write("file", "data")
        try box.write("empty.sig", "")
        try box.write("garbage.sig", Data((0..<71).map { UInt8($0) }))
        try box.write("huge.sig", Data(repeating: 0x30, count: 70_000))
        let empty = try box.signet("verify", "--key", "key.pem", "--signature", "empty.sig", "file")
        #expect(empty.status == 3)
        #expect(empty.stderr.contains("empty.sig: the signature file is empty"))
        let garbage = try box.signet("verify", "--key", "key.pem", "--signature", "garbage.sig", "file")
        #expect(garbage.status == 1)
        let huge = try box.signet("verify", "--key", "key.pem", "--signature", "huge.sig", "file")
        #expect(huge.status == 3)
        #expect(huge.stderr.contains("huge.sig: too large"))
        let missing = try box.signet("verify", "--key", "key.pem", "--signature", "nothing.sig", "file")
        #expect(missing.status == 4)
        let missingFile = try box.signet("sign", "--key", "key.pem", "nofile")
        #expect(missingFile.status == 4)
        #expect(missingFile.stderr.contains("nofile: no such file or directory"))
    }

    @Test("usage errors exit 2 with help pointers")
    func usage() throws {
        let box = try Sandbox()
        for arguments in [["frobnicate"], ["key", "generate"], ["key", "generate", "-t", "dsa", "-o", "k"],
                          ["sign", "file"], ["key", "public", "k", "--format", "xml"], ["verify", "--key", "-", "--signature", "-", "f"]] {
            let result = try box.signet(arguments: arguments)
            #expect(result.status == 2, "\(arguments): \(result)")
            #expect(!result.stderr.isEmpty)
        }
        let help = try box.signet("--help")
        #expect(help.status == 0)
        #expect(help.out.contains("USAGE: signet <subcommand>"))
        #expect(try box.signet("key", "generate", "--help").out.contains("--encrypt"))
    }

    @Test("binary output is never written to a terminal-less stdout by mistake, and text formats are fine")
    func stdoutFormats() throws {
        let box = try Sandbox()
        try box.must("openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "key.pem")
        // stdout here is a file, not a terminal: DER is allowed and is the exact SPKI.
        let der = try box.signet("key", "public", "key.pem", "--format", "der")
        #expect(der.status == 0)
        #expect(der.stdout == (try box.must("openssl", "pkey", "-in", "key.pem", "-pubout", "-outform", "DER").stdout))
    }
}
