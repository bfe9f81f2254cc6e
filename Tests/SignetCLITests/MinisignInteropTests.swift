import Foundation
import SignetCore
import SignetTestSupport
import Testing

/// Runs the real `minisign` (Debian package minisign) in a sandbox.
extension Sandbox {
    /// minisign with `arguments`; `input` goes to its standard input (it reads passphrases there).
    func minisign(_ arguments: String..., input: String? = nil) throws -> RunResult {
        try run(try #require(ProcessRunner.which("minisign"), "minisign is not installed (Scripts/test installs it)"), arguments,
                stdin: input.map { Data($0.utf8) })
    }

    /// A 2 MiB file of varied bytes.
    @discardableResult
    func writeData(_ name: String, size: Int = 2 << 20) throws -> String {
        try write(name, Data((0..<size).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 13) }))
    }

    /// Flips one bit in the middle of a file.
    func tamper(_ name: String) throws {
        var bytes = try read(name)
        bytes[bytes.count / 2] ^= 0x01
        try write(name, bytes)
    }
}

/// `signet minisign` against the `minisign` tool, in both directions.
@Suite("signet minisign: interop with minisign")
struct MinisignInteropTests {
    @Test("keys made by minisign -G -W sign with signet; minisign verifies, and signet verifies minisign's")
    func minisignKeys() throws {
        let box = try Sandbox()
        #expect(try box.minisign("-G", "-W", "-p", "m.pub", "-s", "m.key").status == 0)
        try box.writeData("data.bin")
        let signed = try box.signet("minisign", "sign", "-s", "m.key", "-m", "data.bin", "-t", "release 1.0 by signet")
        #expect(signed.status == 0, "\(signed)")
        #expect(box.exists("data.bin.minisig"))
        let checked = try box.minisign("-V", "-p", "m.pub", "-m", "data.bin")
        #expect(checked.status == 0, "\(checked)")
        #expect(checked.out.contains("Trusted comment: release 1.0 by signet"))

        // minisign's prehashed signature with a trusted comment, verified by signet.
        #expect(try box.minisign("-S", "-s", "m.key", "-m", "data.bin", "-x", "theirs.minisig", "-t", "nightly 2031-01-01").status == 0)
        let verified = try box.signet("minisign", "verify", "-p", "m.pub", "-m", "data.bin", "-x", "theirs.minisig")
        #expect(verified.status == 0, "\(verified)")
        #expect(verified.out == "Signature and comment signature verified\nTrusted comment: nightly 2031-01-01\n")
        // Default comment: minisign's own format, hashed.
        #expect(try box.minisign("-S", "-s", "m.key", "-m", "data.bin", "-x", "default.minisig").status == 0)
        let defaults = try box.signet("minisign", "verify", "-p", "m.pub", "-m", "data.bin", "-x", "default.minisig", "-Q")
        #expect(defaults.status == 0)
        #expect(defaults.out.hasPrefix("timestamp:") && defaults.out.hasSuffix("\tfile:data.bin\thashed\n"), "\(defaults)")
    }

    @Test("keys made by signet (-W) work in minisign both ways, and both use one key id")
    func signetKeys() throws {
        let box = try Sandbox()
        let generated = try box.signet("minisign", "generate", "-W", "-p", "s.pub", "-s", "s.key")
        #expect(generated.status == 0, "\(generated)")
        #expect(try box.mode("s.key") == 0o600)
        let publicText = try box.readText("s.pub")
        #expect(publicText.hasPrefix("untrusted comment: minisign public key "))
        try box.writeData("data.bin")
        // minisign signs with signet's key; signet verifies.
        #expect(try box.minisign("-S", "-s", "s.key", "-m", "data.bin", "-t", "by minisign").status == 0)
        let verified = try box.signet("minisign", "verify", "-p", "s.pub", "-m", "data.bin")
        #expect(verified.status == 0 && verified.out.contains("Trusted comment: by minisign"), "\(verified)")
        // signet signs; minisign verifies, also with the key inline (-P).
        let signed = try box.signet("minisign", "sign", "-s", "s.key", "-m", "data.bin", "-x", "ours.minisig", "-c", "our comment")
        #expect(signed.status == 0, "\(signed)")
        let inline = String(publicText.split(separator: "\n")[1])
        let checked = try box.minisign("-V", "-P", inline, "-m", "data.bin", "-x", "ours.minisig")
        #expect(checked.status == 0, "\(checked)")
        #expect(try box.readText("ours.minisig").hasPrefix("untrusted comment: our comment\n"))
        #expect(try box.signet("minisign", "verify", "-P", inline, "-m", "data.bin", "-x", "ours.minisig", "-q").status == 0)
        // minisign -R recreates the same public key file from signet's secret key.
        #expect(try box.minisign("-R", "-s", "s.key", "-p", "again.pub").status == 0)
        #expect(try box.readText("again.pub") == publicText)
    }

