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
}
