import SignetTestSupport

/// Writes RFC 9651 dictionary field values from the grammar — every bare item kind,
/// inner lists, parameters, keys given twice, OWS — and, in some inputs, faults (values at
/// and just past the limits, bad escapes, bad hex, invalid UTF-8, tabs where only spaces
/// may be, trailing commas). An input without a fault is valid by construction; of an
/// input with one nothing is claimed.
struct StructuredDictionaryGenerator {
    /// One generated field value.
    struct Sample {
        var bytes: [UInt8]
        /// How many top-level members were written (keys given twice counted each time).
        var keyCount: Int
        /// Whether a top-level key was written more than once.
        var reusedKey: Bool
        /// Whether a fault was written (the value may or may not be valid).
        var faulted: Bool
    }

    private var rng: SplitMix64
    /// The chance in percent that each piece of the current input is faulty.
    private var faultRate = 0
    private var faulted = false

    init(seed: UInt64) {
        rng = SplitMix64(seed: seed)
    }

    mutating func sample() -> Sample {
        faultRate = rng.chance(50) ? 0 : rng.pick([3, 6, 12])
        faulted = false
        var out = fault() ? rng.pick(["\t", " \t", ","]) : rng.pick(["", "", " ", "  "])
        let count = rng.pick([0, 1, 1, 2, 2, 3, 3, 4, 5])
        var keys: [String] = []
        for position in 0..<count {
            if position > 0 { out += separator() }
            let name = key(pool: ["sig1", "sig2", "sig1", "a", "b", "*", "*k", "k*", "a-b", "a_b", "a.b", "x9"])
            keys.append(name)
            out += member(name)
        }
        if fault() {
            out += rng.pick([",", ", ", "\t,", ",\t", "\u{0}", "\n", " x"])
        } else {
            // Trailing OWS is eaten by the member loop; with no member, only spaces are stripped.
            out += count == 0 ? rng.pick(["", " "]) : rng.pick(["", "", " ", "\t", " \t", "\t "])
        }
        return Sample(bytes: Array(out.utf8), keyCount: count, reusedKey: Set(keys).count < keys.count, faulted: faulted)
    }

    /// `bytes` with one to three bytes inserted, deleted or replaced.
    mutating func mutate(_ bytes: [UInt8]) -> [UInt8] {
        let alphabet = Array(" \t,;=()\"\\%:?@*-.019afzAFZ/!".utf8) + [0x00, 0x0A, 0x7F, 0xC3, 0xA9, 0xFF]
        var out = bytes
        let mutations = 1 + rng.below(3)
        for _ in 0..<mutations {
            let operation = out.isEmpty ? 0 : rng.below(3)
            let byte = rng.pick(alphabet)
            let position = rng.below(operation == 0 ? out.count + 1 : out.count)
            switch operation {
            case 0: out.insert(byte, at: position)
            case 1: out.remove(at: position)
            default: out[position] = byte
            }
        }
        return out
    }

    private mutating func fault() -> Bool {
        guard faultRate > 0, rng.below(100) < faultRate else { return false }
        faulted = true
        return true
    }

    private mutating func separator() -> String {
        if fault() { return rng.pick([" ", ";", ",,", ", ,", "", "\n", ",\u{0}"]) }
        let ows = ["", "", " ", "\t", "  ", " \t "]
        return rng.pick(ows) + "," + rng.pick(ows)
    }

    private mutating func key(pool: [String]) -> String {
        fault() ? rng.pick(["A", "Sig1", "1a", "-a", "_a", ".a", "", "\u{e9}"]) : rng.pick(pool)
    }

    private mutating func member(_ name: String) -> String {
        switch rng.below(10) {
        case 0, 1: return name + parameters()  // a bare key: true
        case 2, 3, 4: return name + "=" + innerList()
        default: return name + "=" + item()
        }
    }

    private mutating func item() -> String {
        bareItem() + parameters()
    }

    private mutating func innerList() -> String {
        var out = "(" + rng.pick(["", "", " ", "  "])
        let count = rng.below(4)
        for position in 0..<count {
            if position > 0 { out += fault() ? rng.pick(["\t", ",", "", " \t"]) : rng.pick([" ", " ", "  "]) }
            out += fault() ? rng.pick(["(1)", "()", "(a b)"]) + parameters() : item()
        }
        if count > 0 { out += rng.pick(["", "", " "]) }
        out += fault() ? rng.pick(["", " ", "\t)", ",)"]) : ")"
        return out + parameters()
    }

    private mutating func parameters() -> String {
        var out = ""
        for _ in 0..<rng.pick([0, 0, 0, 1, 1, 2, 3]) {
            out += fault() ? rng.pick([" ;", ";\t", "; ;"]) : ";" + rng.pick(["", "", " "])
            out += key(pool: ["p", "q", "created", "keyid", "*x", "p"])
            if rng.chance(60) { out += "=" + (fault() ? rng.pick(["", "(1)", "()", ";"]) : bareItem()) }
        }
        return out
    }

    private mutating func sign() -> String {
        rng.chance(25) ? "-" : ""
    }

    // MARK: - Bare items