    @Test("legacy signatures: minisign -l verifies with signet --legacy (refused without it), signet -l with minisign; -H refuses both")
    func legacy() throws {
        let box = try Sandbox()
        #expect(try box.minisign("-G", "-W", "-p", "m.pub", "-s", "m.key").status == 0)
        try box.writeData("data.bin")
        #expect(try box.minisign("-S", "-l", "-s", "m.key", "-m", "data.bin", "-x", "theirs.minisig").status == 0)
        let verified = try box.signet("minisign", "verify", "--legacy", "-p", "m.pub", "-m", "data.bin", "-x", "theirs.minisig")
        #expect(verified.status == 0, "\(verified)")
        #expect(!verified.out.contains("hashed"))
        let byDefault = try box.signet("minisign", "verify", "-p", "m.pub", "-m", "data.bin", "-x", "theirs.minisig")
        #expect(byDefault.status == 1 && byDefault.stderr.contains("legacy (non-prehashed \"Ed\") signature refused"), "\(byDefault)")
        #expect(byDefault.stderr.contains("--legacy"), "the CLI names its opt-in: \(byDefault)")
        #expect(byDefault.stdout.isEmpty)
        let signed = try box.signet("minisign", "sign", "-l", "-s", "m.key", "-m", "data.bin", "-x", "ours.minisig")
        #expect(signed.status == 0, "\(signed)")
        #expect(try box.minisign("-V", "-p", "m.pub", "-m", "data.bin", "-x", "ours.minisig").status == 0)
        #expect(try box.readText("ours.minisig").split(separator: "\n")[1].hasPrefix("RW"), "legacy signatures start with \"Ed\"")
        #expect(try box.minisign("-V", "-H", "-p", "m.pub", "-m", "data.bin", "-x", "ours.minisig").status == 1)
        let refused = try box.signet("minisign", "verify", "-H", "-p", "m.pub", "-m", "data.bin", "-x", "theirs.minisig")
        #expect(refused.status == 1 && refused.stderr.contains("legacy"), "\(refused)")
        let contradiction = try box.signet("minisign", "verify", "-H", "--legacy", "-p", "m.pub", "-m", "data.bin", "-x", "theirs.minisig")
        #expect(contradiction.status == 2, "\(contradiction)")
    }

