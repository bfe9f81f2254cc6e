import Crypto
import Foundation
import SignetCore
import SignetTestSupport
@testable import SignetX509
import SwiftASN1
import Testing
import X509

@Suite("PKCS#12: RFC 7292 key derivation, reading and writing, against openssl")
struct PKCS12Tests {
    // MARK: Key derivation

    @Test("the vector file holds the ten published SHA-1 cases and the openssl-computed ones")
    func vectorFile() throws {
        let vectors = try PKCS12KDFVector.loadAll()
        #expect(vectors.filter { $0.origin == "published" }.count == 10)
        #expect(Set(vectors.map(\.hash)) == ["SHA-1", "SHA-256", "SHA-384", "SHA-512"])
        #expect(Set(vectors.map(\.id)) == [1, 2, 3])
    }

    @Test("PKCS12KDF gives the known answer", arguments: try PKCS12KDFVector.loadAll())
    func knownAnswer(_ vector: PKCS12KDFVector) throws {
        let bmp = try #require(PKCS12KDF.bmpPassword(SecretBytes(Array(vector.password.utf8))))
        let expectedBMP = try TestVectors.bytes(hex: vector.passwordBMP)
        let expectedOutput = try TestVectors.bytes(hex: vector.output)
        #expect(bmp == expectedBMP)
        #expect(try vector.derive() == expectedOutput)
    }

    @Test("passwords become BMPStrings with a terminator; invalid UTF-8 is refused")
    func bmpPasswords() {
        #expect(PKCS12KDF.bmpPassword(SecretBytes([UInt8]())) == [0, 0])
        #expect(PKCS12KDF.bmpPassword(SecretBytes(Array("A".utf8))) == [0, 0x41, 0, 0])
        #expect(PKCS12KDF.bmpPassword(SecretBytes([0xff, 0x41])) == nil)
        #expect(PKCS12KDF.bmpPassword(SecretBytes([0xc3])) == nil)
    }

    // MARK: Reading openssl's files

    @Test("openssl's files read, in every form", arguments: P12KeyType.allCases, P12Form.all)
    func readsOpenSSL(_ type: P12KeyType, _ form: P12Form) throws {
        let shop = try P12Workshop()
        try shop.makeCertificate("leaf", type.opensslArguments)
        let contents = try shop.decode(try shop.export("bundle.p12", form.options))
        let key = try shop.privateKey("leaf")
        let leaf = try shop.certificate("leaf")
        #expect(contents.privateKey?.publicKey == key.publicKey)
        #expect(contents.certificates == [leaf])
        #expect(contents.friendlyName == nil)
    }

    @Test("a chain and a friendly name come through, the key's certificate first", arguments: P12KeyType.allCases, [false, true])
    func readsChain(_ type: P12KeyType, legacy: Bool) throws {
        let shop = try P12Workshop()
        try shop.makeChain(leaf: type)
        let bytes = try shop.export("bundle.p12", ["-certfile", "ca.pem", "-name", "Signet ✓"] + (legacy ? ["-legacy"] : []))
        let contents = try shop.decode(bytes)
        let key = try shop.privateKey("leaf")
        let expected = [try shop.certificate("leaf"), try shop.certificate("ca")]
        #expect(contents.privateKey?.publicKey == key.publicKey)
        #expect(contents.certificates == expected)
        #expect(contents.friendlyName == "Signet ✓")
    }

    @Test("an empty passphrase, as openssl writes it")
    func emptyPassphrase() throws {
        let shop = try P12Workshop()
        try shop.makeCertificate("leaf", P12KeyType.p256.opensslArguments)
        try shop.openssl(["pkcs12", "-export", "-inkey", "leaf.key", "-in", "leaf.pem", "-passout", "pass:", "-out", "empty.p12"])
        let bytes = try shop.folder.read("empty.p12")
        let contents = try PKCS12.decode(bytes, passphrase: SecretBytes([UInt8]()), source: "empty.p12")
        let key = try shop.privateKey("leaf")
        #expect(contents.privateKey?.publicKey == key.publicKey)
        let error = try thrown(X509Error.self) { try shop.decode(bytes, source: "empty.p12") }
        expectError(error, is: "macMismatch", mentioning: ["empty.p12"])
    }