    private mutating func bareItem() -> String {
        let isFaulty = fault()
        switch rng.below(9) {
        case 0: return isFaulty ? faultyInteger() : sign() + rng.digits(among: [1, 1, 2, 3, 4, 9, 10, 14, 15, 15])
        case 1: return isFaulty ? faultyDecimal() : decimal(integerDigits: [1, 2, 5, 11, 12, 12], fractionDigits: [1, 2, 3])
        case 2: return string(isFaulty)
        case 3: return isFaulty ? rng.pick(["1tok", "tok\u{e9}", "(tok", "tok\"x\""]) : token()
        case 4: return isFaulty ? rng.pick([":ab*c:", ":abc", ":a-b:", ": :", ":\u{e9}:"]) : byteSequence()
        case 5: return isFaulty ? rng.pick(["?2", "?", "?t", "?01"]) : rng.pick(["?0", "?1"])
        case 6: return isFaulty ? faultyDate() : "@" + sign() + rng.digits(among: [1, 4, 10, 15])
        case 7: return displayString(isFaulty)
        default: return isFaulty ? rng.pick(["", "-", "=", ")", "\u{e9}"]) : token()
        }
    }

    /// An optional "-", digits, ".", digits (the counts picked from the lists).
    private mutating func decimal(integerDigits: [Int], fractionDigits: [Int]) -> String {
        let minus = sign()
        let integer = rng.digits(among: integerDigits)
        let fraction = rng.digits(among: fractionDigits)
        return minus + integer + "." + fraction
    }

    private mutating func faultyInteger() -> String {
        switch rng.below(4) {
        case 0: return sign() + rng.digits(among: [16, 17])
        case 1: return rng.pick(["-", "--1", "-a", "- 1"])
        case 2: return rng.digits(among: [1, 15]) + rng.pick(["a", "\u{e9}", "\t"])
        default: return decimal(integerDigits: [16], fractionDigits: [1])
        }
    }

    private mutating func faultyDecimal() -> String {
        switch rng.below(4) {
        case 0: return decimal(integerDigits: [13, 14], fractionDigits: [1, 2, 3])
        case 1: return decimal(integerDigits: [1, 12], fractionDigits: [0, 4, 5])
        case 2: return rng.pick(["1.2.3", ".5", "-.5", "1..2"])
        default: return decimal(integerDigits: [12], fractionDigits: [3]) + rng.digits(1)
        }
    }

    private mutating func faultyDate() -> String {
        switch rng.below(3) {
        case 0: return "@" + rng.digits(16)
        case 1: return "@" + decimal(integerDigits: [1, 3], fractionDigits: [1, 2])
        default: return rng.pick(["@1.5", "@", "@x", "@-", "@@1", "@ 1"])
        }
    }

    private mutating func token() -> String {
        let rest = ["a", "Z", "0", "9", "!", "#", "$", "%", "&", "'", "*", "+", "-", ".", "^", "_", "`", "|", "~", ":", "/"]
        return rng.pick(["a", "Z", "*", "tok", "T"]) + rng.string(from: rest, fewerThan: 6)
    }

    private mutating func byteSequence() -> String {
        ":" + rng.string(from: ["A", "z", "0", "9", "+", "/", "=", "YQ==", "AAAA"], fewerThan: 6) + ":"
    }

    /// A string; a faulty one has a bad escape, a forbidden byte, or no closing quote.
    private mutating func string(_ isFaulty: Bool) -> String {
        // Escaped: \" and \\ (and %\" and \\\" built from them).
        let units = ["a", "Z", "0", " ", ",", ";", "=", "(", ")", "%", "@", "~", ":", "'", "\\\"", "\\\\", "%\\\"", "\\\\\\\""]
        let body = rng.string(from: units, fewerThan: 6)
        guard isFaulty else { return "\"" + body + "\"" }
        if rng.chance(25) { return "\"" + body }
        let bad = rng.pick(["\\x", "\\", "\t", "\u{7F}", "\u{e9}", "\u{1}", "\\'"])
        return "\"" + rng.inserting(bad, into: body) + "\""
    }

    /// A display string: printable ASCII but `%` and `"` (a backslash is ordinary), and
    /// lower-case %xx sequences that make valid UTF-8; a faulty one breaks one of those rules.
    private mutating func displayString(_ isFaulty: Bool) -> String {
        let units = [
            "a", "Z", "0", " ", "\\", "\\\\", "'", ",", ";", "=", "(", ")", "@", "~", "{",
            "%c3%a9", "%e2%82%ac", "%f0%9f%98%80", "%25", "%22", "%41", "%00", "%7f", "%5c",
        ]
        let body = rng.string(from: units, fewerThan: 5)
        guard isFaulty else { return "%\"" + body + "\"" }
        switch rng.below(6) {
        case 0: return "%\"" + body
        case 1: return "%" + rng.pick(["abc", "'x'", " \"x\"", ""])
        default:
            let bad = rng.pick(["%C3%A9", "%ff", "%c3", "%ed%a0%80", "%c0%80", "%g1", "%4", "%", "\t", "\u{e9}", "\u{7F}", "%A0"])
            return "%\"" + rng.inserting(bad, into: body) + "\""
        }
    }
}
