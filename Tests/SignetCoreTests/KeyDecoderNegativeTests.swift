import Foundation
import SignetCore
import SignetTestSupport
import Testing

/// Damaged and unrecognisable input: each must fail with the right ``SignetCoreError`` case, and
/// a message that names the source and says what is wrong (and where, for PEM).
@Suite struct KeyDecoderNegativeTests {
    /// An RSA-2048 PKCS#8 PEM: long enough (28 lines) to damage in the middle.
    static func samplePEM() throws -> String {
        String(decoding: try SharedTestKeys.key(.rsa2048).encoded(as: .pem), as: UTF8.self)
    }

    static func lines(_ text: String) -> [String] {
        text.split(separator: "\n").map(String.init)
    }

    // MARK: Nothing recognisable

    @Test("empty input")
    func emptyInput() throws {
        let error = try KeyTestSupport.decodeError([], source: "empty.pem")
        #expect(error == .malformed(source: "empty.pem", detail: "the file is empty"))
        #expect(error.description == "empty.pem: the file is empty")
        #expect(error.category == .malformedInput)
    }

    @Test("garbage text", arguments: ["hello, world\n", "   \n\t\n", "QUJD\n", "This is not a key.", "-----BEGIN\n"])
    func garbageText(_ text: String) throws {
        let error = try KeyTestSupport.decodeError(text: text, source: "garbage.txt")
        KeyTestSupport.check(error, is: "malformed", mentioning: "garbage.txt: ", "not a key in any supported format")
    }

    @Test("garbage binary", arguments: [[0x00], [0xff, 0xfe, 0x00, 0x01], [0x04, 0x01, 0x02], [0x02, 0x01, 0x00]] as [[UInt8]])
    func garbageBinary(_ bytes: [UInt8]) throws {
        let error = try KeyTestSupport.decodeError(bytes, source: "garbage.bin")
        KeyTestSupport.check(error, is: "malformed", mentioning: "garbage.bin: ", "not a key in any supported format")
    }

    @Test("binary that starts like DER but is damaged", arguments: [[0x30], [0x30, 0x82, 0x01, 0x00, 0x02], [0x30, 0x05, 0x02, 0x01]] as [[UInt8]])
    func damagedDERHeader(_ bytes: [UInt8]) throws {
        let error = try KeyTestSupport.decodeError(bytes, source: "bad.der")
        KeyTestSupport.check(error, is: "malformed", mentioning: "bad.der: ", "damaged or truncated")
    }

    @Test("a DER SEQUENCE that is no key structure")
    func unknownDERStructure() throws {
        // SEQUENCE { INTEGER 5 }
        let error = try KeyTestSupport.decodeError([0x30, 0x03, 0x02, 0x01, 0x05], source: "seq.der")
        KeyTestSupport.check(error, is: "malformed", mentioning: "seq.der: ", "not a key structure we know")
    }

    // MARK: PEM

    @Test("PEM cut at a line boundary in the middle")
    func truncatedPEMAtLine() throws {
        let lines = Self.lines(try Self.samplePEM())
        let cut = lines.prefix(lines.count / 2).joined(separator: "\n") + "\n"
        let error = try KeyTestSupport.decodeError(text: cut, source: "cut.pem")
        KeyTestSupport.check(error, is: "malformed", mentioning: "cut.pem: ", "\"PRIVATE KEY\"", "line 1", "no END line", "truncated")
    }

    @Test("PEM cut in the middle of a line")
    func truncatedPEMMidLine() throws {
        let pem = try Self.samplePEM()
        let error = try KeyTestSupport.decodeError(text: String(pem.prefix(pem.count / 2 + 7)), source: "cut.pem")
        KeyTestSupport.check(error, is: "malformed", mentioning: "cut.pem: ", "no END line", "truncated")
    }