    @Test("a file of certificates only, in file order")
    func certificatesOnly() throws {
        let shop = try P12Workshop()
        try shop.makeChain(leaf: .p256)
        try shop.openssl(["pkcs12", "-export", "-nokeys", "-in", "ca.pem", "-certfile", "leaf.pem", "-passout", "file:pass.txt", "-out", "certs.p12"])
        let contents = try shop.decode(try shop.folder.read("certs.p12"))
        let expected = [try shop.certificate("ca"), try shop.certificate("leaf")]
        #expect(contents.privateKey == nil)
        #expect(contents.certificates == expected)
    }

    @Test("a .p12 holding a 1024-bit RSA key is refused; with weak keys allowed its key reads and its certificate is skipped (swift-certificates reads no RSA key under 2048 bits)")
    func weakKeyPolicy() throws {
        let shop = try P12Workshop()
        try shop.makeCertificate("leaf", ["-newkey", "rsa:1024"])
        let bytes = try shop.export("weak.p12")
        let strict = try thrown(X509Error.self) { try shop.decode(bytes, source: "weak.p12") }
        expectError(strict, is: "unsupported", mentioning: ["weak.p12", "1024 bits"])
        let allowed = try shop.decode(bytes, source: "weak.p12", policy: KeyPolicy(allowWeakRSA: true))
        #expect(allowed.privateKey?.kind == .rsa(bits: 1024))
        #expect(allowed.certificates.isEmpty && allowed.skippedWeakCertificates == 1)
    }

    // MARK: Writing for openssl

    @Test("openssl reads Signet's files: OpenSSL 3's layout, the same key and certificates", arguments: P12KeyType.allCases)
    func opensslReadsSignet(_ type: P12KeyType) throws {
        let shop = try P12Workshop()
        try shop.makeChain(leaf: type)
        let key = try shop.privateKey("leaf")
        let leaf = try shop.certificate("leaf")
        let ca = try shop.certificate("ca")
        let bytes = try PKCS12.encode(
            privateKey: key, certificate: leaf, chain: [ca], passphrase: P12Workshop.secret, friendlyName: "Signet test")
        try shop.folder.write("signet.p12", bytes)

        let info = try shop.openssl(["pkcs12", "-info", "-noout", "-in", "signet.p12", "-passin", "file:pass.txt"])
        for line in [
            "MAC: sha256, Iteration 2048", "salt length: 8",
            "PKCS7 Encrypted data: PBES2, PBKDF2, AES-256-CBC, Iteration 2048, PRF hmacWithSHA256",
            "Shrouded Keybag: PBES2, PBKDF2, AES-256-CBC, Iteration 2048, PRF hmacWithSHA256",
        ] {
            #expect(info.stderr.contains(line), "openssl -info: \(info.stderr)")
        }

        try shop.openssl(["pkcs12", "-in", "signet.p12", "-nodes", "-passin", "file:pass.txt", "-out", "dump.pem"])
        let dump = try shop.folder.readText("dump.pem")
        let leafDER = try shop.folder.read("leaf.der")
        let keyID = Insecure.SHA1.hash(data: leafDER).map { String(format: "%02X", $0) }.joined(separator: " ")
        #expect(dump.components(separatedBy: "localKeyID: \(keyID)").count == 3, "the key and the leaf share the SHA-1 of the leaf:\n\(dump)")
        #expect(dump.components(separatedBy: "friendlyName: Signet test").count == 3)
        #expect(dump.components(separatedBy: "BEGIN CERTIFICATE").count == 3)
        try shop.openssl(["pkey", "-in", "dump.pem", "-pubout", "-outform", "DER", "-out", "dump-key.der"])
        #expect(try shop.folder.read("dump-key.der") == key.publicKey.spkiDER)
        try shop.openssl(["x509", "-in", "dump.pem", "-outform", "DER", "-out", "dump-leaf.der"])
        #expect(try shop.folder.read("dump-leaf.der") == leafDER)
    }

