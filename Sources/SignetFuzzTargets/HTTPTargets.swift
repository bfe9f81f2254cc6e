import HTTPTypes
import SignetHTTP
import SignetCore

/// RFC 9421 and RFC 9530 fields as the verifier reads them, and the signature base it builds.
enum HTTPTargets {
    static let all: TargetList = [
        ("signature-input", { HTTPTargets.signatureInput($0) }),
        ("signature", { HTTPTargets.signature($0) }),
        ("content-digest", { HTTPTargets.contentDigest($0) }),
        ("signature-base", { HTTPTargets.signatureBase($0) }),
        ("signature-component", { HTTPTargets.component($0) }),
        ("sf-dictionary", { HTTPTargets.dictionary($0) }),
    ]

    /// Limits that never refuse what a round trip writes back.
    static let roomyPolicy: HTTPSignaturePolicy = {
        var policy = HTTPSignaturePolicy()
        policy.maximumFieldBytes = 1 << 20
        policy.maximumSignatures = 1 << 10
        return policy
    }()

    /// RFC 9421's test-request (Appendix B.2), plus a structured field to cover with `sf` and `key`.
    static let testRequest: HTTPRequest = {
        var fields = HTTPFields()
        for (name, value) in [
            ("Host", "example.com"), ("Date", "Tue, 20 Apr 2021 02:07:55 GMT"), ("Content-Type", "application/json"),
            ("Content-Digest", "sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:"),
            ("Content-Length", "18"), ("Example-Dict", "a=1,    b=2;x=1;y=2,   c=(a   b   c)"),
        ] {
            fields.append(HTTPField(name: HTTPField.Name(name)!, value: value))
        }
        return HTTPRequest(method: .post, scheme: "https", authority: "example.com", path: "/foo?param=Value&Pet=dog", headerFields: fields)
    }()

    /// RFC 9421's test-response (Appendix B.2).
    static let testResponseFields: HTTPFields = {
        var fields = HTTPFields()
        for (name, value) in [
            ("Date", "Tue, 20 Apr 2021 02:07:56 GMT"), ("Content-Type", "application/json"),
            ("Content-Digest", "sha-512=:mEWXIS7MaLRuGgxOBdODa3xqM1XdEvxoYhvlCFJ41QJgJc4GTsPp29l5oGX69wWdXymyU0rjJuahq4l5aGgfLQ==:"),
            ("Content-Length", "23"),
        ] {
            fields.append(HTTPField(name: HTTPField.Name(name)!, value: value))
        }
        return fields
    }()

    /// A `Signature` member for each label, so that the inputs are read.
    static func placeholderSignatures(_ labels: Set<String>) -> String {
        labels.sorted().map { "\($0)=:AAAA:" }.joined(separator: ", ")
    }

    // MARK: Signature-Input

    /// The fuzzed value as the `Signature-Input` field, with a `Signature` member for each of
    /// its labels, read as the verifier reads them. Invariants: a parsed input serialises,
    /// and both that serialisation and the one a signer builds from its components and
    /// parameters parse back to an equal input.
    static func signatureInput(_ bytes: [UInt8]) {
        var fields = HTTPFields()
        fields[.signatureInput] = Fuzz.text(bytes)
        let labels = HTTPFuzzing.labels(in: fields)
        if !labels.isEmpty { fields[.signature] = placeholderSignatures(labels) }
        if let disagreement = HTTPFuzzing.scannerDisagreement(fields) {
            Fuzz.require(false, "signature-input", "the fast scanner and the general reader disagree: \(disagreement)")
        }
        guard let parsed = try? HTTPFuzzing.signatures(in: fields) else { return }
        for entry in parsed {
            guard case .success(let input) = entry.input else { continue }
            checkInput(input, label: entry.label, "signature-input")
        }
    }

    static func checkInput(_ input: SignatureInput, label: String, _ target: String) {
        guard let serialized = try? input.serializedParameters() else {
            Fuzz.require(false, target, "a received Signature-Input (\(label)) does not serialise")
            return
        }
        Fuzz.require(reparse(label: label, serialized) == input, target, "\(label)=\(serialized) does not parse back to the same input")
        guard let built = try? SignatureInput(components: input.components, parameters: input.parameters),
            let builtSerialized = try? built.serializedParameters()
        else {
            Fuzz.require(false, target, "a signer cannot rebuild the input \(label)=\(serialized)")
            return
        }
        Fuzz.require(
            reparse(label: label, builtSerialized) == input, target,
            "the rebuilt \(label)=\(builtSerialized) does not parse back to the input \(serialized)")
    }

    static func reparse(label: String, _ serialized: String) -> SignatureInput? {
        var fields = HTTPFields()
        fields[.signatureInput] = "\(label)=\(serialized)"
        fields[.signature] = "\(label)=:AAAA:"
        guard let parsed = try? HTTPFuzzing.signatures(in: fields, policy: roomyPolicy), parsed.count == 1, parsed[0].label == label,
            case .success(let input) = parsed[0].input
        else { return nil }
        return input
    }

    // MARK: Signature

