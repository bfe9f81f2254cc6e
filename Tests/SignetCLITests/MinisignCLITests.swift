import Foundation
import Testing

/// `signet minisign`'s command-line contract: defaults, outputs, exit codes.
@Suite("signet minisign: command line")
struct MinisignCLITests {
    /// A sandbox with an unencrypted key pair (`k.pub`, `k.key`) and `data.bin`.
    static func prepared() throws -> Sandbox {
        let box = try Sandbox()
        let generated = try box.signet("minisign", "generate", "-W", "-p", "k.pub", "-s", "k.key")
        try #require(generated.status == 0, "\(generated)")
        try box.writeData("data.bin", size: 100_000)
        return box
    }

    @Test("generate never replaces keys without -f, and -f does")
    func generateOverwrite() throws {
        let box = try Self.prepared()
        let before = try box.readText("k.key")
        let refused = try box.signet("minisign", "generate", "-W", "-p", "k.pub", "-s", "k.key")
        #expect(refused.status == 2 && refused.stderr.contains("k.key: already exists"), "\(refused)")
        #expect(try box.readText("k.key") == before)
        let refusedPublic = try box.signet("minisign", "generate", "-W", "-p", "k.pub", "-s", "new.key")
        #expect(refusedPublic.status == 2 && refusedPublic.stderr.contains("k.pub: already exists"), "\(refusedPublic)")
        #expect(!box.exists("new.key"))
        #expect(try box.signet("minisign", "generate", "-W", "-f", "-p", "k.pub", "-s", "k.key").status == 0)
        #expect(try box.readText("k.key") != before)
        #expect(try box.mode("k.key") == 0o600)
        #expect(try box.mode("k.pub") == 0o644)
    }

    @Test("generate without -W needs a passphrase: with no terminal and no source it stops with exit 4 and writes nothing")
    func generateNeedsPassphrase() throws {
        let box = try Sandbox()
        let result = try box.signet("minisign", "generate", "-p", "x.pub", "-s", "x.key")
        #expect(result.status == 4 && result.stderr.contains("--passphrase-file"), "\(result)")
        #expect(!box.exists("x.key") && !box.exists("x.pub"))
    }

    @Test("the default key location is $MINISIGN_CONFIG_DIR/minisign.key, created 0700")
    func defaultSecretKey() throws {
        let box = try Sandbox()
        let environment = ["MINISIGN_CONFIG_DIR": box.path("config")]
        #expect(try box.signet(arguments: ["minisign", "generate", "-W"], environment: environment).status == 0)
        #expect(box.exists("config/minisign.key") && box.exists("minisign.pub"))
        #expect(try box.mode("config") == 0o700)
        try box.writeData("data.bin", size: 1000)
        #expect(try box.signet(arguments: ["minisign", "sign", "-m", "data.bin"], environment: environment).status == 0)
        // -p defaults to ./minisign.pub, -x to FILE.minisig.
        #expect(try box.signet("minisign", "verify", "-m", "data.bin").status == 0)
    }

    @Test("sign writes FILE.minisig, refuses to replace it without -f, and signs several files")
    func signOutputs() throws {
        let box = try Self.prepared()
        try box.writeData("second.bin", size: 10)
        let signed = try box.signet("minisign", "sign", "-s", "k.key", "-m", "data.bin", "second.bin")
        #expect(signed.status == 0, "\(signed)")
        #expect(signed.out.isEmpty)
        #expect(box.exists("data.bin.minisig") && box.exists("second.bin.minisig"))
        #expect(try box.mode("data.bin.minisig") == 0o644)
        let before = try box.readText("data.bin.minisig")
        let again = try box.signet("minisign", "sign", "-s", "k.key", "-m", "data.bin")
        #expect(again.status == 2 && again.stderr.contains("data.bin.minisig: already exists"), "\(again)")
        #expect(try box.readText("data.bin.minisig") == before)
        #expect(try box.signet("minisign", "sign", "-f", "-s", "k.key", "-m", "data.bin", "-t", "replaced").status == 0)
        #expect(try box.readText("data.bin.minisig").contains("trusted comment: replaced\n"))
        for name in ["data.bin", "second.bin"] {
            #expect(try box.signet("minisign", "verify", "-p", "k.pub", "-m", name).status == 0, "\(name)")
        }
    }

    @Test("sign -p checks that the secret key matches the public key")
    func signWithPublicKeyCheck() throws {
        let box = try Self.prepared()
        #expect(try box.signet("minisign", "generate", "-W", "-p", "other.pub", "-s", "other.key").status == 0)
        let refused = try box.signet("minisign", "sign", "-s", "k.key", "-p", "other.pub", "-m", "data.bin")
        #expect(refused.status == 1 && refused.stderr.contains("other.pub"), "\(refused)")
        #expect(!box.exists("data.bin.minisig"))
        #expect(try box.signet("minisign", "sign", "-s", "k.key", "-p", "k.pub", "-m", "data.bin").status == 0)
    }

