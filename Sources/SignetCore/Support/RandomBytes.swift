/// Random bytes from the system's cryptographically secure generator (`getrandom` on Linux),
/// for salts, nonces and new key files.
public enum RandomBytes {
    /// `count` random bytes.
    public static func make(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        var bytes = [UInt8](repeating: 0, count: count)
        var index = 0
        while index < count {
            var word = generator.next() as UInt64
            for _ in 0..<min(8, count - index) {
                bytes[index] = UInt8(truncatingIfNeeded: word)
                word >>= 8
                index += 1
            }
        }
        return bytes
    }
}
