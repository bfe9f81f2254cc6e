import HTTPTypes
import RawStructuredFieldValues

/// Entry points for the libFuzzer targets (`SignetFuzzTargets`) into what the verifier reads
/// from a message before any key is involved: the `Signature-Input` and `Signature` fields.
/// Not API: `@_spi(Fuzzing)`, for the fuzz targets and their replay tests only.
@_spi(Fuzzing) public enum HTTPFuzzing {
    /// One labelled signature as the verifier reads it.
    public struct ParsedSignature: Sendable {
        public let label: String
        public let input: Result<SignatureInput, HTTPSignatureError>
        public let signature: Result<[UInt8], HTTPSignatureError>
    }

    /// Reads the `Signature-Input` and `Signature` fields of `fields` as
    /// ``HTTPMessageVerifier`` does, with `policy`'s size limits.
    public static func signatures(in fields: HTTPFields, policy: HTTPSignaturePolicy = .default) throws(HTTPSignatureError) -> [ParsedSignature] {
        let parsed = try SignatureFields(fields, maximumFieldBytes: policy.maximumFieldBytes, maximumSignatures: policy.maximumSignatures)
        return parsed.entries.map { entry in
            ParsedSignature(
                label: entry.label,
                input: Result { () throws(HTTPSignatureError) -> SignatureInput in try entry.input },
                signature: Result { () throws(HTTPSignatureError) -> [UInt8] in try entry.signature })
        }
    }

    /// The labels of the `Signature-Input` field of `fields` (none when it does not parse),
    /// as the signer reads them.
    public static func labels(in fields: HTTPFields) -> Set<String> {
        SignatureFields.labels(in: fields)
    }

    /// Where Signet's structured-dictionary parser and swift-http-structured-headers' parser
    /// disagree about `bytes` (which one accepts, or the members they return); nil when they
    /// agree, as they must.
    public static func dictionaryParserDisagreement(_ bytes: [UInt8]) -> String? {
        let ours = try? StructuredDictionaryParser.parse(bytes)
        var parser = StructuredFieldValueParser(bytes)
        let library = try? parser.parseDictionaryFieldValue()
        switch (ours, library) {
        case (nil, nil):
            return nil
        case (let ours?, let library?):
            return ours.members == library ? nil : "the parsers return different members: \(ours.members) and \(library)"
        case (nil, let library?):
            return "StructuredDictionaryParser refuses what the library accepts as \(library)"
        case (let ours?, nil):
            return "StructuredDictionaryParser accepts as \(ours.members) what the library refuses"
        }
    }
}