    @Test("a character outside base64 is reported with its line number", arguments: [2, 5, 20])
    func badBase64Character(line: Int) throws {
        var lines = Self.lines(try Self.samplePEM())
        try #require(line < lines.count)
        var characters = Array(lines[line - 1])
        characters[10] = "*"
        lines[line - 1] = String(characters)
        let error = try KeyTestSupport.decodeError(text: lines.joined(separator: "\n") + "\n", source: "bad64.pem")
        KeyTestSupport.check(error, is: "malformed", mentioning: "bad64.pem: ", "not base64", "(line \(line))")
    }

    @Test("a body of the wrong length is reported with its line range")
    func badBase64Length() throws {
        var lines = Self.lines(try Self.samplePEM())
        lines[3].removeLast()
        let error = try KeyTestSupport.decodeError(text: lines.joined(separator: "\n") + "\n", source: "short.pem")
        KeyTestSupport.check(error, is: "malformed", mentioning: "short.pem: ", "not valid base64", "lines 2", "\(lines.count - 1))")
    }

    @Test("END label that does not match BEGIN")
    func mismatchedEndLabel() throws {
        var lines = Self.lines(try Self.samplePEM())
        #expect(lines[lines.count - 1] == "-----END PRIVATE KEY-----")
        lines[lines.count - 1] = "-----END PUBLIC KEY-----"
        let error = try KeyTestSupport.decodeError(text: lines.joined(separator: "\n") + "\n", source: "mixed.pem")
        KeyTestSupport.check(
            error, is: "malformed", mentioning: "mixed.pem: ", "\"PUBLIC KEY\"", "\"PRIVATE KEY\"", "does not match",
            "(line \(lines.count))")
    }

    @Test("END line before any BEGIN line")
    func endWithoutBegin() throws {
        let text = "-----END PRIVATE KEY-----\n" + (try Self.samplePEM())
        let error = try KeyTestSupport.decodeError(text: text, source: "end.pem")
        KeyTestSupport.check(error, is: "malformed", mentioning: "end.pem: ", "without a BEGIN", "(line 1)")
    }

    @Test("a BEGIN line inside an open block")
    func nestedBegin() throws {
        var lines = Self.lines(try Self.samplePEM())
        lines.insert("-----BEGIN PUBLIC KEY-----", at: 6)
        let error = try KeyTestSupport.decodeError(text: lines.joined(separator: "\n") + "\n", source: "nested.pem")
        KeyTestSupport.check(error, is: "malformed", mentioning: "nested.pem: ", "no END line before line 7")
    }

    @Test("a malformed BEGIN line")
    func malformedBeginLine() throws {
        let text = (try Self.samplePEM()).replacingOccurrences(of: "-----BEGIN PRIVATE KEY-----", with: "-----BEGIN PRIVATE KEY")
        let error = try KeyTestSupport.decodeError(text: text, source: "begin.pem")
        KeyTestSupport.check(error, is: "malformed", mentioning: "begin.pem: ", "BEGIN line", "(line 1)")
    }

    @Test("text that mentions a BEGIN marker but holds no PEM block")
    func beginMarkerInProse() throws {
        let error = try KeyTestSupport.decodeError(text: "paste it between -----BEGIN and -----END\n", source: "notes.txt")
        KeyTestSupport.check(error, is: "malformed", mentioning: "notes.txt: ", "not a PEM document")
    }

    @Test("two keys in one file")
    func twoPrivateKeys() throws {
        let pem = try Self.samplePEM()
        let secondLine = Self.lines(pem).count + 1
        let error = try KeyTestSupport.decodeError(text: pem + pem, source: "two.pem")
        KeyTestSupport.check(error, is: "malformed", mentioning: "two.pem: ", "2 keys", "lines 1, \(secondLine)", "one key per file")
    }

    @Test("a private and a public key in one file")
    func privateAndPublicKey() throws {
        let key = SharedTestKeys.key(.p256)
        let text = String(decoding: try key.encoded(as: .sec1) + key.publicKey.encoded(as: .pem), as: UTF8.self)
        let error = try KeyTestSupport.decodeError(text: text, source: "both.pem")
        KeyTestSupport.check(error, is: "malformed", mentioning: "both.pem: ", "2 keys", "one key per file")
    }

