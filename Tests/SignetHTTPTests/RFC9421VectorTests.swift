import Foundation
import HTTPTypes
import SignetCore
@testable import SignetHTTP
import SignetTestSupport
import Testing

@Suite("RFC 9421 test vectors (Appendix B, §2, §2.4, §3, §4.3)")
struct RFC9421VectorTests {
    /// A verifier holding the example's key under its keyid, its clock stopped at `created`.
    /// The RFC's examples do not all cover @method and @target-uri, and B.2.1 leaves the
    /// request's Content-Digest uncovered, so the policy asks for neither; the digest is still
    /// checked against the body wherever the field is present.
    static func verifier(for example: SignatureExample) async throws -> HTTPMessageVerifier {
        let key = try await RFC9421Keys.verificationKey(example.keyid, algorithm: try example.signatureAlgorithm)
        var policy = HTTPSignaturePolicy()
        policy.requiredComponents = []
        policy.requireContentDigestWithBody = false
        return HTTPMessageVerifier(
            keys: StaticHTTPSignatureKeys([example.keyid: key]), policy: policy, clock: fixedClock(try example.created))
    }

    @Test("the vector file holds the twelve signature examples and the Section 2 component examples")
    func vectorFile() throws {
        let file = try RFC9421File.load()
        #expect(
            file.examples.map(\.id) == [
                "B.2.1", "B.2.2", "B.2.3", "B.2.4", "B.2.5", "B.2.6", "B.3", "B.4", "2.5+3.2", "4.3-sig1", "4.3-proxy_sig", "2.4-reqres",
            ])
        #expect(file.examples.filter(\.deterministic).map(\.id) == ["B.2.5", "B.2.6", "B.4", "4.3-proxy_sig"])
        #expect(file.componentExamples.count == 23)
        for example in file.examples {
            #expect(
                example.addedHeaders == [
                    ["Signature-Input", example.label + "=" + example.signatureInput], ["Signature", example.label + "=:" + example.signature + ":"],
                ], "\(example.id)")
            #expect(example.signatureBase.hasSuffix("\"@signature-params\": " + example.signatureInput), "\(example.id)")
            #expect(example.signatureBase.split(separator: "\n").count == example.coveredComponents.count + 1, "\(example.id)")
        }
    }

    @Test("the signature base Signet builds equals the RFC's byte for byte", arguments: try RFC9421File.load().examples)
    func signatureBase(_ example: SignatureExample) throws {
        let (message, _) = try RFC9421File.load().message(for: example)
        let parsed = try SignatureFields(message.fields, maximumFieldBytes: 8192, maximumSignatures: 8)
        let entry = try #require(parsed.entries.first(where: { $0.label == example.label }))
        let base = try entry.input.signatureBase(for: message)
        #expect(base == example.signatureBase)
        #expect(Array(base.utf8) == Array(example.signatureBase.utf8))
        #expect(try entry.input.serializedParameters() == example.signatureInput)
        let identifiers = example.coveredComponents.map { $0.hasPrefix("\"") ? $0 : "\"\($0)\"" }
        #expect(try entry.input.components.map(\.description) == identifiers)
        let signature = try example.signatureBytes
        let created = try example.created
        #expect(try entry.signature == signature)
        #expect(try entry.input.parameters.keyID == example.keyid)
        #expect(try entry.input.parameters.created == created)
    }

    @Test("HTTPMessageVerifier accepts the RFC's signature at its created time", arguments: try RFC9421File.load().examples)
    func verifies(_ example: SignatureExample) async throws {
        let (message, body) = try RFC9421File.load().message(for: example)
        let verifier = try await Self.verifier(for: example)
        let verified = try await verifier.verify(message, bodyDigests: HTTPTestSupport.digests(body), label: example.label)
        #expect(verified.label == example.label)
        #expect(verified.keyID == example.keyid)
        let algorithm = try example.signatureAlgorithm
        #expect(verified.algorithm == algorithm)
        #expect(verified.input.components.count == example.coveredComponents.count)
    }

    @Test("a flipped signature bit, or a created one second later, fails with signatureInvalid", arguments: try RFC9421File.load().examples)
    func tampered(_ example: SignatureExample) async throws {
        let file = try RFC9421File.load()
        let verifier = try await Self.verifier(for: example)
        let created = try example.created
        let signature = try example.signatureBytes
        let flipped = TestBytes.flipped(signature, at: signature.count / 2)
        let laterInput = example.signatureInput.replacingOccurrences(of: ";created=\(created)", with: ";created=\(created + 1)")
        #expect(laterInput != example.signatureInput)
        let variants: [[[String]]] = [
            [["Signature-Input", example.label + "=" + example.signatureInput], ["Signature", example.label + "=:" + Base64.encode(flipped) + ":"]],
            [["Signature-Input", example.label + "=" + laterInput], ["Signature", example.label + "=:" + example.signature + ":"]],
        ]
        for fields in variants {
            let (message, body) = try file.message(for: example, signatureFields: fields)
            let error = try await HTTPTestSupport.thrown { try await verifier.verify(message, bodyDigests: HTTPTestSupport.digests(body)) }
            #expect(error == .signatureInvalid(label: example.label))
        }
    }

    @Test(
        "deterministic algorithms reproduce the RFC's signature from its signature base",
        arguments: try RFC9421File.load().examples.filter(\.deterministic))
    func reproducesSignature(_ example: SignatureExample) async throws {
        let algorithm = try example.signatureAlgorithm
        let base = Array(example.signatureBase.utf8)
        let key = try await RFC9421Keys.signingKey(example.keyid, algorithm: algorithm)
        let signature = try await key.sign(base)
        #if canImport(Darwin)
        // CryptoKit randomises Ed25519 signatures; on Apple platforms they can only be verified.
        if algorithm == .ed25519 {
            try await RFC9421Keys.verificationKey(example.keyid, algorithm: algorithm).verify(signature, base: base, label: example.label)
            return
        }
        #endif
        let expected = try example.signatureBytes
        #expect(signature == expected)
    }

    @Test(
        "each RFC signature verifies over the RFC's base under the RFC key alone; the test key's own signature does too",
        arguments: try RFC9421File.load().examples)
    func keyLevel(_ example: SignatureExample) async throws {
        let algorithm = try example.signatureAlgorithm
        let base = Array(example.signatureBase.utf8)
        let signature = try example.signatureBytes
        let verificationKey = try await RFC9421Keys.verificationKey(example.keyid, algorithm: algorithm)
        try verificationKey.verify(signature, base: base, label: example.label)
        #expect(throws: HTTPSignatureError.signatureInvalid(label: example.label)) {
            try verificationKey.verify(signature, base: base + [0x0A], label: example.label)
        }
        // test-key-rsa-pss's private key cannot be read (see rsaPSSPrivateKey); its signatures are verified above.
        guard example.keyid != "test-key-rsa-pss" else { return }
        let own = try await RFC9421Keys.signingKey(example.keyid, algorithm: algorithm).sign(base)
        #expect(own.count == signature.count)
        try verificationKey.verify(own, base: base, label: example.label)
    }

    @Test("SignetCore refuses the RFC's RSASSA-PSS PKCS#8 private key; its rsaEncryption SPKI public key reads")
    func rsaPSSPrivateKey() async throws {
        // If SignetCore learns to read id-RSASSA-PSS PKCS#8 keys, replace this with a signing round trip.
        let path = try TestVectors.path("rfc9421-keys/test-key-rsa-pss.pem", in: .module)
        let error = try await #require(throws: SignetCoreError.self) { try await KeySourceResolver().signer(path, algorithm: .rsaPSSSHA512) }
        guard case .unsupported = error else {
            Issue.record("expected .unsupported, got \(error)")
            return
        }
        let publicKey = try await KeySourceResolver().publicKey(try TestVectors.path("rfc9421-keys/test-key-rsa-pss.pub.pem", in: .module))
        #expect(publicKey.kind == .rsa(bits: 2048))
        #expect(HTTPSignatureAlgorithms.default(for: publicKey.kind) == .rsaPSSSHA512)
    }

    @Test(
        "HTTPMessageSigner given the RFC's components, keyid and created reproduces its Signature-Input and Signature",
        arguments: ["B.2.5", "B.2.6", "B.4"])
    func signerReproducesFields(_ id: String) async throws {
        let example = try RFC9421File.example(id)
        let algorithm = try example.signatureAlgorithm
        let (message, _) = try RFC9421File.load().message(for: example)
        var signer = HTTPMessageSigner(key: try await RFC9421Keys.signingKey(example.keyid, algorithm: algorithm), keyID: example.keyid)
        signer.label = example.label
        signer.components = try example.coveredComponents.map { try SignatureComponent(parsing: $0) }
        signer.includeNonce = false
        signer.includeAlgorithm = false
        signer.clock = fixedClock(try example.created)
        let (input, fields) = try await signer.signatureFields(for: message)
        #expect(try input.serializedParameters() == example.signatureInput)
        #expect(fields.map(\.name) == [.signatureInput, .signature])
        #expect(fields.first?.value == example.label + "=" + example.signatureInput)
        #if canImport(Darwin)
        if algorithm == .ed25519 { return }  // randomised by CryptoKit
        #endif
        #expect(fields.last?.value == example.label + "=:" + example.signature + ":")
    }

    @Test("B.4: transformations that keep the covered components verify; a changed method/authority or Accept order does not")
    func transformations() async throws {
        let example = try RFC9421File.example("B.4")
        let verifier = try await Self.verifier(for: example)
        let original = try #require(example.messageData)
        let transformed = try #require(example.transformedMessages)
        #expect(transformed.count == 5)
        #expect(transformed.filter({ $0.expectValid == false }).count == 2)
        for data in [original] + transformed {
            let request = try data.request()
            guard let expectValid = data.expectValid else { throw VectorError(description: "a transformed message without expectValid") }
            if expectValid {
                let verified = try await verifier.verify(request, body: nil)
                #expect(verified.label == "transform", "\(data.description ?? "")")
            } else {
                let error = try await HTTPTestSupport.thrown { try await verifier.verify(request, body: nil) }
                #expect(error == .signatureInvalid(label: "transform"), "\(data.description ?? "")")
            }
        }
    }

    @Test("§4.3: with sig1 and proxy_sig in one field pair, proxy_sig verifies on the forwarded request and sig1 on the client's")
    func multipleSignatures() async throws {
        let file = try RFC9421File.load()
        let proxy = try RFC9421File.example("4.3-proxy_sig")
        let client = try RFC9421File.example("4.3-sig1")
        let combined = try #require(proxy.combinedHeaders)
        let keys = StaticHTTPSignatureKeys([
            proxy.keyid: try await RFC9421Keys.verificationKey(proxy.keyid, algorithm: try proxy.signatureAlgorithm),
            client.keyid: try await RFC9421Keys.verificationKey(client.keyid, algorithm: try client.signatureAlgorithm),
        ])
        var policy = HTTPSignaturePolicy()
        policy.requiredComponents = []
        let verifier = HTTPMessageVerifier(keys: keys, policy: policy, clock: fixedClock(try proxy.created))

        let (forwarded, forwardedBody) = try file.message(for: proxy, signatureFields: combined)
        let forwardedDigests = HTTPTestSupport.digests(forwardedBody)
        #expect(try await verifier.verify(forwarded, bodyDigests: forwardedDigests, keyID: "test-key-rsa").label == "proxy_sig")
        // Without a choice, sig1 is tried first, fails (the authority changed), and proxy_sig passes.
        #expect(try await verifier.verify(forwarded, bodyDigests: forwardedDigests).label == "proxy_sig")
        let sig1 = try await HTTPTestSupport.thrown { try await verifier.verify(forwarded, bodyDigests: forwardedDigests, label: "sig1") }
        #expect(sig1 == .signatureInvalid(label: "sig1"))

        let (original, originalBody) = try file.message(for: client, signatureFields: combined)
        let originalDigests = HTTPTestSupport.digests(originalBody)
        #expect(try await verifier.verify(original, bodyDigests: originalDigests, label: "sig1").keyID == "test-key-ecc-p256")
        let proxySig = try await HTTPTestSupport.thrown { try await verifier.verify(original, bodyDigests: originalDigests, label: "proxy_sig") }
        #expect(proxySig == .missingComponent("forwarded"))
    }

    @Test("§2.4: the response's req components come from the request it answers")
    func requestComponentsInResponse() async throws {
        let example = try RFC9421File.example("2.4-reqres")
        let verifier = try await Self.verifier(for: example)
        let (message, body) = try RFC9421File.load().message(for: example)
        let digests = HTTPTestSupport.digests(body)
        #expect(try await verifier.verify(message, bodyDigests: digests).label == "reqres")

        var alone = message
        alone.request = nil
        let missing = try await HTTPTestSupport.thrown { try await verifier.verify(alone, bodyDigests: digests) }
        #expect(missing.code == "missingComponent")

        var other = message
        other.request?.path = "/bar"
        let changed = try await HTTPTestSupport.thrown { try await verifier.verify(other, bodyDigests: digests) }
        #expect(changed == .signatureInvalid(label: "reqres"))
    }

    // MARK: Section 2 components

    /// A message from a raw HTTP/1.1 fragment: a request line or status line (a fragment of
    /// header lines alone is a GET of `/`), header lines with obs-fold joined by one space,
    /// up to the first empty line. The path is the request target as sent; the authority is Host.
    static func message(fromRaw lines: [String], scheme: String?) throws -> SignedMessage {
        var method = "GET"
        var target = "/"
        var status: Int?
        var headerLines = ArraySlice(lines)
        if let first = lines.first {
            let parts = first.split(separator: " ").map(String.init)
            if first.hasPrefix("HTTP/"), parts.count >= 2 {
                guard let code = Int(parts[1]) else { throw VectorError(description: "bad status line \(first)") }
                status = code
                headerLines = headerLines.dropFirst()
            } else if parts.count == 3, parts[2].hasPrefix("HTTP/") {
                method = parts[0]
                target = parts[1]
                headerLines = headerLines.dropFirst()
            }
        }
        var pairs: [[String]] = []
        for line in headerLines {
            if line.isEmpty { break }  // the end of the header section; content and trailers follow
            if line.hasPrefix(" ") || line.hasPrefix("\t") {
                try #require(!pairs.isEmpty, "a continuation line without a field")
                pairs[pairs.count - 1][1] += " " + line.trimmingCharacters(in: .whitespaces)
                continue
            }
            let colon = try #require(line.firstIndex(of: ":"), "not a header line: \(line)")
            pairs.append([String(line[..<colon]), String(line[line.index(after: colon)...])])
        }
        let fields = try HTTPTestSupport.fields(pairs)
        if let status {
            return .response(HTTPResponse(status: HTTPResponse.Status(code: status), headerFields: fields))
        }
        let host = pairs.first(where: { $0[0].lowercased() == "host" }).map { $0[1].trimmingCharacters(in: .whitespaces) }
        let requestMethod = try #require(HTTPRequest.Method(method))
        return .request(HTTPRequest(method: requestMethod, scheme: scheme ?? "https", authority: host, path: target, headerFields: fields))
    }

    @Test("Section 2 component values match the RFC's signature base lines", arguments: try RFC9421File.load().componentExamples)
    func componentValues(_ example: ComponentExample) throws {
        let message = try Self.message(fromRaw: example.rawMessage, scheme: example.scheme)
        #expect(!example.expectedLines.isEmpty)
        for line in example.expectedLines {
            let separator = try #require(line.range(of: ": "), "no separator in \(line)")
            let identifier = String(line[..<separator.lowerBound])
            let value = String(line[separator.upperBound...])
            if identifier == "\"@signature-params\"" {
                var fields: HTTPFields = [:]
                fields.append(HTTPField(name: .signatureInput, value: "sig1=" + value))
                fields.append(HTTPField(name: .signature, value: "sig1=:AAAA:"))
                let entry = try #require(try SignatureFields(fields, maximumFieldBytes: 8192, maximumSignatures: 8).entries.first)
                #expect(try entry.input.serializedParameters() == value)
                continue
            }
            if identifier.hasSuffix(";tr") {
                // Trailer fields (§2.1.4) are not supported: the identifier is refused, never mis-signed.
                let error = try #require(throws: HTTPSignatureError.self) { try SignatureComponent(parsing: identifier) }
                #expect(error.code == "malformedField")
                continue
            }
            let component = try SignatureComponent(parsing: identifier)
            #expect(component.description == identifier)
            #expect(try message.value(of: component) == value, "\(line)")
        }
    }

    @Test("a received Signature-Input keeps its parameter order; a new SignatureInput uses created, expires, nonce, alg, keyid, tag")
    func parameterOrder() throws {
        let components = "(\"@target-uri\" \"@authority\" \"date\" \"cache-control\")"
        let received = components + ";keyid=\"test-key-rsa-pss\";alg=\"rsa-pss-sha512\";created=1618884475;expires=1618884775"
        var fields: HTTPFields = [:]
        fields.append(HTTPField(name: .signatureInput, value: "sig1=" + received))
        fields.append(HTTPField(name: .signature, value: "sig1=:AAAA:"))
        let entry = try #require(try SignatureFields(fields, maximumFieldBytes: 8192, maximumSignatures: 8).entries.first)
        #expect(try entry.input.serializedParameters() == received)
        #expect(
            try entry.input.parameters
                == SignatureParameters(created: 1_618_884_475, expires: 1_618_884_775, algorithm: "rsa-pss-sha512", keyID: "test-key-rsa-pss"))
        let rebuilt = try SignatureInput(components: entry.input.components, parameters: entry.input.parameters)
        #expect(
            try rebuilt.serializedParameters()
                == components + ";created=1618884475;expires=1618884775;alg=\"rsa-pss-sha512\";keyid=\"test-key-rsa-pss\"")
        #expect(try rebuilt == entry.input)
    }

    @Test("@authority is lower-cased and loses only its own scheme's default port")
    func authorityNormalisation() throws {
        let cases: [(scheme: String, authority: String, expected: String)] = [
            ("https", "Example.COM:443", "example.com"), ("http", "example.com:80", "example.com"),
            ("https", "example.com:8443", "example.com:8443"), ("http", "example.com:443", "example.com:443"),
            ("https", "example.com:80", "example.com:80"),
        ]
        for c in cases {
            let message = SignedMessage.request(HTTPRequest(method: .get, scheme: c.scheme, authority: c.authority, path: "/"))
            #expect(try message.value(of: .authority) == c.expected, "\(c.scheme)://\(c.authority)")
        }
    }

    @Test("@query-param: names match after decoding; a repeated parameter is refused, an absent one is missing")
    func queryParameters() throws {
        #expect(SignatureComponent.queryParameter("façade\": ").description == "\"@query-param\";name=\"fa%C3%A7ade%22%3A%20\"")
        let message = SignedMessage.request(HTTPRequest(method: .get, scheme: "https", authority: "example.com", path: "/p?a=1&a=2&b=x+y&c=a%2fb&d&na%6De=v"))
        #expect(try message.value(of: .queryParameter("b")) == "x%20y")
        #expect(try message.value(of: .queryParameter("c")) == "a%2Fb")
        #expect(try message.value(of: .queryParameter("d")) == "")
        #expect(try message.value(of: .queryParameter("name")) == "v")
        let repeated = try #require(throws: HTTPSignatureError.self) { try message.value(of: .queryParameter("a")) }
        #expect(repeated.malformedFieldName == "@query")
        let absent = try #require(throws: HTTPSignatureError.self) { try message.value(of: .queryParameter("e")) }
        #expect(absent.code == "missingComponent")
    }

    @Test("@request-target of a CONNECT request as HTTPTypes models it (authority, no path) is the authority form (§2.2.5)")
    func connectRequestTarget() throws {
        // HTTP/2 and HTTPTypes carry a CONNECT target in :authority with no :path; the RFC's
        // value is the authority form, as the §2.2.5 vector (sent over HTTP/1.1) shows.
        let message = SignedMessage.request(HTTPRequest(method: .connect, scheme: nil, authority: "www.example.com:80", path: nil))
        #expect(try message.value(of: SignatureComponent("@request-target")) == "www.example.com:80")
    }
}