    @Test("Signet reads back what it writes, with and without a friendly name", arguments: P12KeyType.allCases)
    func roundTrip(_ type: P12KeyType) throws {
        let shop = try P12Workshop()
        try shop.makeChain(leaf: type)
        let key = try shop.privateKey("leaf")
        let certificates = [try shop.certificate("leaf"), try shop.certificate("ca")]
        for name in [nil, "ключ"] as [String?] {
            let bytes = try PKCS12.encode(
                privateKey: key, certificate: certificates[0], chain: [certificates[1]], passphrase: P12Workshop.secret,
                friendlyName: name, iterations: 16)
            let contents = try shop.decode(bytes)
            #expect(contents.privateKey?.publicKey == key.publicKey)
            #expect(contents.certificates == certificates)
            #expect(contents.friendlyName == name)
        }
    }

    @Test("a key that is not the certificate's, an empty passphrase and a bad iteration count are refused")
    func encodeRefusals() throws {
        let shop = try P12Workshop()
        try shop.makeChain(leaf: .p256)
        let leaf = try shop.certificate("leaf")
        let caKey = try shop.privateKey("ca")
        let mismatch = try thrown(X509Error.self) {
            try PKCS12.encode(privateKey: caKey, certificate: leaf, passphrase: P12Workshop.secret)
        }
        expectError(mismatch, is: "keyMismatch", mentioning: ["CN=leaf"])
        #expect(mismatch.category == .checkFailed)
        let key = try shop.privateKey("leaf")
        let empty = try thrown(X509Error.self) { try PKCS12.encode(privateKey: key, certificate: leaf, passphrase: SecretBytes([UInt8]())) }
        expectError(empty, is: "invalidArgument", mentioning: ["empty"])
        for iterations in [0, -1, PKCS12.maximumIterations + 1] {
            let error = try thrown(X509Error.self) {
                try PKCS12.encode(privateKey: key, certificate: leaf, passphrase: P12Workshop.secret, iterations: iterations)
            }
            expectError(error, is: "invalidArgument", mentioning: ["\(iterations)"])
        }
    }

    // MARK: Refusals

    @Test("a wrong passphrase is a MAC mismatch", arguments: P12Form.all)
    func wrongPassphrase(_ form: P12Form) throws {
        let shop = try P12Workshop()
        try shop.makeCertificate("leaf", P12KeyType.p256.opensslArguments)
        let bytes = try shop.export("bundle.p12", form.options)
        for wrong in ["correct horse", "correct horse ✓ ", "", "CORRECT HORSE ✓"] {
            let error = try thrown(X509Error.self) {
                try PKCS12.decode(bytes, passphrase: SecretBytes(Array(wrong.utf8)), source: "bundle.p12")
            }
            expectError(error, is: "macMismatch", mentioning: ["bundle.p12", "wrong passphrase"])
            #expect(error.category == .checkFailed)
        }
    }

    @Test("a changed byte in the MAC or in the authenticated safe is a MAC mismatch")
    func tampering() throws {
        let shop = try P12Workshop()
        try shop.makeCertificate("leaf", P12KeyType.ed25519.opensslArguments)
        let bytes = try shop.export("bundle.p12")
        let pfx = try Self.children(try DER.parse(bytes))
        let digest = try Self.primitive(try Self.children(try Self.children(pfx[2])[0])[1])
        let authSafe = try Self.primitive(try Self.children(try Self.children(pfx[1])[1])[0])
        for index in [digest.startIndex, digest.endIndex - 1, authSafe.startIndex + authSafe.count / 2, authSafe.endIndex - 1] {
            let error = try thrown(X509Error.self) { try shop.decode(TestBytes.flipped(bytes, at: index), source: "tampered.p12") }
            expectError(error, is: "macMismatch", mentioning: ["tampered.p12"])
        }
    }

    @Test("every single-bit change to a file is refused, never accepted")
    func everyBitFlip() throws {
        let shop = try P12Workshop()
        try shop.makeCertificate("leaf", P12KeyType.p256.opensslArguments)
        let bytes = try shop.export("bundle.p12", ["-iter", "1", "-nomaciter"])
        let allowed: Set<SignetErrorCode<X509Error>> = ["malformed", "unsupported", "macMismatch"]
        for index in stride(from: 0, to: bytes.count, by: 3) {
            let error = try thrown(X509Error.self) { try shop.decode(TestBytes.flipped(bytes, at: index), source: "flipped.p12") }
            #expect(allowed.contains(error.code), "byte \(index): \(error)")
        }
    }

