import HTTPTypes
import RawStructuredFieldValues

/// Entry points for the libFuzzer targets (`SignetFuzzTargets`) into what the verifier reads
/// from a message before any key is involved: the `Signature-Input` and `Signature` fields.
/// Not API: `package`, for the fuzz targets and their replay tests only.
package enum HTTPFuzzing {
    /// One labelled signature as the verifier reads it.
    package struct ParsedSignature: Sendable {
        package let label: String
        package let input: Result<SignatureInput, any Error>
        package let signature: Result<[UInt8], any Error>
    }

    /// Reads the `Signature-Input` and `Signature` fields of `fields` as
    /// ``HTTPMessageVerifier`` does, with `policy`'s size limits.
    package static func signatures(in fields: HTTPFields, policy: HTTPSignaturePolicy = .default) throws -> [ParsedSignature] {
        let parsed = try SignatureFields(fields, maximumFieldBytes: policy.maximumFieldBytes, maximumSignatures: policy.maximumSignatures)
        return parsed.entries.map { entry in
            ParsedSignature(
                label: entry.label,
                input: Result { () throws -> SignatureInput in try entry.input },
                signature: Result { () throws -> [UInt8] in try entry.signature })
        }
    }

    /// Where ``SignatureFieldScanner`` (the fast path for canonical fields) and the general
    /// reader disagree about `fields`: the scanner may decline anything, but what it accepts the
    /// general reader must read to the same labels, components, parameters, `@signature-params`
    /// serialisation and signature bytes. Nil when they agree.
    package static func scannerDisagreement(_ fields: HTTPFields, policy: HTTPSignaturePolicy = .default) -> String? {
        guard let scanned = SignatureFields.scanned(fields, maximumFieldBytes: policy.maximumFieldBytes, maximumSignatures: policy.maximumSignatures) else {
            return nil
        }
        let general: SignatureFields
        do {
            general = try SignatureFields(general: fields, maximumFieldBytes: policy.maximumFieldBytes, maximumSignatures: policy.maximumSignatures)
        } catch {
            return "the scanner accepts what the general reader refuses: \(error)"
        }
        guard scanned.count == general.entries.count else { return "\(scanned.count) signatures scanned, \(general.entries.count) read" }
        for (fast, slow) in zip(scanned, general.entries) {
            guard fast.label == slow.label else { return "labels \(fast.label) and \(slow.label)" }
            guard let fastInput = try? fast.input, let slowInput = try? slow.input else { return "\(fast.label): the general reader refuses the input" }
            guard fastInput == slowInput else { return "\(fast.label): inputs differ: \(fastInput) and \(slowInput)" }
            guard fastInput.components.map(\.description) == slowInput.components.map(\.description) else {
                return "\(fast.label): components are written differently"
            }
            guard (try? fastInput.serializedParameters()) == (try? slowInput.serializedParameters()) else {
                return "\(fast.label): @signature-params differ: \((try? fastInput.serializedParameters()) ?? "-") and \((try? slowInput.serializedParameters()) ?? "-")"
            }
            guard (try? fast.signature) == (try? slow.signature) else { return "\(fast.label): signature bytes differ" }
        }
        return nil
    }

    /// The labels of the `Signature-Input` field of `fields` (none when it does not parse),
    /// as the signer reads them.
    package static func labels(in fields: HTTPFields) -> Set<String> {
        SignatureFields.labels(in: fields, maximumSignatures: .max, maximumFieldBytes: .max)
    }

    /// Where Signet's structured-dictionary parser and swift-http-structured-headers' parser
    /// disagree about `bytes` (which one accepts, or the members they return); nil when they
    /// agree, as they must.
    package static func dictionaryParserDisagreement(_ bytes: [UInt8]) -> String? {
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