    @Test("verify's outputs: minisign's two lines, -Q the comment only, -q nothing, -o the file on stdout")
    func verifyOutputs() throws {
        let box = try Self.prepared()
        #expect(try box.signet("minisign", "sign", "-s", "k.key", "-m", "data.bin", "-t", "tc").status == 0)
        let plain = try box.signet("minisign", "verify", "-p", "k.pub", "-m", "data.bin")
        #expect(plain.status == 0 && plain.out == "Signature and comment signature verified\nTrusted comment: tc\n", "\(plain)")
        let pretty = try box.signet("minisign", "verify", "-p", "k.pub", "-m", "data.bin", "-Q")
        #expect(pretty.out == "tc\n")
        let quiet = try box.signet("minisign", "verify", "-p", "k.pub", "-m", "data.bin", "-q")
        #expect(quiet.status == 0 && quiet.out.isEmpty && quiet.stderr.isEmpty)
        let output = try box.signet("minisign", "verify", "-p", "k.pub", "-m", "data.bin", "-o")
        #expect(output.status == 0)
        #expect(output.stdout == (try box.read("data.bin")))
        #expect(output.stderr.contains("Trusted comment: tc"))
        // Nothing is copied when verification fails.
        try box.tamper("data.bin")
        let failed = try box.signet("minisign", "verify", "-p", "k.pub", "-m", "data.bin", "-o")
        #expect(failed.status == 1 && failed.stdout.isEmpty)
    }

    @Test("verify's exit codes: malformed signature 3, missing file 4, both -p and -P 2, a bad -P 3")
    func verifyExitCodes() throws {
        let box = try Self.prepared()
        #expect(try box.signet("minisign", "sign", "-s", "k.key", "-m", "data.bin").status == 0)
        try box.write("broken.minisig", "untrusted comment: x\nnot base64\n")
        let malformed = try box.signet("minisign", "verify", "-p", "k.pub", "-m", "data.bin", "-x", "broken.minisig")
        #expect(malformed.status == 3 && malformed.stderr.contains("broken.minisig: "), "\(malformed)")
        let missingTrusted = try box.readText("data.bin.minisig").split(separator: "\n").prefix(2).joined(separator: "\n") + "\n"
        try box.write("short.minisig", missingTrusted)
        let short = try box.signet("minisign", "verify", "-p", "k.pub", "-m", "data.bin", "-x", "short.minisig")
        #expect(short.status == 3 && short.stderr.contains("truncated"), "\(short)")
        let missing = try box.signet("minisign", "verify", "-p", "k.pub", "-m", "nothing.bin")
        #expect(missing.status == 4 && missing.stderr.contains("nothing.bin.minisig: no such file"), "\(missing)")
        let missingFile = try box.signet("minisign", "verify", "-p", "k.pub", "-m", "nothing.bin", "-x", "data.bin.minisig")
        #expect(missingFile.status == 4 && missingFile.stderr.contains("nothing.bin: no such file"), "\(missingFile)")
        let inline = String(try box.readText("k.pub").split(separator: "\n")[1])
        let both = try box.signet("minisign", "verify", "-p", "k.pub", "-P", inline, "-m", "data.bin")
        #expect(both.status == 2, "\(both)")
        let badInline = try box.signet("minisign", "verify", "-P", "RWQnotakey", "-m", "data.bin")
        #expect(badInline.status == 3 && badInline.stderr.contains("-P: "), "\(badInline)")
        let wrongKind = try box.signet("minisign", "verify", "-p", "k.key", "-m", "data.bin")
        #expect(wrongKind.status == 3, "a secret key is not a public key: \(wrongKind)")
        let noFile = try box.signet("minisign", "verify", "-p", "k.pub")
        #expect(noFile.status == 2)
    }

    @Test("comments with line breaks are usage errors; the help names minisign's flags")
    func usage() throws {
        let box = try Self.prepared()
        let newline = try box.signet("minisign", "sign", "-s", "k.key", "-m", "data.bin", "-t", "a\nb")
        #expect(newline.status == 2 && newline.stderr.contains("one line"), "\(newline)")
        #expect(!box.exists("data.bin.minisig"))
        let help = try box.signet("minisign", "sign", "--help")
        #expect(help.status == 0)
        for flag in ["-s <SEC>", "-m <FILE>", "-x <SIG>", "-t <COMMENT>", "-c <COMMENT>", "-l"] {
            #expect(help.out.contains(flag), "\(flag)")
        }
        let root = try box.signet("--help")
        #expect(root.out.contains("minisign"))
    }
}

/// A minisign public key works wherever signet takes a public key.
@Suite("signet minisign: public keys in other commands")
struct MinisignKeyReuseTests {
    @Test("signet verify --key minisign.pub checks a legacy signature's raw Ed25519 bytes; key public exports it for openssl")
    func publicKeyElsewhere() throws {
        let box = try Sandbox()
        #expect(try box.minisign("-G", "-W", "-p", "m.pub", "-s", "m.key").status == 0)
        try box.writeData("data.bin", size: 5000)
        #expect(try box.minisign("-S", "-l", "-s", "m.key", "-m", "data.bin").status == 0)
        let line = String(try box.readText("data.bin.minisig").split(separator: "\n")[1])
        let raw = try #require(Data(base64Encoded: line)).dropFirst(10)
        try box.write("raw.sig", Data(raw))
        let verified = try box.signet("verify", "--key", "m.pub", "--signature", "raw.sig", "data.bin")
        #expect(verified.status == 0, "\(verified)")
        #expect(try box.signet("key", "public", "m.pub", "-o", "m.pem").status == 0)
        try box.must("openssl", "pkeyutl", "-verify", "-rawin", "-pubin", "-inkey", "m.pem", "-sigfile", "raw.sig", "-in", "data.bin")
        let fingerprint = try box.signet("key", "fingerprint", "m.pub")
        #expect(fingerprint.status == 0 && fingerprint.out.hasPrefix("sha256/"), "\(fingerprint)")
    }
}
