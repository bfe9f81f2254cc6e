import HTTPTypes
import RawStructuredFieldValues
import SignetCore

extension HTTPField.Name {
    /// `Signature-Input` (RFC 9421 §4.1).
    public static let signatureInput = HTTPField.Name("Signature-Input")!
    /// `Signature` (RFC 9421 §4.2).
    public static let signature = HTTPField.Name("Signature")!
    /// `Accept-Signature` (RFC 9421 §5.1).
    public static let acceptSignature = HTTPField.Name("Accept-Signature")!
    /// `Content-Digest` (RFC 9530 §2).
    public static let contentDigest = HTTPField.Name("Content-Digest")!
}

/// The labelled signatures a message carries: each `Signature-Input` member with its
/// `Signature` member of the same label.
struct SignatureFields {
    /// One labelled signature. Its member values are checked one by one, so that another
    /// party's signature that Signet cannot read does not stop Signet from checking its own.
    struct Entry {
        let label: String
        let parsedInput: Result<SignatureInput, any Error>
        let parsedSignature: Result<[UInt8], any Error>

        var input: SignatureInput { get throws { try parsedInput.get() } }
        var signature: [UInt8] { get throws { try parsedSignature.get() } }
        /// The key id, when the input parses.
        var keyID: String? { try? parsedInput.get().parameters.keyID }
    }

    let entries: [Entry]

    /// Reads both fields, refusing oversized, malformed or unmatched ones.
    init(_ fields: HTTPFields, maximumFieldBytes: Int, maximumSignatures: Int) throws {
        if let scanned = Self.scanned(fields, maximumFieldBytes: maximumFieldBytes, maximumSignatures: maximumSignatures) {
            self.init(entries: scanned)
        } else {
            try self.init(general: fields, maximumFieldBytes: maximumFieldBytes, maximumSignatures: maximumSignatures)
        }
    }

    private init(entries: [Entry]) {
        self.entries = entries
    }

    /// Reads both fields with the general structured-field parser.
    init(general fields: HTTPFields, maximumFieldBytes: Int, maximumSignatures: Int) throws {
        let inputs = try Self.dictionary(fields, .signatureInput, limit: maximumFieldBytes, maximumMembers: maximumSignatures)
        let signatures = try Self.dictionary(fields, .signature, limit: maximumFieldBytes, maximumMembers: maximumSignatures)
        guard !inputs.isEmpty || !signatures.isEmpty else {
            throw HTTPSignatureError.missingSignature(detail: "the request has no Signature-Input and Signature fields")
        }
        guard inputs.count <= maximumSignatures else { throw HTTPSignatureError.tooLarge(what: "the number of signatures", limit: maximumSignatures) }
        var entries: [Entry] = []
        for (label, member) in inputs {
            guard let signatureMember = signatures[label] else {
                throw HTTPSignatureError.malformedField(field: "Signature", detail: "no signature labelled \(label)")
            }
            let signature: Result<[UInt8], any Error>
            if case .item(let item) = signatureMember, case .undecodedByteSequence(let text) = item.rfc9651BareItem,
                let bytes = Base64.decode(text), !bytes.isEmpty
            {
                signature = .success(bytes)
            } else {
                signature = .failure(HTTPSignatureError.malformedField(field: "Signature", detail: "\(label) must be a byte sequence (:base64:)"))
            }
            let input = Result<SignatureInput, any Error> { () throws in try SignatureInput(member: member, label: label) }
            entries.append(Entry(label: label, parsedInput: input, parsedSignature: signature))
        }
        for (label, _) in signatures where inputs[label] == nil {
            throw HTTPSignatureError.malformedField(field: "Signature-Input", detail: "no input labelled \(label)")
        }
        self.entries = entries
    }

    /// The entries of canonical one-line fields whose labels match one to one, read by
    /// ``SignatureFieldScanner``; nil sends everything else to the general parser (which also
    /// gives every refusal).
    static func scanned(_ fields: HTTPFields, maximumFieldBytes: Int, maximumSignatures: Int) -> [Entry]? {
        let inputValues = fields[values: .signatureInput]
        let signatureValues = fields[values: .signature]
        guard inputValues.count == 1, signatureValues.count == 1, inputValues[0].utf8.count <= maximumFieldBytes,
              signatureValues[0].utf8.count <= maximumFieldBytes,
              let inputs = SignatureFieldScanner.inputs(inputValues[0], limit: maximumSignatures),
              let signatures = SignatureFieldScanner.signatures(signatureValues[0], limit: maximumSignatures), signatures.count == inputs.count
        else { return nil }
        var entries: [Entry] = []
        entries.reserveCapacity(inputs.count)
        for input in inputs {
            guard let signature = signatures.first(where: { $0.label == input.label }) else { return nil }
            entries.append(Entry(label: input.label, parsedInput: .success(SignatureInput(scanned: input)), parsedSignature: .success(signature.bytes)))
        }
        return entries
    }