    @Test("EC PARAMETERS blocks are not counted as keys")
    func parametersAreNotCounted() throws {
        let params = try KeyTestSupport.fixtureText("p256-ecparam.pem")
        let error = try KeyTestSupport.decodeError(text: params + params, source: "params.pem")
        KeyTestSupport.check(error, is: "malformed", mentioning: "2 keys")
    }

    @Test("EC PARAMETERS alone, with no key")
    func parametersOnly() throws {
        let params = Self.lines(try KeyTestSupport.fixtureText("p256-ecparam.pem")).prefix(3).joined(separator: "\n") + "\n"
        #expect(params.hasPrefix("-----BEGIN EC PARAMETERS-----"))
        let error = try KeyTestSupport.decodeError(text: params, source: "params.pem")
        KeyTestSupport.check(error, is: "malformed", mentioning: "params.pem: ", "only EC parameters")
    }

    @Test("a PEM label that is not a key")
    func unknownLabel() throws {
        let error = try KeyTestSupport.decodeError(text: "-----BEGIN FOO-----\nAAAA\n-----END FOO-----\n", source: "foo.pem")
        KeyTestSupport.check(error, is: "unsupported", mentioning: "foo.pem: unsupported: ", "PEM label \"FOO\"", "(line 1)")
    }

    @Test("a certificate where a key is expected, as PEM")
    func certificatePEM() throws {
        let error = try KeyTestSupport.decodeError(try KeyTestSupport.fixture("cert.pem"), source: "cert.pem")
        KeyTestSupport.check(error, is: "unsupported", mentioning: "cert.pem: ", "certificate", "openssl x509 -pubkey")
    }

    // MARK: Size

    @Test("input over the size limit")
    func tooLarge() throws {
        let limit = KeyDecoder.maximumKeyFileSize
        let error = try KeyTestSupport.decodeError([UInt8](repeating: 0, count: limit + 1), source: "big.bin")
        #expect(error == .tooLarge(source: "big.bin", limit: limit))
        KeyTestSupport.check(error, is: "tooLarge", mentioning: "big.bin: ", "too large", "1 MiB")
    }

    @Test("input of exactly the size limit is read (and found not to be a key)")
    func atTheLimit() throws {
        let error = try KeyTestSupport.decodeError(
            [UInt8](repeating: 0, count: KeyDecoder.maximumKeyFileSize), source: "limit.bin")
        KeyTestSupport.check(error, is: "malformed", mentioning: "limit.bin: ")
    }

