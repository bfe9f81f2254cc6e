/// Where a ``TarReader`` reads from: `read(count)` gives `count` bytes, fewer only at the end.
package protocol TarInput: AnyObject {
    func read(_ count: Int) throws -> [UInt8]
}

/// A tar archive in memory, for tests and the fuzzer.
package final class TarBytes: TarInput {
    private let bytes: [UInt8]
    private var offset = 0

    package init(_ bytes: [UInt8]) { self.bytes = bytes }

    package func read(_ count: Int) -> [UInt8] {
        let end = min(bytes.count, offset + count)
        defer { offset = end }
        return Array(bytes[offset..<end])
    }
}

/// Reads the tar archives an admin publishes a resource from: POSIX ustar and pax (`tar
/// --format=pax`, python's `tarfile`) and GNU tar's own format (long names). Only regular
/// files and folders are taken; links, devices, sparse files and anything else are refused, as
/// are paths a bundle may not hold (absolute, `..`, `.signet/`, …: ``BundlePath``), before any
/// byte of the entry is written.
package struct TarReader {
    /// One regular file: its path in the bundle and its size; its data follows.
    package struct Entry: Sendable, Equatable {
        package var path: String
        package var size: Int64
    }

    /// Paths, entry counts and sizes are held to these.
    package var limits: BundleLimits
    /// How the archive is named in errors.
    package var source: String

    package init(limits: BundleLimits = BundleLimits(), source: String = "the tar") {
        self.limits = limits
        self.source = source
    }

    static let blockSize = 512
    /// The largest pax or GNU long-name header read.
    static let maximumExtendedHeader = 1 << 16

    /// Reads every entry of `input`, calling `file` for each regular file, which must read
    /// exactly `entry.size` bytes of data from `input` with ``readData(_:from:into:)``;
    /// returns the files' paths.
    @discardableResult
    package func read(
        _ input: some TarInput, file: (Entry, _ data: (Int) throws -> [UInt8]) throws -> Void
    ) throws -> [Entry] {
        var entries: [Entry] = []
        var total: Int64 = 0
        var longName: String?
        var paxPath: String?
        var paxSize: Int64?
        while true {
            let header = try input.read(Self.blockSize)
            guard header.count == Self.blockSize else { throw refuse("it ends inside a header block (truncated)") }
            if header.allSatisfy({ $0 == 0 }) {
                try Self.requireZeros(after: input, source: source)
                break
            }
            try checkHeader(header)
            let type = header[156]
            let extended = [UInt8(ascii: "x"), UInt8(ascii: "g"), UInt8(ascii: "L"), UInt8(ascii: "K")].contains(type)
            let ownSize = try Self.number(header[124..<136], field: "size", source: source)
            let size = extended ? ownSize : paxSize ?? ownSize
            guard size <= limits.maximumTotalSize else { throw refuse("an entry of \(size) bytes is over the limit of \(limits.maximumTotalSize)") }
            let padded = (size + 511) / 512 * 512
            switch type {
            case _ where extended:
                guard size <= Self.maximumExtendedHeader else { throw refuse("an extended header of \(size) bytes is over the limit") }
                let data = try Self.exactly(Int(padded), from: input, source: source)
                let body = Array(data.prefix(Int(size)))
                if type == UInt8(ascii: "L") {
                    guard let name = String(validating: body.prefix { $0 != 0 }, as: UTF8.self) else { throw refuse("a long name is not UTF-8") }
                    longName = name
                } else if type == UInt8(ascii: "x") {
                    let records = try Self.paxRecords(body, source: source)
                    if let path = records["path"], !path.isEmpty { paxPath = path }
                    if let text = records["size"] {
                        guard let value = Int64(text), value >= 0 else { throw refuse("a pax size of \"\(text.prefix(40))\"") }
                        paxSize = value
                    }
                } else if type == UInt8(ascii: "g") {
                    let records = try Self.paxRecords(body, source: source)
                    guard records["path"] == nil, records["size"] == nil else { throw refuse("a global pax header sets a path or size") }
                }
                continue
            default: break
            }
            guard let headerName = Self.name(of: header) else { throw refuse("a name is not UTF-8") }
            let rawName = paxPath ?? longName ?? headerName
            longName = nil
            paxPath = nil
            paxSize = nil
            var path = rawName
            while path.hasPrefix("./") { path.removeFirst(2) }
            // Old tars store a folder as a file whose name ends in "/".
            let isFolder = type == UInt8(ascii: "5") || ((type == UInt8(ascii: "0") || type == 0) && path.hasSuffix("/") && size == 0)
            switch isFolder ? UInt8(ascii: "5") : type {
            case UInt8(ascii: "0"), 0, UInt8(ascii: "7"):
                try validate(path)
                total += size
                guard entries.count < limits.maximumEntries else { throw refuse("more than \(limits.maximumEntries) files") }
                guard total <= limits.maximumTotalSize else { throw refuse("its files add up to more than \(limits.maximumTotalSize) bytes") }
                let entry = Entry(path: path, size: size)
                var remaining = size
                try file(entry) { (count) throws -> [UInt8] in
                    let wanted = Int(min(Int64(count), remaining))
                    let bytes = try Self.exactly(wanted, from: input, source: source)
                    remaining -= Int64(bytes.count)
                    return bytes
                }
                guard remaining == 0 else { throw refuse("\(path): its data was not read whole") }
                _ = try Self.exactly(Int(padded - size), from: input, source: source)
                entries.append(entry)
            case UInt8(ascii: "5"):
                guard size == 0 else { throw refuse("\(BundleError.printable(rawName)): a folder entry with \(size) bytes of data") }
                let folder = path.hasSuffix("/") ? String(path.dropLast()) : path
                if !folder.isEmpty, folder != "." { try validate(folder) }
                _ = try Self.exactly(Int(padded), from: input, source: source)
            case UInt8(ascii: "1"), UInt8(ascii: "2"):
                throw refuse("\(BundleError.printable(rawName)) is a \(type == UInt8(ascii: "1") ? "hard" : "symbolic") link; a resource holds regular files only")
            case UInt8(ascii: "3"), UInt8(ascii: "4"), UInt8(ascii: "6"):
                throw refuse("\(BundleError.printable(rawName)) is a device or FIFO; a resource holds regular files only")
            default:
                throw refuse("\(BundleError.printable(rawName)) has the entry type \(BundleError.printable(String(decoding: [type], as: UTF8.self))), which is not a regular file or folder")
            }
        }
        do {
            try BundlePath.checkCollisions(entries.map(\.path), source: source)
        } catch {
            throw refuse(Self.withoutSource(String(describing: error), source))
        }
        return entries
    }

    private func refuse(_ detail: String) -> BundleError { .malformed(source: source, detail: detail) }

    private func validate(_ path: String) throws {
        do {
            try BundlePath.validate(path, source: source, limits: limits)
        } catch {
            throw refuse(Self.withoutSource(String(describing: error), source))
        }
    }

    /// A bundle error's description without the leading "SOURCE: " (the problem names the field).
    static func withoutSource(_ description: String, _ source: String) -> String {
        description.hasPrefix(source + ": ") ? String(description.dropFirst(source.count + 2)) : description
    }

    /// The magic (POSIX `ustar\0` or GNU `ustar `) and the header checksum.
    private func checkHeader(_ header: [UInt8]) throws {
        let magic = Array(header[257..<263])
        guard magic == Array("ustar\0".utf8) || magic == Array("ustar ".utf8) else {
            throw refuse("not a ustar, pax or GNU tar archive (a header has no ustar magic)")
        }
        let stated = try Self.number(header[148..<156], field: "checksum", source: source)
        var sum: Int64 = 0
        for (index, byte) in header.enumerated() { sum += (148..<156).contains(index) ? 32 : Int64(byte) }
        guard sum == stated else { throw refuse("a header's checksum is wrong (damaged or not a tar archive)") }
    }

    /// The name, with the POSIX prefix field in front where there is one.
    static func name(of header: [UInt8]) -> String? {
        func text(_ range: Range<Int>) -> String? { String(validating: header[range].prefix { $0 != 0 }, as: UTF8.self) }
        guard let name = text(0..<100) else { return nil }
        guard Array(header[257..<263]) == Array("ustar\0".utf8) else { return name }
        guard let prefix = text(345..<500) else { return nil }
        return prefix.isEmpty ? name : prefix + "/" + name
    }

    /// An octal field (spaces and NULs around it), or GNU's base-256 form (a first byte of
    /// 0x80, then the value big-endian; negative values, 0xFF first, are refused).
    static func number(_ field: ArraySlice<UInt8>, field name: String, source: String) throws -> Int64 {
        if let first = field.first, first & 0x80 != 0 {
            guard first == 0x80 else { throw BundleError.malformed(source: source, detail: "a header's \(name) is negative") }
            var value: UInt64 = 0
            for byte in field.dropFirst() {
                guard value <= UInt64(Int64.max) >> 8 else { throw BundleError.malformed(source: source, detail: "a header's \(name) is over 2^63") }
                value = value << 8 | UInt64(byte)
            }
            return Int64(value)
        }
        let digits = field.drop { $0 == 32 || $0 == 0 }.prefix { $0 != 32 && $0 != 0 }
        guard !digits.isEmpty || name != "checksum", digits.count <= 21,
              digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "7")).contains($0) })
        else { throw BundleError.malformed(source: source, detail: "a header's \(name) is not an octal number") }
        return digits.reduce(Int64(0)) { ($0 << 3) | Int64($1 - UInt8(ascii: "0")) }
    }

    /// The records of a pax header: `LENGTH KEY=VALUE\n`, LENGTH counting the whole record.
    static func paxRecords(_ body: [UInt8], source: String) throws -> [String: String] {
        var records: [String: String] = [:]
        var index = 0
        while index < body.count {
            guard let space = body[index...].firstIndex(of: 32), space - index <= 8,
                  let length = Int(String(decoding: body[index..<space], as: UTF8.self)), length > space - index + 2,
                  index + length <= body.count, body[index + length - 1] == 10,
                  let equals = body[(space + 1)..<(index + length)].firstIndex(of: UInt8(ascii: "="))
            else { throw BundleError.malformed(source: source, detail: "a pax header is malformed") }
            let key = String(decoding: body[(space + 1)..<equals], as: UTF8.self)
            guard let value = String(validating: body[(equals + 1)..<(index + length - 1)], as: UTF8.self) else {
                throw BundleError.malformed(source: source, detail: "a pax \(key) is not UTF-8")
            }
            records[key] = value
            index += length
        }
        return records
    }

    static func exactly(_ count: Int, from input: some TarInput, source: String) throws -> [UInt8] {
        guard count > 0 else { return [] }
        let bytes = try input.read(count)
        guard bytes.count == count else { throw BundleError.malformed(source: source, detail: "it ends inside an entry (truncated)") }
        return bytes
    }

    /// After the end marker only zero blocks may follow (tar pads to its record size).
    static func requireZeros(after input: some TarInput, source: String) throws {
        while true {
            let bytes = try input.read(64 << 10)
            guard bytes.allSatisfy({ $0 == 0 }) else {
                throw BundleError.malformed(source: source, detail: "data follows the end of the archive")
            }
            if bytes.count < 64 << 10 { return }
        }
    }
}
