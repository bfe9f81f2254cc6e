import Foundation

/// Writes tar archives block by block: ustar headers with a correct checksum unless one is
/// given, pax and GNU long-name entries, and the end marker.
struct TarBuilder {
    static let posix: [UInt8] = Array("ustar\u{0}00".utf8)
    static let gnu: [UInt8] = Array("ustar  \u{0}".utf8)
    static let end = zeros(1024)

    static func zeros(_ count: Int) -> [UInt8] { [UInt8](repeating: 0, count: count) }

    /// `value` in octal, zero-filled to `width - 1` digits and a NUL.
    static func octal(_ value: Int, width: Int) -> [UInt8] {
        let digits = String(value, radix: 8)
        return Array((String(repeating: "0", count: max(0, width - 1 - digits.count)) + digits).utf8) + [0]
    }

    static func header(
        _ name: String, type: Unicode.Scalar = "0", size: Int = 0, sizeField: [UInt8]? = nil, prefix: String = "",
        linkName: String = "", magic: [UInt8] = TarBuilder.posix, checksum: [UInt8]? = nil
    ) -> [UInt8] {
        var block = zeros(512)
        func put(_ field: [UInt8], at offset: Int) { block.replaceSubrange(offset..<(offset + field.count), with: field) }
        precondition(name.utf8.count <= 100 && prefix.utf8.count <= 155 && linkName.utf8.count <= 100)
        put(Array(name.utf8), at: 0)
        put(octal(0o644, width: 8), at: 100)
        put(octal(0, width: 8), at: 108)
        put(octal(0, width: 8), at: 116)
        put(sizeField ?? octal(size, width: 12), at: 124)
        put(octal(1_700_000_000, width: 12), at: 136)
        block[156] = UInt8(ascii: type)
        put(Array(linkName.utf8), at: 157)
        put(magic, at: 257)
        put(Array(prefix.utf8), at: 345)
        let sum = block.enumerated().reduce(0) { total, byte in total + ((148..<156).contains(byte.offset) ? 32 : Int(byte.element)) }
        put(checksum ?? octal(sum, width: 7) + [32], at: 148)
        return block
    }

    static func padded(_ data: [UInt8]) -> [UInt8] { data + zeros((512 - data.count % 512) % 512) }

    static func file(_ name: String, _ text: String, type: Unicode.Scalar = "0", prefix: String = "", magic: [UInt8] = TarBuilder.posix) -> [UInt8] {
        file(name, Array(text.utf8), type: type, prefix: prefix, magic: magic)
    }

    static func file(_ name: String, _ data: [UInt8], type: Unicode.Scalar = "0", prefix: String = "", magic: [UInt8] = TarBuilder.posix) -> [UInt8] {
        header(name, type: type, size: data.count, prefix: prefix, magic: magic) + padded(data)
    }

    /// One pax record, `LENGTH key=value\n`, LENGTH counting itself.
    static func record(_ key: String, _ value: String) -> [UInt8] {
        let rest = " \(key)=\(value)\n".utf8.count
        var length = rest
        while String(length).count + rest != length { length = String(length).count + rest }
        return Array("\(length) \(key)=\(value)\n".utf8)
    }

    static func pax(_ records: [(String, String)], type: Unicode.Scalar = "x") -> [UInt8] {
        paxRaw(Array(records.map { record($0.0, $0.1) }.joined()), type: type)
    }

    static func paxRaw(_ body: [UInt8], type: Unicode.Scalar = "x") -> [UInt8] {
        header("PaxHeaders/entry", type: type, size: body.count) + padded(body)
    }

    static func longName(_ name: String) -> [UInt8] {
        let body = Array(name.utf8) + [0]
        return header("././@LongLink", type: "L", size: body.count, magic: gnu) + padded(body)
    }

    static func join(_ parts: [UInt8]...) -> [UInt8] { Array(parts.joined()) }

    /// The parts, then the end marker (two zero blocks).
    static func archive(_ parts: [UInt8]...) -> [UInt8] { Array(parts.joined()) + end }

    /// A POSIX ustar archive of regular files with text contents.
    static func archive(files: [(name: String, text: String)]) -> [UInt8] {
        Array(files.map { file($0.name, $0.text) }.joined()) + end
    }
}