    @Test("a file over the size limit, read by path")
    func tooLargeFile() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = try folder.write("big.pem", [UInt8](repeating: 0x41, count: KeyDecoder.maximumKeyFileSize + 1))
        let error = try KeyTestSupport.thrown { try KeyDecoder.decode(path: path) }
        #expect(error == .tooLarge(source: path, limit: KeyDecoder.maximumKeyFileSize))
    }

    @Test("a missing file, read by path")
    func missingFile() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.file("absent.pem")
        let error = try KeyTestSupport.thrown { try KeyDecoder.decode(path: path) }
        #expect(error == .io(path: path, detail: "no such file or directory"))
        #expect(error.category == .environment)
    }

    // MARK: DER

    /// DER encodings of one key in every DER structure the decoder knows.
    static func derSamples() throws -> [(name: String, der: [UInt8])] {
        let rsa = SharedTestKeys.key(.rsa2048), p256 = SharedTestKeys.key(.p256)
        return [
            ("SPKI", try rsa.publicKey.encoded(as: .der)),
            ("PKCS#1 public", try rsa.publicKey.encoded(as: .pkcs1DER)),
            ("PKCS#8", try rsa.encoded(as: .der)),
            ("PKCS#1 private", try rsa.encoded(as: .pkcs1DER)),
            ("SEC1", try p256.encoded(as: .sec1DER)),
            ("EC SPKI", try p256.publicKey.encoded(as: .der)),
            ("encrypted PKCS#8", try EncryptedPrivateKey.encrypt(pkcs8: p256.encoded(as: .der), passphrase: KeyTestSupport.secret("x"), iterations: 1_000)),
        ]
    }

    @Test("truncated DER of every structure")
    func truncatedDER() throws {
        for sample in try Self.derSamples() {
            for length in [sample.der.count / 2, sample.der.count - 1] {
                let error = try KeyTestSupport.decodeError(Array(sample.der.prefix(length)), source: "cut.der")
                KeyTestSupport.check(error, is: "malformed", mentioning: "cut.der: ", "damaged or truncated")
                #expect(error.code == "malformed", "\(sample.name) cut to \(length) bytes")
            }
        }
    }

    @Test("DER with trailing bytes")
    func trailingDER() throws {
        for sample in try Self.derSamples() {
            let error = try KeyTestSupport.decodeError(sample.der + [0x00, 0x00], source: "long.der")
            KeyTestSupport.check(error, is: "malformed", mentioning: "long.der: ")
            #expect(error.code == "malformed", "\(sample.name) with trailing bytes")
        }
    }

    @Test("a certificate where a key is expected, as DER")
    func certificateDER() throws {
        let error = try KeyTestSupport.decodeError(try KeyTestSupport.fixture("cert.der"), source: "cert.der")
        KeyTestSupport.check(error, is: "malformed", mentioning: "cert.der: ", "not a key structure we know")
    }

    @Test("an SPKI whose algorithm OID is unknown")
    func unknownSPKIAlgorithm() throws {
        // SEQUENCE { SEQUENCE { OID 1.2.3.4 }, BIT STRING 0102 }
        let der: [UInt8] = [0x30, 0x0c, 0x30, 0x05, 0x06, 0x03, 0x2a, 0x03, 0x04, 0x03, 0x03, 0x00, 0x01, 0x02]
        let error = try KeyTestSupport.decodeError(der, source: "odd.der")
        KeyTestSupport.check(error, is: "unsupported", mentioning: "odd.der: unsupported: ", "OID 1.2.3.4")
        let pem = PEM.encode(label: "PUBLIC KEY", der: der)
        let pemError = try KeyTestSupport.decodeError(text: pem, source: "odd.pem")
        KeyTestSupport.check(pemError, is: "unsupported", mentioning: "odd.pem: unsupported: ", "OID 1.2.3.4")
    }

    @Test("a PKCS#8 key whose algorithm OID is unknown")
    func unknownPKCS8Algorithm() throws {
        // SEQUENCE { INTEGER 0, SEQUENCE { OID 1.2.3.4 }, OCTET STRING 0000 }
        let der: [UInt8] = [0x30, 0x0e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2a, 0x03, 0x04, 0x04, 0x02, 0x00, 0x00]
        let error = try KeyTestSupport.decodeError(der, source: "odd.p8")
        KeyTestSupport.check(error, is: "unsupported", mentioning: "odd.p8: unsupported: ", "OID 1.2.3.4")
    }

    @Test("an SPKI for a key-agreement algorithm (X25519)")
    func x25519() throws {
        let error = try KeyTestSupport.decodeError(try KeyTestSupport.fixture("x25519-pub.pem"), source: "x25519.pem")
        KeyTestSupport.check(error, is: "unsupported", mentioning: "x25519.pem: unsupported: ", "X25519")
    }

    @Test("a minisign secret key or signature (a minisign public key decodes: MinisignKeySourceTests)")
    func minisign() throws {
        let secret = "untrusted comment: minisign encrypted secret key\nRWQAAEIy\n"
        let error = try KeyTestSupport.decodeError(text: secret, source: "minisign.key")
        KeyTestSupport.check(error, is: "unsupported", mentioning: "minisign.key: unsupported: ", "signet minisign")
        let damaged = "untrusted comment: minisign public key 0123456789ABCDEF\nRWQBI0VniavN7+Mh2xLSh5rdwHJVRlNG\n"
        let precise = try KeyTestSupport.decodeError(text: damaged, source: "minisign.pub")
        KeyTestSupport.check(precise, is: "malformed", mentioning: "minisign.pub: line 2")
    }
}
