import RawStructuredFieldValues

extension StructuredDictionaryParser {
    /// How much one parse may take: members of the dictionary, items of an inner list,
    /// parameters of one item or inner list. Unlimited unless the caller says; a parse past a
    /// limit stops where it passes it, so refusing a field of thousands costs no more than the
    /// limit (the library's map is a list searched on each insertion).
    struct Limits: Sendable {
        var members = Int.max
        var innerListItems = Int.max
        var parameters = Int.max

        static let none = Limits()
    }

    /// A parsed dictionary.
    struct Parsed {
        /// The members in order, each key once (a repeated key's value replaced in place).
        var entries: [(key: String, value: ItemOrInnerList)]
        /// The members as the library's parser returns them. Built on each use, in time
        /// quadratic in their number (the library's map searches on every insertion, unspecialised):
        /// for the few members of a signature field; look members of a large field up through
        /// ``lookup``.
        var members: OrderedMap<String, ItemOrInnerList> {
            var map = OrderedMap<String, ItemOrInnerList>()
            for (key, value) in entries { map[key] = value }
            return map
        }
        /// The members by key, for constant-time look-ups.
        var lookup: [String: ItemOrInnerList] {
            Dictionary(entries.map { ($0.key, $0.value) }, uniquingKeysWith: { _, last in last })
        }
        /// The first top-level key that appeared more than once (its last value is the one kept).
        var repeatedKey: String?
        /// Whether some top-level key appeared more than once.
        var duplicateKey: Bool { repeatedKey != nil }
    }
}