    @Test("a prehashed signature by minisign relabelled as legacy verifies for the 64-byte digest file in minisign, and is refused by signet")
    func relabelledSignature() throws {
        let box = try Sandbox()
        #expect(try box.minisign("-G", "-W", "-p", "m.pub", "-s", "m.key").status == 0)
        try box.writeData("data.bin")
        #expect(try box.minisign("-S", "-s", "m.key", "-m", "data.bin", "-x", "genuine.minisig").status == 0)
        // The attack, with python: the file "digest.bin" = BLAKE2b-512(data.bin); the signature
        // line's "ED" becomes "Ed"; nothing else changes (the global signature stays valid).
        try box.python(
            """
            import base64, hashlib, sys
            lines = open(sys.argv[1], "rb").read().split(b"\\n")
            raw = base64.b64decode(lines[1])
            assert raw[:2] == b"ED"
            lines[1] = base64.b64encode(b"Ed" + raw[2:])
            open(sys.argv[2], "wb").write(b"\\n".join(lines))
            open(sys.argv[3], "wb").write(hashlib.blake2b(open(sys.argv[4], "rb").read()).digest())
            """, box.path("genuine.minisig"), box.path("relabelled.minisig"), box.path("digest.bin"), box.path("data.bin"))
        // minisign itself (legacy accepted by default) is fooled: the weakness is real.
        #expect(try box.minisign("-V", "-p", "m.pub", "-m", "digest.bin", "-x", "relabelled.minisig").status == 0)
        let refused = try box.signet("minisign", "verify", "-p", "m.pub", "-m", "digest.bin", "-x", "relabelled.minisig")
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.stderr.contains("legacy (non-prehashed \"Ed\") signature refused"), "\(refused)")
        #expect(refused.stdout.isEmpty, "nothing reported as verified")
    }

    @Test("a tampered file, a tampered trusted comment and a wrong key are refused by both tools with exit 1")
    func tampering() throws {
        let box = try Sandbox()
        #expect(try box.minisign("-G", "-W", "-p", "m.pub", "-s", "m.key").status == 0)
        #expect(try box.signet("minisign", "generate", "-W", "-p", "other.pub", "-s", "other.key").status == 0)
        try box.writeData("data.bin")
        #expect(try box.signet("minisign", "sign", "-s", "m.key", "-m", "data.bin", "-x", "ours.minisig", "-t", "genuine").status == 0)
        #expect(try box.minisign("-S", "-s", "m.key", "-m", "data.bin", "-x", "theirs.minisig", "-t", "genuine").status == 0)

        // A trusted comment changed after signing.
        for name in ["ours.minisig", "theirs.minisig"] {
            try box.write("forged-\(name)", try box.readText(name).replacingOccurrences(of: "trusted comment: genuine", with: "trusted comment: forged"))
            let ours = try box.signet("minisign", "verify", "-p", "m.pub", "-m", "data.bin", "-x", "forged-\(name)")
            #expect(ours.status == 1 && ours.stderr.contains("Comment signature verification failed"), "\(ours)")
            #expect(try box.minisign("-V", "-p", "m.pub", "-m", "data.bin", "-x", "forged-\(name)").status == 1)
        }
        // The wrong key.
        for name in ["ours.minisig", "theirs.minisig"] {
            let ours = try box.signet("minisign", "verify", "-p", "other.pub", "-m", "data.bin", "-x", name)
            #expect(ours.status == 1 && ours.stderr.contains("key id"), "\(ours)")
            #expect(try box.minisign("-V", "-p", "other.pub", "-m", "data.bin", "-x", name).status == 1)
        }
        // One bit of the file.
        try box.tamper("data.bin")
        for name in ["ours.minisig", "theirs.minisig"] {
            let ours = try box.signet("minisign", "verify", "-p", "m.pub", "-m", "data.bin", "-x", name)
            #expect(ours.status == 1 && ours.stderr.contains("Signature verification failed"), "\(ours)")
            #expect(ours.out.isEmpty)
            #expect(try box.minisign("-V", "-p", "m.pub", "-m", "data.bin", "-x", name).status == 1)
        }
    }

    @Test("a key minisign encrypted (scrypt N=2^20, 1 GiB) signs in signet")
    func minisignEncryptedKey() throws {
        let box = try Sandbox()
        try box.writeData("data.bin", size: 4096)
        // minisign -G reads the passphrase twice from standard input.
        #expect(try box.minisign("-G", "-p", "m.pub", "-s", "m.key", input: "pass one\npass one\n").status == 0)
        let signed = try box.signet("minisign", "sign", "-s", "m.key", "-m", "data.bin", environment: ["SIGNET_PASSPHRASE": "pass one"])
        #expect(signed.status == 0, "\(signed)")
        #expect(try box.minisign("-V", "-p", "m.pub", "-m", "data.bin").status == 0)
    }

    @Test("a key signet encrypted (scrypt N=2^20, 1 GiB) signs in minisign")
    func signetEncryptedKey() throws {
        let box = try Sandbox()
        try box.writeData("data.bin", size: 4096)
        try box.write("pass.txt", "pass two\n")
        let generated = try box.signet("minisign", "generate", "-p", "s.pub", "-s", "s.key", "--passphrase-file", "pass.txt")
        #expect(generated.status == 0, "\(generated)")
        #expect(try box.mode("s.key") == 0o600)
        #expect(try box.readText("s.key").hasPrefix("untrusted comment: minisign encrypted secret key\n"))
        let theirs = try box.minisign("-S", "-s", "s.key", "-m", "data.bin", "-x", "theirs.minisig", input: "pass two\n")
        #expect(theirs.status == 0, "\(theirs)")
        #expect(try box.signet("minisign", "verify", "-p", "s.pub", "-m", "data.bin", "-x", "theirs.minisig").status == 0)
    }

    @Test("a cheaply encrypted key: minisign decrypts it; signet takes the passphrase from a file or the environment; a wrong one is exit 1")
    func cheapEncryptedKey() throws {
        let box = try Sandbox()
        try box.writeData("data.bin", size: 4096)
        let key = MinisignSecretKey.generate()
        let cheap = MinisignKDFParameters(opsLimit: 32768, memLimit: 1 << 20)
        try box.write("c.key", Data(try key.fileContents(passphrase: SecretBytes(Array("pass three".utf8)), parameters: cheap)))
        try box.write("c.pub", key.publicKey.fileContents)
        #expect(try box.minisign("-S", "-s", "c.key", "-m", "data.bin", "-x", "theirs.minisig", input: "pass three\n").status == 0)
        #expect(try box.minisign("-S", "-s", "c.key", "-m", "data.bin", "-x", "bad.minisig", input: "pass four\n").status != 0)
        try box.write("pass.txt", "pass three\n")
        let fromFile = try box.signet("minisign", "sign", "-s", "c.key", "-m", "data.bin", "--passphrase-file", "pass.txt")
        #expect(fromFile.status == 0, "\(fromFile)")
        let fromEnvironment = try box.signet("minisign", "sign", "-s", "c.key", "-m", "data.bin", "-x", "env.minisig",
                                             environment: ["SIGNET_PASSPHRASE": "pass three"])
        #expect(fromEnvironment.status == 0, "\(fromEnvironment)")
        for name in ["theirs.minisig", "data.bin.minisig", "env.minisig"] {
            #expect(try box.minisign("-V", "-p", "c.pub", "-m", "data.bin", "-x", name).status == 0, "\(name)")
        }
        let wrong = try box.signet("minisign", "sign", "-s", "c.key", "-m", "data.bin", "-x", "never.minisig",
                                   environment: ["SIGNET_PASSPHRASE": "pass four"])
        #expect(wrong.status == 1 && wrong.stderr.contains("wrong passphrase"), "\(wrong)")
        #expect(!box.exists("never.minisig"))
        // No passphrase source and no terminal: exit 4, naming the ways to give one.
        let none = try box.signet("minisign", "sign", "-s", "c.key", "-m", "data.bin", "-x", "never.minisig")
        #expect(none.status == 4 && none.stderr.contains("SIGNET_PASSPHRASE"), "\(none)")
    }
}
