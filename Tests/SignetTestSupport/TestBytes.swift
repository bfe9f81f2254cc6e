/// Byte-level helpers for tampering tests.
public enum TestBytes {
    /// `bytes` with the lowest bit of the byte at `index` flipped.
    public static func flipped(_ bytes: [UInt8], at index: Int) -> [UInt8] {
        var copy = bytes
        copy[index] ^= 0x01
        return copy
    }

    /// `count` bytes from SplitMix64 seeded with `seed`: incompressible, and the same every run.
    public static func random(count: Int, seed: UInt64) -> [UInt8] {
        var generator = SplitMix64(seed: seed)
        var bytes = [UInt8](repeating: 0, count: count)
        bytes.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                var word = generator.next()
                let take = min(8, buffer.count - offset)
                withUnsafeBytes(of: &word) { buffer.baseAddress!.advanced(by: offset).copyMemory(from: $0.baseAddress!, byteCount: take) }
                offset += take
            }
        }
        return bytes
    }
}