    @Test("truncated files, garbage, PEM text and empty input are malformed")
    func malformedInput() throws {
        let shop = try P12Workshop()
        try shop.makeCertificate("leaf", P12KeyType.p256.opensslArguments)
        let bytes = try shop.export("bundle.p12")
        let pem = "-----BEGIN PKCS12-----\n" + Data(bytes).base64EncodedString(options: .lineLength64Characters) + "\n-----END PKCS12-----\n"
        let cases: [([UInt8], String)] = [
            (Array(bytes.dropLast()), "not a valid DER PKCS#12 file"), (Array(bytes.prefix(bytes.count / 2)), "not a valid DER PKCS#12 file"),
            (Array("hello, this is not a PKCS#12 file".utf8), "not a valid DER PKCS#12 file"),
            (Array(pem.utf8), "binary DER"), (Array(("\n  " + pem).utf8), "binary DER"), ([], "empty"),
            ([UInt8](repeating: 0x30, count: PKCS12.maximumSize + 1), "too large"),
        ]
        for (input, fragment) in cases {
            let error = try thrown(X509Error.self) { try shop.decode(input, source: "input.p12") }
            expectError(error, is: "malformed", mentioning: ["input.p12", fragment])
        }
        var generator = SplitMix64(seed: 0x5012)
        for round in 0..<300 {
            var input = (0..<generator.below(160)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            if round % 2 == 0 { input = [0x30, UInt8(min(input.count, 127))] + input }
            let error = try thrown(X509Error.self) { try shop.decode(input, source: "random.p12") }
            #expect(error.code == "malformed" || error.code == "unsupported", "round \(round): \(error)")
        }
    }

    @Test("no MAC, BER encoding and a huge iteration count are refused with exact codes")
    func structuralRefusals() throws {
        let shop = try P12Workshop()
        try shop.makeCertificate("leaf", P12KeyType.p256.opensslArguments)
        let unprotected = try shop.export("nomac.p12", ["-nomac"])
        let noMAC = try thrown(X509Error.self) { try shop.decode(unprotected, source: "nomac.p12") }
        expectError(noMAC, is: "malformed", mentioning: ["nomac.p12", "no MAC"])

        let bytes = try shop.export("bundle.p12")
        let headerLength = bytes[1] & 0x80 == 0 ? 2 : 2 + Int(bytes[1] & 0x7f)
        let ber: [UInt8] = [0x30, 0x80] + Array(bytes[headerLength...]) + [0, 0]
        let berError = try thrown(X509Error.self) { try shop.decode(ber, source: "ber.p12") }
        expectError(berError, is: "unsupported", mentioning: ["ber.p12", "BER", "DER"])

        for iterations in [100_000_000, 0] {
            let slow = try Self.withMACIterations(bytes, iterations)
            let error = try thrown(X509Error.self) { try shop.decode(slow, source: "slow.p12") }
            expectError(error, is: "unsupported", mentioning: ["slow.p12", "\(iterations)"])
        }
    }

    // MARK: Helpers

    private static func children(_ node: ASN1Node) throws -> [ASN1Node] {
        guard case .constructed(let nodes) = node.content else { throw VectorError(description: "\(node.identifier) is primitive") }
        return Array(nodes)
    }

    private static func primitive(_ node: ASN1Node) throws -> ArraySlice<UInt8> {
        guard case .primitive(let bytes) = node.content else { throw VectorError(description: "\(node.identifier) is constructed") }
        return bytes
    }

    /// `p12` with its MAC's iteration count replaced (the count is checked before the MAC).
    private static func withMACIterations(_ p12: [UInt8], _ iterations: Int) throws -> [UInt8] {
        let pfx = try children(try DER.parse(p12))
        let mac = try children(pfx[2])
        var serializer = DER.Serializer()
        try serializer.appendConstructedNode(identifier: .sequence) { outer in
            outer.serialize(pfx[0])
            outer.serialize(pfx[1])
            try outer.appendConstructedNode(identifier: .sequence) { macData in
                macData.serialize(mac[0])
                macData.serialize(mac[1])
                try macData.serialize(iterations)
            }
        }
        return serializer.serializedBytes
    }
}
