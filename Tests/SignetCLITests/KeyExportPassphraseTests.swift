import Foundation
import Testing

/// `key convert` and `vault export` share one rule: the new passphrase of an encrypted output
/// comes from --new-passphrase-file or a prompt, never from --passphrase-file or
/// SIGNET_PASSPHRASE, which name the current one.
@Suite("key convert / vault export: the new passphrase has its own source")
struct KeyExportPassphraseTests {
    @Test("key convert --encrypt of an encrypted key: decrypted with the current passphrase, encrypted with the new one only")
    func convertReencrypts() throws {
        let box = try Sandbox()
        try box.write("old", "old passphrase\n")
        try box.write("new", "new passphrase\n")
        try box.must("openssl", "genpkey", "-algorithm", "ED25519", "-out", "plain.pem")
        try box.must("openssl", "pkcs8", "-topk8", "-v2", "aes-256-cbc", "-in", "plain.pem", "-out", "enc.pem", "-passout", "file:old")
        let converted = try box.signet(
            "key", "convert", "enc.pem", "-o", "re.pem", "--encrypt", "--passphrase-file", "old", "--new-passphrase-file", "new")
        #expect(converted.status == 0, "\(converted)")
        #expect(try box.tool("openssl", "pkey", "-in", "re.pem", "-passin", "file:new", "-noout").status == 0)
        #expect(try box.tool("openssl", "pkey", "-in", "re.pem", "-passin", "file:old", "-noout").status != 0, "the old passphrase must not open it")
    }

    @Test("without --new-passphrase-file and no terminal, --encrypt refuses (exit 4) rather than reuse the current passphrase's sources")
    func noNewPassphraseSource() throws {
        let box = try Sandbox()
        try box.write("old", "old passphrase\n")
        try box.must("openssl", "genpkey", "-algorithm", "ED25519", "-out", "plain.pem")
        for (arguments, environment) in [(["--passphrase-file", "old"], [String: String]()), ([], ["SIGNET_PASSPHRASE": "old passphrase"])] {
            let refused = try box.signet(arguments: ["key", "convert", "plain.pem", "-o", "out.pem", "--encrypt"] + arguments, environment: environment)
            #expect(refused.status == 4, "\(refused)")
            #expect(refused.stderr.contains("--new-passphrase-file"), "\(refused)")
            #expect(!box.exists("out.pem"))
        }
    }
}
