/// Byte-level helpers for tampering tests.
public enum TestBytes {
    /// `bytes` with the lowest bit of the byte at `index` flipped.
    public static func flipped(_ bytes: [UInt8], at index: Int) -> [UInt8] {
        var copy = bytes
        copy[index] ^= 0x01
        return copy
    }
}
