/// SplitMix64 (Steele, Lea and Flood, 2014): a tiny seedable generator that gives the same
/// sequence everywhere, so a failing input replays from the seed.
public struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    /// A generator that starts from `seed`.
    public init(seed: UInt64) {
        state = seed
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in 0..<bound.
    public mutating func below(_ bound: Int) -> Int {
        Int(next() % UInt64(bound))
    }

    /// True `percent` times in a hundred.
    public mutating func chance(_ percent: Int) -> Bool {
        below(100) < percent
    }

    /// One of `options`.
    public mutating func pick<T>(_ options: [T]) -> T {
        options[below(options.count)]
    }

    /// `count` decimal digits (leading zeros included).
    public mutating func digits(_ count: Int) -> String {
        var out = ""
        for _ in 0..<count { out.append(Character(Unicode.Scalar(UInt8(48 + below(10))))) }
        return out
    }

    /// A number of digits picked from `counts`, then that many digits.
    public mutating func digits(among counts: [Int]) -> String {
        let count = pick(counts)
        return digits(count)
    }

    /// Fewer than `limit` pieces, each picked from `units`.
    public mutating func string(from units: [String], fewerThan limit: Int) -> String {
        let count = below(limit)
        var out = ""
        for _ in 0..<count { out += pick(units) }
        return out
    }

    /// `text` with `piece` inserted at a random character position.
    public mutating func inserting(_ piece: String, into text: String) -> String {
        let offset = below(text.count + 1)
        var out = text
        let position = out.index(out.startIndex, offsetBy: offset)
        out.insert(contentsOf: piece, at: position)
        return out
    }
}
