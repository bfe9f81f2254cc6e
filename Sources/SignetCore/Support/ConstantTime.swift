/// Comparisons whose running time does not depend on where inputs differ.
public enum ConstantTime {
    /// Compares two byte sequences in time that depends only on their lengths.
    ///
    /// Use it for every comparison that involves a secret or a value an attacker is trying to
    /// guess (MAC tags, tokens). Lengths are not secret and are compared first.
    public static func equals<A: Collection, B: Collection>(_ lhs: A, _ rhs: B) -> Bool
    where A.Element == UInt8, B.Element == UInt8 {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for (left, right) in zip(lhs, rhs) {
            difference |= left ^ right
        }
        return difference == 0
    }
}