    /// Parses a dictionary field. Several lines of one field are one value (RFC 9110 §5.3);
    /// a label given twice, in one line or across lines, is refused rather than letting the
    /// last one win silently. ``StructuredDictionaryParser`` reports a repeated key from the
    /// parse itself, so no quoting trick (a display string's `\`) can hide one.
    /// More than `maximumMembers` labels in all is refused as soon as the parse meets one more,
    /// so a field of thousands of labels costs what `maximumMembers` cost.
    private static func dictionary(
        _ fields: HTTPFields, _ name: HTTPField.Name, limit: Int, maximumMembers: Int
    ) throws -> OrderedMap<String, ItemOrInnerList> {
        let values = fields[values: name]
        guard !values.isEmpty else { return [:] }
        let combined = values.joined(separator: ", ")
        guard combined.utf8.count <= limit else { throw HTTPSignatureError.tooLarge(what: "the \(name.canonicalName) field", limit: limit) }
        var labels = Set<String>()
        var result: OrderedMap<String, ItemOrInnerList> = [:]
        for value in values {
            let parsed: StructuredDictionaryParser.Parsed
            do {
                var limits = SignatureInput.parseLimits
                limits.members = maximumMembers - result.count
                parsed = try StructuredDictionaryParser.parse(value, limits: limits)
            } catch StructuredDictionaryParser.Failure.tooManyMembers {
                throw HTTPSignatureError.tooLarge(what: "the number of signatures", limit: maximumMembers)
            } catch StructuredDictionaryParser.Failure.innerListTooLong {
                throw HTTPSignatureError.tooLarge(what: "the number of components one signature covers", limit: SignatureInput.maximumComponents)
            } catch StructuredDictionaryParser.Failure.tooManyParameters {
                throw HTTPSignatureError.tooLarge(what: "the number of parameters of one component or signature", limit: SignatureInput.maximumParameters)
            } catch {
                throw HTTPSignatureError.malformedField(field: name.rawName, detail: "not a structured dictionary")
            }
            if let repeated = parsed.repeatedKey {
                throw HTTPSignatureError.malformedField(field: name.rawName, detail: "the label \(repeated) appears twice")
            }
            for (label, member) in parsed.entries {
                guard labels.insert(label).inserted else {
                    throw HTTPSignatureError.malformedField(field: name.rawName, detail: "the label \(label) appears twice")
                }
                result[label] = member
            }
        }
        return result
    }

    /// The labels of the signatures a message already has: none if its field is damaged, over
    /// `maximumFieldBytes`, or names more than `maximumSignatures` (what a verifier would refuse
    /// to read, so that nobody signs over more than a verifier checks).
    static func labels(in fields: HTTPFields, maximumSignatures: Int, maximumFieldBytes: Int) -> Set<String> {
        guard let inputs = try? dictionary(fields, .signatureInput, limit: maximumFieldBytes, maximumMembers: maximumSignatures) else { return [] }
        return Set(inputs.map(\.0))
    }
}

extension HTTPFields {
    /// The labels of the message's `Signature-Input` field: what a response signature names to
    /// cover a request's signature (`"signature";req;key=LABEL`). None when the field does not
    /// parse or is more than a verifier with the default ``HTTPSignaturePolicy`` reads.
    public var signatureLabels: Set<String> {
        let policy = HTTPSignaturePolicy()
        return signatureLabels(maximumSignatures: policy.maximumSignatures, maximumFieldBytes: policy.maximumFieldBytes)
    }

    /// The labels of the message's `Signature-Input` field, none when it does not parse, is
    /// over `maximumFieldBytes` or names more than `maximumSignatures` signatures.
    public func signatureLabels(maximumSignatures: Int, maximumFieldBytes: Int) -> Set<String> {
        SignatureFields.labels(in: self, maximumSignatures: maximumSignatures, maximumFieldBytes: maximumFieldBytes)
    }
}
