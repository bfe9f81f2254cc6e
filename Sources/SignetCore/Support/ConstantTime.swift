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

    /// The same comparison for arrays, over their contiguous storage (the generic version
    /// walks two iterators and is an order of magnitude slower on hot paths).
    public static func equals(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        lhs.withUnsafeBytes { left in rhs.withUnsafeBytes { right in equals(left, right) } }
    }

    /// The same comparison over raw bytes in memory (a tag still in the buffer that made it).
    public static func equals(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for index in 0..<lhs.count { difference |= lhs[index] ^ rhs[index] }
        return difference == 0
    }
}
