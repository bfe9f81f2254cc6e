extension UserInput {
    /// A set of Unicode scripts: those a character may be written with (its Script_Extensions,
    /// augmented as UTS #39 §5.1 says), or those a whole string shares.
    ///
    /// A string is single-script when the intersection over its characters is not empty; Common
    /// and Inherited characters (digits, `-`, combining accents) belong to every script. The
    /// augmented sets make Han + Hiragana + Katakana one script (Japanese), Han + Hangul another
    /// (Korean) and Han + Bopomofo a third. The data is UserInput+ScriptTable.swift, made by
    /// Scripts/generate-unicode-tables.
    struct ScriptSet: Equatable, Sendable {
        var low: UInt64
        var middle: UInt64
        var high: UInt64

        /// Every script: what Common and Inherited characters belong to.
        static let all = ScriptSet(low: .max, middle: .max, high: .max)

        var isEmpty: Bool { low == 0 && middle == 0 && high == 0 }

        func intersection(_ other: ScriptSet) -> ScriptSet {
            ScriptSet(low: low & other.low, middle: middle & other.middle, high: high & other.high)
        }

        /// The first script of the set, for messages ("Latin", "Cyrillic").
        var name: String {
            let index: Int
            if low != 0 {
                index = low.trailingZeroBitCount
            } else if middle != 0 {
                index = 64 + middle.trailingZeroBitCount
            } else {
                index = 128 + high.trailingZeroBitCount
            }
            return index < Self.names.count ? Self.names[index] : "no script"
        }

        /// The scripts `scalar` may be written with; nil for a code point the table's Unicode
        /// version leaves unassigned (or private use, or newer than the table).
        static func of(_ scalar: Unicode.Scalar) -> ScriptSet? {
            let value = UInt64(scalar.value)
            // The first range that starts after `value`; the one before it may hold `value`.
            var lower = 0
            var upper = ranges.count
            while lower < upper {
                let probe = (lower + upper) / 2
                if ranges[probe] >> 32 <= value {
                    lower = probe + 1
                } else {
                    upper = probe
                }
            }
            guard lower > 0 else { return nil }
            let range = ranges[lower - 1]
            guard (range >> 8) & 0xFF_FFFF >= value else { return nil }
            let word = Int(range & 0xFF) * 3
            return ScriptSet(low: words[word], middle: words[word + 1], high: words[word + 2])
        }

        /// The first letter of `unit` when every one of its letters (its characters of one
        /// script, not Common or Inherited) is a Cyrillic or Greek letter with a Latin look-alike
        /// ("асе" reads as "ace"), else nil: a whole-script confusable.
        static func latinLookAlike(_ unit: ArraySlice<Unicode.Scalar>) -> Unicode.Scalar? {
            let letters = unit.filter { Self.of($0) != ScriptSet.all }
            guard let first = letters.first, letters.allSatisfy({ latinLookAlikes.contains($0) }) else { return nil }
            return first
        }

        /// Lower-case Cyrillic and Greek letters that Unicode's confusables.txt (UTS #39) maps
        /// to a single lower-case ASCII letter, chosen by hand from it; upper-case ones never
        /// reach the check, since addresses are lower-cased first. A short list, not the whole
        /// skeleton mapping: it catches "аррӏе" for "apple", not every look-alike.
        static let latinLookAlikes: Set<Unicode.Scalar> = [
            // Cyrillic: а с ԁ е ҽ г һ і ꙇ ӏ ј о р ԛ ѕ ѵ ѡ ԝ х у ү
            "\u{0430}", "\u{0441}", "\u{0501}", "\u{0435}", "\u{04BD}", "\u{0433}", "\u{04BB}", "\u{0456}",
            "\u{A647}", "\u{04CF}", "\u{0458}", "\u{043E}", "\u{0440}", "\u{051B}", "\u{0455}", "\u{0475}",
            "\u{0461}", "\u{051D}", "\u{0445}", "\u{0443}", "\u{04AF}",
            // Greek: α ϲ ι ϳ ο σ ρ ϱ υ ν γ
            "\u{03B1}", "\u{03F2}", "\u{03B9}", "\u{03F3}", "\u{03BF}", "\u{03C3}", "\u{03C1}", "\u{03F1}",
            "\u{03C5}", "\u{03BD}", "\u{03B3}",
        ]
    }
}
