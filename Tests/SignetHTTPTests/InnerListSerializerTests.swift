import RawStructuredFieldValues
import Testing
@testable import SignetHTTP

/// The specialised `@signature-params` serializer must write exactly what the library writes,
/// for every inner list of the structured-dictionary corpus it does not leave to the library.
@Suite("inner-list serializer against the library")
struct InnerListSerializerTests {
    static func library(_ list: InnerList) -> String? {
        var serializer = StructuredFieldValueSerializer()
        return (try? serializer.writeListFieldValue([.innerList(list)])).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test("over generated inner lists: the same bytes as the library, or left to it")
    func differential() {
        var generator = StructuredDictionaryGenerator(seed: 0x5E51_7A11)
        var compared = 0
        var leftToLibrary = 0
        for _ in 0..<20_000 {
            let sample = generator.sample()
            guard let parsed = try? StructuredDictionaryParser.parse(sample.bytes) else { continue }
            for (_, member) in parsed.members {
                guard case .innerList(let list) = member else { continue }
                guard let fast = InnerListSerializer.serialize(list) else {
                    leftToLibrary += 1
                    continue
                }
                compared += 1
                #expect(fast == Self.library(list), "\(String(decoding: sample.bytes, as: UTF8.self))")
            }
        }
        #expect(compared > 2_000, "compared \(compared)")
        #expect(leftToLibrary > 100, "left to the library \(leftToLibrary)")
    }

    @Test("values the library refuses are left to it")
    func refusals() {
        let none = OrderedMap<String, RFC9651BareItem>()
        func list(_ item: RFC9651BareItem) -> InnerList {
            InnerList(bareInnerList: [Item(bareItem: item, parameters: none)], parameters: none)
        }
        #expect(InnerListSerializer.serialize(list(RFC9651BareItem.string("caf\u{E9}"))) == nil)
        #expect(InnerListSerializer.serialize(list(RFC9651BareItem.token("9abc"))) == nil)
        var big = none
        big["created"] = RFC9651BareItem.integer(1_000_000_000_000_000)
        #expect(InnerListSerializer.serialize(InnerList(bareInnerList: BareInnerList(), parameters: big)) == nil)
        var parameters = none
        parameters["created"] = RFC9651BareItem.integer(1)
        parameters["keyid"] = RFC9651BareItem.string("k\"1")
        let ok = InnerList(bareInnerList: [Item(bareItem: RFC9651BareItem.string("@method"), parameters: none)], parameters: parameters)
        #expect(InnerListSerializer.serialize(ok) == #"("@method");created=1;keyid="k\"1""#)
        #expect(InnerListSerializer.serialize(ok) == Self.library(ok))
    }
}
