import Foundation
import SignetAge
import SignetCore
import SignetTestSupport
import Testing

/// Identity and recipients files as age-keygen writes them and as people edit them.
@Suite("age key files")
struct AgeKeyFileTests {
    typealias F = AgeRecipientFixtures

    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test("an identity file with comments, blank lines and CRLF gives its identities in order")
    func identities() throws {
        let text = "# created: 2021-02-02T13:09:43+01:00\r\n# public key: \(F.pairs[1].recipient)\r\n\(F.pairs[1].identity)\r\n"
            + "\r\n\n#\(F.pairs[0].identity)\n\(F.pairs[0].identity)"
        let identities = try AgeKeyFile.identities(in: Self.bytes(text), source: "keys.txt")
        #expect(identities.map(\.recipientString) == [F.pairs[1].recipient, F.pairs[0].recipient])
    }

    @Test("a recipients file with comments, blank lines and CRLF gives its recipients in order")
    func recipients() throws {
        let text = "# team\r\n\(F.pairs[2].recipient)\r\n\r\n# \(F.pairs[0].recipient)\n\(F.pairs[0].recipient)\n\n"
        let recipients = try AgeKeyFile.recipients(in: Self.bytes(text), source: "team.txt")
        #expect(recipients.map { String(describing: $0) } == [F.pairs[2].recipient, F.pairs[0].recipient])
    }

    @Test("what age-keygen writes, and it reads back")
    func keyFileContents() throws {
        let identity = try X25519Identity(F.identity)
        let created = Date(timeIntervalSince1970: 1_612_267_783)
        let utc = AgeKeyFile.keyFileContents(identity, created: created, timeZone: TimeZone(identifier: "UTC")!)
        #expect(utc == "# created: 2021-02-02T12:09:43Z\n# public key: \(F.pairs[1].recipient)\n\(F.identity)\n")
        let paris = AgeKeyFile.keyFileContents(identity, created: created, timeZone: TimeZone(secondsFromGMT: 3600)!)
        #expect(paris.hasPrefix("# created: 2021-02-02T13:09:43+01:00\n"))
        let read = try AgeKeyFile.identities(in: Self.bytes(utc), source: "key.txt")
        #expect(read.map(\.recipientString) == [identity.recipientString])
    }

    @Test("a bad identity line is named by its line number, and never quoted")
    func badIdentityLine() throws {
        let broken = String(F.identity.dropLast()) + "Q"
        let text = "# created: today\n\n\(broken)\n\(F.identity)\n"
        let error = try thrown(AgeError.self) { try AgeKeyFile.identities(in: Self.bytes(text), source: "keys.txt") }
        expectError(error, is: "invalidKey", mentioning: ["keys.txt", "(line 3)", "checksum"])
        #expect(!error.description.contains(String(F.identity.dropFirst(16).prefix(20))))
    }

    @Test("lines that are not identities are refused with their line numbers")
    func otherIdentityLines() throws {
        let cases: [(String, SignetErrorCode<AgeError>, [String])] = [
            ("\(F.pairs[1].recipient)\n", "invalidKey", ["(line 1)", "a recipient"]),
            ("# x\n \(F.identity)\n", "invalidKey", ["(line 2)", "not an age identity"]),
            ("# x\r\n\(F.identity) \r\n", "invalidKey", ["(line 2)", "printable ASCII"]),
            ("\(F.identity.lowercased())\n", "invalidKey", ["(line 1)", "uppercase"]),
            ("\n\nAGE-SECRET-KEY-PQ-1XX76JRALNLXDMEW0CRK45QMCCH4X06SE84UN3VPM33W6HWDX0H3SK3ZQFQ\n", "invalidKey", ["(line 3)", "checksum"]),
            ("AGE-PLUGIN-YUBIKEY-1XX76JRALNLXDMEW0CRK45QMCCH4X06SE84UN3VPM33W6HWDX0H3SK3ZQFR\n", "unsupported", ["(line 1)", "plugin"]),
            ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n", "invalidKey", []),
            ("age-encryption.org/v1\n-> scrypt abc 18\n", "unsupported", ["passphrase-protected"]),
            ("", "invalidKey", ["no identities"]),
            ("# only a comment\n\n\r\n", "invalidKey", ["no identities"]),
        ]
        for (text, code, fragments) in cases {
            let error = try thrown(AgeError.self) { try AgeKeyFile.identities(in: Self.bytes(text), source: "id.txt") }
            expectError(error, is: code, mentioning: ["id.txt"] + fragments)
        }
    }