    /// The fuzzed value as the `Signature` field, with an input for each of its labels.
    /// Invariant: a signature written again as `label=:base64:` reads back the same bytes.
    static func signature(_ bytes: [UInt8]) {
        let value = Fuzz.text(bytes)
        var probe = HTTPFields()
        probe[.signatureInput] = value
        let labels = HTTPFuzzing.labels(in: probe)
        var fields = HTTPFields()
        fields[.signature] = value
        if !labels.isEmpty {
            fields[.signatureInput] = labels.sorted().map { "\($0)=(\"@method\");created=1618884473;keyid=\"k\"" }.joined(separator: ", ")
        }
        if let disagreement = HTTPFuzzing.scannerDisagreement(fields) {
            Fuzz.require(false, "signature", "the fast scanner and the general reader disagree: \(disagreement)")
        }
        guard let parsed = try? HTTPFuzzing.signatures(in: fields) else { return }
        for entry in parsed {
            guard case .success(let signature) = entry.signature else { continue }
            var again = HTTPFields()
            again[.signatureInput] = "\(entry.label)=(\"@method\");created=1618884473;keyid=\"k\""
            again[.signature] = "\(entry.label)=:\(Base64.encode(signature)):"
            let reparsed = try? HTTPFuzzing.signatures(in: again, policy: roomyPolicy)
            let bytesAgain = try? reparsed?.first?.signature.get()
            Fuzz.require(reparsed?.count == 1 && bytesAgain == signature, "signature", "the signature \(entry.label) written again reads other bytes")
        }
    }

    // MARK: Content-Digest

    /// `ContentDigest.parse(_:)` and `verify(fieldValue:body:)`. Invariant: the digests
    /// written again with `fieldValue(_:)` parse equal.
    static func contentDigest(_ bytes: [UInt8]) {
        let value = Fuzz.text(bytes)
        _ = try? ContentDigest.verify(fieldValue: value, body: Array(#"{"hello": "world"}"#.utf8))
        guard let digests = try? ContentDigest.parse(value) else { return }
        let again = try? ContentDigest.parse(ContentDigest.fieldValue(digests))
        Fuzz.require(again == digests, "content-digest", "the digests written again parse to others")
    }

    // MARK: The signature base

    /// The first line is a `Signature-Input` value; each further line `name: value` adds a
    /// header field to RFC 9421's test-request, or sets a pseudo-header: `@method`, `@path`
    /// (the request target), `@authority`, `@scheme`, or `@status` (which makes the message a
    /// response answering the request). Each input that parses builds its base with
    /// `SignatureInput.signatureBase(for:)`. Invariants: one line per covered component, each
    /// starting with the component's identifier, then the `@signature-params` line (so no
    /// value can add a line).
    static func signatureBase(_ bytes: [UInt8]) {
        let lines = bytes.split(separator: UInt8(ascii: "\n"), maxSplits: 64, omittingEmptySubsequences: false)
        guard let first = lines.first else { return }
        var request = testRequest
        var status: Int?
        var added: [HTTPField] = []
        for line in lines.dropFirst() {
            let text = Fuzz.text(Array(line))
            guard let colon = text.firstIndex(of: ":") else { continue }
            let name = String(text[..<colon])
            let value = String(text[text.index(after: colon)...].drop { $0 == " " })
            switch name {
            case "@method": if let method = HTTPRequest.Method(value) { request.method = method }
            case "@path": request.path = value
            case "@authority": request.authority = value
            case "@scheme": request.scheme = value
            case "@status": if let code = Int(value), (0...999).contains(code) { status = code }
            default: if let fieldName = HTTPField.Name(name) { added.append(HTTPField(name: fieldName, value: value)) }
            }
        }
        var fields = status == nil ? request.headerFields : testResponseFields
        fields[.signatureInput] = Fuzz.text(Array(first))
        fields.append(contentsOf: added)
        let labels = HTTPFuzzing.labels(in: fields)
        if fields[.signature] == nil, !labels.isEmpty { fields[.signature] = placeholderSignatures(labels) }
        let message: SignedMessage
        if let status {
            message = .response(HTTPResponse(status: HTTPResponse.Status(code: status), headerFields: fields), answering: request)
        } else {
            request.headerFields = fields
            message = .request(request)
        }
        guard let parsed = try? HTTPFuzzing.signatures(in: fields) else { return }
        for entry in parsed {
            guard case .success(let input) = entry.input, let base = try? input.signatureBase(for: message) else { continue }
            guard let parameters = try? input.serializedParameters() else {
                Fuzz.require(false, "signature-base", "an input that built a base does not serialise its parameters")
                return
            }
            let baseLines = Array(base.utf8).split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            Fuzz.require(
                baseLines.count == input.components.count + 1, "signature-base",
                "a base of \(input.components.count) components has \(baseLines.count) lines:\n\(base)")
            for (component, line) in zip(input.components, baseLines) {
                Fuzz.require(line.starts(with: Array((component.description + ": ").utf8)), "signature-base", "a base line does not start with \(component):\n\(base)")
            }
            Fuzz.require(
                baseLines.last.map { Array($0) } == Array(("\"@signature-params\": " + parameters).utf8), "signature-base",
                "the base does not end with the @signature-params line:\n\(base)")
        }
    }

    // MARK: Component identifiers and dictionaries

    /// `SignatureComponent(parsing:)`, as the CLI reads `--component`. Invariant: the
    /// identifier as the base writes it parses back equal.
    static func component(_ bytes: [UInt8]) {
        guard bytes.count <= 4096, let component = try? SignatureComponent(parsing: Fuzz.text(bytes)) else { return }
        let again = try? SignatureComponent(parsing: component.description)
        Fuzz.require(again == component, "signature-component", "\(component.description) does not parse back to the same component")
    }

    /// Signet's structured-dictionary parser against swift-http-structured-headers' (they
    /// must agree on every input: which they accept, and the members they return).
    static func dictionary(_ bytes: [UInt8]) {
        if let disagreement = HTTPFuzzing.dictionaryParserDisagreement(bytes) {
            Fuzz.require(false, "sf-dictionary", "\(disagreement) (input \(Fuzz.text(bytes).debugDescription))")
        }
    }
}
