/// Constants and little-endian helpers of the zip format (APPNOTE.TXT 6.3), the part that
/// bundles use: stored entries, UTF-8 names, ZIP64 for large sizes and offsets.
enum ZipFormat {
    static let localHeaderSignature: UInt32 = 0x0403_4B50
    static let centralHeaderSignature: UInt32 = 0x0201_4B50
    static let endSignature: UInt32 = 0x0605_4B50
    static let zip64EndSignature: UInt32 = 0x0606_4B50
    static let zip64LocatorSignature: UInt32 = 0x0706_4B50
    static let zip64ExtraID: UInt16 = 0x0001
    static let utf8Flag: UInt16 = 0x0800
    static let localHeaderSize = 30
    static let centralHeaderSize = 46
    static let endSize = 22
    static let zip64EndSize = 56
    static let zip64LocatorSize = 20
    /// DOS date of 1980-01-01: entries carry no times, so a bundle is reproducible.
    static let dosDate: UInt16 = 0x0021
    static let unixMadeBy: UInt16 = (3 << 8) | 45
}

/// Appends little-endian integers.
struct LittleEndianWriter {
    var bytes: [UInt8] = []

    mutating func u16(_ value: UInt16) { bytes.append(contentsOf: [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8)]) }
    mutating func u32(_ value: UInt32) { for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> shift)) } }
    mutating func u64(_ value: UInt64) { for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> shift)) } }
    mutating func append(_ other: [UInt8]) { bytes.append(contentsOf: other) }
}

/// Reads little-endian integers from a byte array, never past its end.
struct LittleEndianReader {
    let bytes: [UInt8]
    var position: Int

    init(_ bytes: [UInt8], at position: Int = 0) {
        self.bytes = bytes
        self.position = position
    }

    var remaining: Int { bytes.count - position }

    mutating func u16() -> UInt16? {
        guard remaining >= 2 else { return nil }
        defer { position += 2 }
        return UInt16(bytes[position]) | UInt16(bytes[position + 1]) << 8
    }

    mutating func u32() -> UInt32? {
        guard remaining >= 4 else { return nil }
        defer { position += 4 }
        return (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[position + $1]) << (8 * $1) }
    }

    mutating func u64() -> UInt64? {
        guard remaining >= 8 else { return nil }
        defer { position += 8 }
        return (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[position + $1]) << (8 * $1) }
    }

    mutating func take(_ count: Int) -> [UInt8]? {
        guard count >= 0, remaining >= count else { return nil }
        defer { position += count }
        return Array(bytes[position..<position + count])
    }
}