    @Test("lines that are not recipients are refused with their line numbers")
    func badRecipientLines() throws {
        let cases: [(String, SignetErrorCode<AgeError>, [String])] = [
            ("\(F.pairs[0].recipient)\nssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKW6zVi0JxA8ZtmZBS0f8ykpFqrF9EiV\n",
             "invalidKey", ["(line 2)", "ssh-ed25519"]),
            ("ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ alice@example\n", "invalidKey", ["(line 1)", "ssh-rsa"]),
            ("ecdsa-sha2-nistp256 AAAA\n", "unsupported", ["(line 1)", "ssh-rsa and ssh-ed25519"]),
            ("# a\n# b\n\(F.pairs[0].recipient)x\n", "invalidKey", ["(line 3)", "checksum"]),
            ("\(F.identity)\n", "invalidKey", ["(line 1)", "identity (a secret key)"]),
            ("age1pq1qqqsyqcyq5rqwzqfpg9scrgwpugpzysnzs23v9ccrydpk8qarc0jqgfzyvjz2f385857ay\n", "invalidKey", ["(line 1)", "1216 bytes"]),
            ("", "invalidKey", ["no recipients"]),
        ]
        for (text, code, fragments) in cases {
            let error = try thrown(AgeError.self) { try AgeKeyFile.recipients(in: Self.bytes(text), source: "r.txt") }
            expectError(error, is: code, mentioning: ["r.txt"] + fragments)
        }
        let secretLine = try thrown(AgeError.self) { try AgeKeyFile.recipients(in: Self.bytes(F.identity), source: "r.txt") }
        #expect(!secretLine.description.contains(String(F.identity.dropFirst(16).prefix(20))))
        let notUTF8 = try thrown(AgeError.self) { try AgeKeyFile.recipients(in: [0x61, 0x67, 0x65, 0x31, 0xFF], source: "r.txt") }
        expectError(notUTF8, is: "invalidKey", mentioning: ["r.txt", "UTF-8", "(line 1)"])
    }

    @Test("a key file larger than the limit is refused before it is read")
    func sizeLimit() throws {
        let big = [UInt8](repeating: UInt8(ascii: "#"), count: AgeKeyFile.maximumSize + 1)
        let reads: [() throws -> Void] = [
            { _ = try AgeKeyFile.identities(in: big, source: "big.txt") },
            { _ = try AgeKeyFile.recipients(in: big, source: "big.txt") },
        ]
        for read in reads {
            let error = try thrown(AgeError.self) { try read() }
            expectError(error, is: "invalidKey", mentioning: ["big.txt", "1 MiB"])
        }
    }

    @Test("age-keygen's key files read, and age-keygen reads ours")
    func ageKeygen() throws {
        let keygen = try #require(ProcessRunner.which("age-keygen"), "age-keygen is not installed (Scripts/test installs the Debian package age)")
        let folder = try TemporaryFolder()
        let generated = try ProcessRunner.run(keygen, ["-o", folder.file("theirs.txt")])
        try #require(generated.status == 0, "\(generated)")
        let theirs = Array(try Data(contentsOf: folder.fileURL("theirs.txt")))
        let identities = try AgeKeyFile.identities(in: theirs, source: "theirs.txt")
        let publicLine = String(decoding: theirs, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix("# public key: ") }
        #expect(identities.count == 1 && publicLine.map { String($0) } == "# public key: \(identities[0].recipientString)")

        let ours = X25519Identity.generate()
        try folder.write("ours.txt", AgeKeyFile.keyFileContents(ours, created: Date()))
        let converted = try ProcessRunner.run(keygen, ["-y", folder.file("ours.txt")])
        try #require(converted.status == 0, "\(converted)")
        #expect(converted.out == ours.recipient.string + "\n")
    }
}
