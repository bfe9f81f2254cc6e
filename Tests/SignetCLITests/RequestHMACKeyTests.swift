import Foundation
import Testing

/// Every command that takes an HMAC key reads it the same way: a file, else SIGNET_HMAC_KEY.
@Suite("HMAC keys: --key-file / --key, else SIGNET_HMAC_KEY, in every command")
struct RequestHMACKeyTests {
    static let url = "https://api.example.com/v1/orders"

    @Test("request sign and verify take the HMAC key from SIGNET_HMAC_KEY when --key is not given")
    func requestFromEnvironment() throws {
        let box = try Sandbox()
        try box.write("secret.bin", "shared secret bytes")
        let common = ["-X", "POST", "--url", Self.url, "-a", "hmac-sha256", "--keyid", "k1"]
        let signed = try box.signet(arguments: ["request", "sign"] + common, environment: ["SIGNET_HMAC_KEY": "shared secret bytes"])
        try #require(signed.status == 0, "\(signed)")
        let fields = signed.out.split(separator: "\n").flatMap { ["-H", String($0)] }
        // The same secret as a file verifies it; from the environment too; another secret does not.
        #expect(try box.signet(arguments: ["request", "verify"] + common + ["--key", "secret.bin"] + fields).status == 0)
        let fromEnvironment = try box.signet(arguments: ["request", "verify"] + common + fields, environment: ["SIGNET_HMAC_KEY": "shared secret bytes"])
        #expect(fromEnvironment.status == 0, "\(fromEnvironment)")
        let wrong = try box.signet(arguments: ["request", "verify"] + common + fields, environment: ["SIGNET_HMAC_KEY": "another secret"])
        #expect(wrong.status == 1 && wrong.stderr.contains("signature sig1 does not verify"), "\(wrong)")
        let none = try box.signet(arguments: ["request", "verify"] + common + fields)
        #expect(none.status == 2 && none.stderr.contains("no HMAC key: give --key FILE or set SIGNET_HMAC_KEY"), "\(none)")
        // A public-key algorithm still needs --key.
        let noKey = try box.signet("request", "sign", "--url", Self.url)
        #expect(noKey.status == 2 && noKey.stderr.contains("give --key KEY"), "\(noKey)")
    }

    @Test("signet hmac: --key-file, else SIGNET_HMAC_KEY, and the same messages")
    func hmacCommand() throws {
        let box = try Sandbox()
        try box.write("secret.bin", "shared secret bytes")
        try box.write("data", "hello")
        let fromFile = try box.signet("hmac", "--key-file", "secret.bin", "data")
        let fromEnvironment = try box.signet(arguments: ["hmac", "data"], environment: ["SIGNET_HMAC_KEY": "shared secret bytes"])
        #expect(fromFile.status == 0 && fromFile.out == fromEnvironment.out, "\(fromFile) \(fromEnvironment)")
        let none = try box.signet("hmac", "data")
        #expect(none.status == 2 && none.stderr.contains("no HMAC key: give --key-file FILE or set SIGNET_HMAC_KEY"), "\(none)")
    }
}
