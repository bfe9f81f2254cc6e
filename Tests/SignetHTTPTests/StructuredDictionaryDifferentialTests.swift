import RawStructuredFieldValues
@testable import SignetHTTP
import Testing

/// Holds ``StructuredDictionaryParser`` to swift-http-structured-headers' parser: for every
/// generated value and every byte-level mutation of one, both refuse, or both accept with
/// equal dictionaries. For values written without a fault, the duplicate-key flag is checked
/// against what the generator wrote. The seed is fixed, so a failure replays.
@Suite("structured-dictionary parser against the library")
struct StructuredDictionaryDifferentialTests {
    static let seed: UInt64 = 0x5167_6E65_7409_4210
    /// Generated values; each is checked as written and once mutated.
    static let samples = 20_000

    @Test("agrees with the library on generated and mutated values, and flags exactly the keys written twice")
    func differential() {
        var generator = StructuredDictionaryGenerator(seed: Self.seed)
        var tally = DifferentialTally()
        for _ in 0..<Self.samples {
            let sample = generator.sample()
            tally.check(sample.bytes, sample: sample)
            let mutated = generator.mutate(sample.bytes)
            tally.check(mutated, sample: nil)
        }
        for failure in tally.failures {
            Issue.record("\(failure)")
        }
        #expect(tally.disagreements == 0, "\(tally.disagreements) disagreements (the first \(tally.failures.count) are recorded)")

        let total = 2 * Self.samples
        #expect(tally.accepted + tally.refused + tally.disagreements == total)
        // Neither verdict may be rare, or the test would pass without testing much.
        #expect(tally.accepted * 5 >= total, "accepted \(tally.accepted) of \(total)")
        #expect(tally.refused * 5 >= total, "refused \(tally.refused) of \(total)")
        #expect(tally.cleanAccepted * 5 >= Self.samples, "values without a fault: \(tally.cleanAccepted) of \(Self.samples)")
        #expect(tally.cleanWithDuplicate * 20 >= tally.cleanAccepted, "with a key twice: \(tally.cleanWithDuplicate) of \(tally.cleanAccepted)")
        let kinds = [
            "integer", "decimal", "string", "token", "byte sequence", "boolean", "date", "display string", "inner list", "parameters",
        ]
        for kind in kinds {
            #expect(tally.kinds[kind, default: 0] >= 100, "accepted values had \(tally.kinds[kind, default: 0]) of \(kind)")
        }
    }
}

/// What the differential test saw.
struct DifferentialTally {
    var accepted = 0
    var refused = 0
    var disagreements = 0
    /// Values written without a fault (and not mutated) that both parsers accepted.
    var cleanAccepted = 0
    /// Of those, the ones with a key written twice.
    var cleanWithDuplicate = 0
    /// How often each bare item kind, inner lists and parameter lists appeared in accepted values.
    var kinds: [String: Int] = [:]
    /// The first disagreements, described.
    var failures: [String] = []

    mutating func check(_ bytes: [UInt8], sample: StructuredDictionaryGenerator.Sample?) {
        var parser = StructuredFieldValueParser(bytes)
        let library = try? parser.parseDictionaryFieldValue()
        let ours = try? StructuredDictionaryParser.parse(bytes)
        switch (library, ours) {
        case (nil, nil):
            refused += 1
        case let (expected?, actual?):
            accepted += 1
            record(expected)
            if actual.members != expected {
                fail("a different dictionary: \(actual.members.debugDescription), the library's \(expected.debugDescription)", bytes)
            }
            guard let sample, !sample.faulted else { return }
            cleanAccepted += 1
            if actual.duplicateKey { cleanWithDuplicate += 1 }
            // The oracle: the library keeps one member per key, the generator wrote keyCount.
            if actual.duplicateKey != (expected.count < sample.keyCount) {
                fail("duplicateKey \(actual.duplicateKey), but \(sample.keyCount) members were written and \(expected.count) remain", bytes)
            }
            if actual.duplicateKey != sample.reusedKey {
                fail("duplicateKey \(actual.duplicateKey), but the generator \(sample.reusedKey ? "did" : "did not") reuse a key", bytes)
            }
        case (nil, _?):
            fail("accepted, but the library refuses it", bytes)
        case (_?, nil):
            fail("refused, but the library accepts it", bytes)
        }
        if let sample, !sample.faulted, library == nil {
            fail("the library refuses a value the generator wrote without a fault (a generator bug)", bytes)
        }
    }

    private mutating func fail(_ what: String, _ bytes: [UInt8]) {
        disagreements += 1
        guard failures.count < 20 else { return }
        let hex = bytes.map { String($0, radix: 16) }.joined(separator: " ")
        failures.append("\(String(decoding: bytes, as: UTF8.self).debugDescription) [\(hex)]: \(what)")
    }

    private mutating func record(_ dictionary: OrderedMap<String, ItemOrInnerList>) {
        for (_, member) in dictionary {
            switch member {
            case .item(let item):
                record(item)
            case .innerList(let list):
                kinds["inner list", default: 0] += 1
                for item in list.bareInnerList { record(item) }
                record(list.rfc9651Parameters)
            }
        }
    }

    private mutating func record(_ item: Item) {
        record(item.rfc9651BareItem)
        record(item.rfc9651Parameters)
    }

    private mutating func record(_ parameters: OrderedMap<String, RFC9651BareItem>) {
        if !parameters.isEmpty { kinds["parameters", default: 0] += 1 }
        for (_, value) in parameters { record(value) }
    }

    private mutating func record(_ bareItem: RFC9651BareItem) {
        let kind: String
        switch bareItem {
        case .bool: kind = "boolean"
        case .integer: kind = "integer"
        case .decimal: kind = "decimal"
        case .string: kind = "string"
        case .token: kind = "token"
        case .undecodedByteSequence: kind = "byte sequence"
        case .date: kind = "date"
        case .displayString: kind = "display string"
        }
        kinds[kind, default: 0] += 1
    }
}
