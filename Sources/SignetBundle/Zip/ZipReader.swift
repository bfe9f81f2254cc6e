#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One entry of a zip that passed ``ZipReader``'s checks: a stored regular file whose local
/// header starts at `headerOffset` and whose bytes lie at `dataOffset ..< dataOffset + size`.
struct ZipEntry: Sendable, Equatable {
    let name: String
    let size: UInt64
    let headerOffset: UInt64
    let dataOffset: UInt64
}

/// Reads a zip's central directory and checks every entry against its local header before
/// anything uses it: stored regular files only (no symbolic link, folder, device, encryption
/// or compression), names valid UTF-8, sizes and names the same in both headers, data inside
/// the file and no two entries sharing bytes.
///
/// A bundle is also *canonical*: every byte of the file is accounted for — local entries back
/// to back from offset 0, the central directory right after the last one, then (ZIP64) the
/// end record and its locator, and the end record last, with no archive or entry comment and
/// no extra field but ZIP64's. So no byte can ride along that no signature covers (a shell
/// script before the zip, a hidden entry, data in a gap).
///
/// Unchecked `Sendable`: everything is set in `init` and never changed; reads use `pread`,
/// which is safe from several threads on one descriptor.
final class ZipReader: @unchecked Sendable {
    let path: String
    let fd: Int32
    let fileSize: UInt64
    let entries: [ZipEntry]

    init(path: String, limits: BundleLimits) throws {
        self.path = path
        fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw BundleFiles.error(path) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            close(fd)
            throw BundleFiles.error(path)
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw BundleError.io(path: path, detail: "is not a regular file")
        }
        fileSize = UInt64(info.st_size)
        do {
            entries = try ZipDirectoryParser(fd: fd, path: path, fileSize: fileSize).readDirectory(limits: limits)
        } catch {
            close(fd)
            throw error
        }
    }

    deinit { close(fd) }

    /// Reads a whole entry, refusing more than `limit` bytes.
    func read(_ entry: ZipEntry, limit: Int) throws -> [UInt8] {
        guard entry.size <= UInt64(limit) else { throw BundleError.malformed(source: path, detail: "\(entry.name) is larger than \(limit) bytes") }
        return try BundleFiles.readExactly(fd, count: Int(entry.size), at: entry.dataOffset, path: path)
    }

    /// Streams an entry's bytes in chunks of at most `chunk` bytes.
    func stream(_ entry: ZipEntry, buffer: UnsafeMutableRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        var done: UInt64 = 0
        while done < entry.size {
            let count = Int(min(UInt64(buffer.count), entry.size - done))
            let slice = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count])
            try BundleFiles.readExactly(fd, into: slice, at: entry.dataOffset + done, path: path)
            try body(UnsafeRawBufferPointer(slice))
            done += UInt64(count)
        }
    }
}

/// The checks of ``ZipReader``, run once when it opens a file.
private struct ZipDirectoryParser {
    let fd: Int32
    let path: String
    let fileSize: UInt64

    private func malformed(_ detail: String) -> BundleError {
        BundleError.malformed(source: path, detail: "not a valid bundle zip: \(detail)")
    }

    private func unsafe(_ name: String, _ detail: String) -> BundleError {
        BundleError.unsafeEntry(source: path, entry: name, detail: detail)
    }

    /// Finds the end records and parses every central-directory entry.
    func readDirectory(limits: BundleLimits) throws -> [ZipEntry] {
        guard fileSize >= UInt64(ZipFormat.endSize) else { throw malformed("too short to be a zip (\(fileSize) bytes)") }
        let tailSize = Int(min(fileSize, UInt64(ZipFormat.endSize + 0xFFFF)))
        let tailStart = fileSize - UInt64(tailSize)
        let tail = try BundleFiles.readExactly(fd, count: tailSize, at: tailStart, path: path)
        var endPosition: Int?
        var position = tailSize - ZipFormat.endSize
        while position >= 0 {
            var reader = LittleEndianReader(tail, at: position)
            if reader.u32() == ZipFormat.endSignature {
                reader.position = position + 20
                if let commentLength = reader.u16(), position + ZipFormat.endSize + Int(commentLength) == tailSize {
                    endPosition = position
                    break
                }
            }
            position -= 1
        }
        guard let endPosition else { throw malformed("no end-of-central-directory record") }
        guard endPosition + ZipFormat.endSize == tailSize else {
            throw malformed("an archive comment of \(tailSize - endPosition - ZipFormat.endSize) bytes follows the end record (a bundle holds no byte outside its entries)")
        }
        var end = LittleEndianReader(tail, at: endPosition + 4)
        let disk = end.u16()!, directoryDisk = end.u16()!, onDisk = end.u16()!, total = end.u16()!
        var directorySize = UInt64(end.u32()!), directoryOffset = UInt64(end.u32()!)
        var count = UInt64(total)
        guard disk == 0, directoryDisk == 0, onDisk == total else { throw malformed("multi-part archives are not supported") }
        var directoryLimit = tailStart + UInt64(endPosition)
        if total == 0xFFFF || directorySize == 0xFFFF_FFFF || directoryOffset == 0xFFFF_FFFF {
            guard directoryLimit >= UInt64(ZipFormat.zip64LocatorSize) else { throw malformed("ZIP64 locator missing") }
            let locatorOffset = directoryLimit - UInt64(ZipFormat.zip64LocatorSize)
            var locator = LittleEndianReader(try BundleFiles.readExactly(fd, count: ZipFormat.zip64LocatorSize, at: locatorOffset, path: path))
            guard locator.u32() == ZipFormat.zip64LocatorSignature, locator.u32() == 0 else { throw malformed("ZIP64 locator missing") }
            let recordOffset = locator.u64()!
            guard recordOffset <= locatorOffset, locatorOffset - recordOffset >= UInt64(ZipFormat.zip64EndSize) else {
                throw malformed("ZIP64 end record out of place")
            }
            guard recordOffset + UInt64(ZipFormat.zip64EndSize) == locatorOffset else {
                throw malformed("\(locatorOffset - recordOffset - UInt64(ZipFormat.zip64EndSize)) bytes between the ZIP64 end record and its locator (a bundle holds no byte outside its entries)")
            }
            var record = LittleEndianReader(try BundleFiles.readExactly(fd, count: ZipFormat.zip64EndSize, at: recordOffset, path: path))
            guard record.u32() == ZipFormat.zip64EndSignature else { throw malformed("ZIP64 end record missing") }
            guard record.u64() == UInt64(ZipFormat.zip64EndSize - 12) else { throw malformed("the ZIP64 end record carries extra data") }
            _ = record.u16(); _ = record.u16()
            let disk64 = record.u32()!, directoryDisk64 = record.u32()!, onDisk64 = record.u64()!
            count = record.u64()!
            directorySize = record.u64()!
            directoryOffset = record.u64()!
            guard disk64 == 0, directoryDisk64 == 0, onDisk64 == count else { throw malformed("multi-part archives are not supported") }
            directoryLimit = recordOffset
        }
        guard count <= UInt64(limits.maximumEntries) + 2 else {
            throw malformed("\(count) entries, more than the limit of \(limits.maximumEntries)")
        }
        let directoryEnd = directoryOffset.addingReportingOverflow(directorySize)
        guard !directoryEnd.overflow, directoryEnd.partialValue == directoryLimit else {
            throw malformed("the central directory is not where the end record says (extra bytes or a damaged file)")
        }
        let perEntryMaximum = UInt64(ZipFormat.centralHeaderSize + limits.maximumPathLength + 64)
        guard directorySize <= count * perEntryMaximum else { throw malformed("the central directory is larger than its entries need") }
        let directory = try BundleFiles.readExactly(fd, count: Int(directorySize), at: directoryOffset, path: path)
        var reader = LittleEndianReader(directory)
        var result: [ZipEntry] = []
        result.reserveCapacity(Int(count))
        for _ in 0..<count {
            result.append(try readCentralEntry(&reader, directoryOffset: directoryOffset, limits: limits))
        }
        guard reader.remaining == 0 else { throw malformed("bytes after the last central-directory entry") }
        try checkContiguous(result, directoryOffset: directoryOffset)
        return result
    }

    private func readCentralEntry(_ reader: inout LittleEndianReader, directoryOffset: UInt64, limits: BundleLimits) throws -> ZipEntry {
        guard reader.remaining >= ZipFormat.centralHeaderSize, reader.u32() == ZipFormat.centralHeaderSignature else {
            throw malformed("a central-directory entry is damaged")
        }
        let madeBy = reader.u16()!
        _ = reader.u16()
        let flags = reader.u16()!, method = reader.u16()!
        _ = reader.u16(); _ = reader.u16(); _ = reader.u32()
        var compressed = UInt64(reader.u32()!), size = UInt64(reader.u32()!)
        let nameLength = Int(reader.u16()!), extraLength = Int(reader.u16()!), commentLength = Int(reader.u16()!)
        _ = reader.u16(); _ = reader.u16()
        let external = reader.u32()!
        var headerOffset = UInt64(reader.u32()!)
        guard let nameBytes = reader.take(nameLength), let extra = reader.take(extraLength), let comment = reader.take(commentLength) else {
            throw malformed("a central-directory entry runs past the directory")
        }
        guard let name = String(validating: nameBytes, as: UTF8.self) else {
            throw unsafe(String(decoding: nameBytes, as: UTF8.self), "name is not valid UTF-8")
        }
        guard nameLength <= limits.maximumPathLength else { throw unsafe(String(name.prefix(80)), "name longer than \(limits.maximumPathLength) bytes") }
        guard comment.isEmpty else { throw unsafe(name, "entry comment (a bundle holds no byte outside its entries)") }
        guard Self.parseZip64(extra, size: &size, compressed: &compressed, offset: &headerOffset) != nil else {
            throw unsafe(name, "damaged ZIP64 field, or an extra field other than ZIP64's")
        }
        // What the entry is: Unix mode bits when made on Unix, the DOS folder bit otherwise.
        let mode = madeBy >> 8 == 3 ? (external >> 16) & UInt32(S_IFMT) : 0
        switch mode {
        case 0, UInt32(S_IFREG): break
        case UInt32(S_IFLNK): throw unsafe(name, "symbolic link (bundles hold regular files only)")
        case UInt32(S_IFDIR): throw unsafe(name, "directory entry (bundles hold files only)")
        default: throw unsafe(name, "device, pipe or socket (bundles hold regular files only)")
        }
        if external & 0x10 != 0 || name.hasSuffix("/") { throw unsafe(name, "directory entry (bundles hold files only)") }
        if flags & 0x0001 != 0 { throw unsafe(name, "encrypted entry") }
        if flags & 0x0008 != 0 { throw unsafe(name, "entry with a trailing data descriptor (sizes not in its header)") }
        guard method == 0 else {
            throw unsafe(name, "compressed entry (method \(method)); bundle entries are stored, which rules out compression bombs")
        }
        guard compressed == size else { throw unsafe(name, "stored entry whose two sizes differ (\(compressed) and \(size))") }
        return try checkLocalHeader(name: name, nameBytes: nameBytes, size: size, headerOffset: headerOffset, directoryOffset: directoryOffset)
    }

    /// Reads the local header an entry points to; its name and sizes must agree with the
    /// directory's, and its data must end before the directory starts.
    private func checkLocalHeader(name: String, nameBytes: [UInt8], size: UInt64, headerOffset: UInt64, directoryOffset: UInt64) throws -> ZipEntry {
        guard headerOffset < directoryOffset, directoryOffset - headerOffset >= UInt64(ZipFormat.localHeaderSize) else {
            throw unsafe(name, "its local header is outside the archive's data")
        }
        var local = LittleEndianReader(try BundleFiles.readExactly(fd, count: ZipFormat.localHeaderSize, at: headerOffset, path: path))
        guard local.u32() == ZipFormat.localHeaderSignature else { throw unsafe(name, "no local header where the directory says") }
        _ = local.u16()
        let flags = local.u16()!, method = local.u16()!
        _ = local.u16(); _ = local.u16(); _ = local.u32()
        var compressed = UInt64(local.u32()!), localSize = UInt64(local.u32()!)
        let nameLength = Int(local.u16()!), extraLength = Int(local.u16()!)
        let variableStart = headerOffset + UInt64(ZipFormat.localHeaderSize)
        guard variableStart + UInt64(nameLength + extraLength) <= directoryOffset else { throw unsafe(name, "its local header runs into the directory") }
        let variable = try BundleFiles.readExactly(fd, count: nameLength + extraLength, at: variableStart, path: path)
        guard Array(variable.prefix(nameLength)) == nameBytes else { throw unsafe(name, "the local header names a different file") }
        var ignored: UInt64 = 0
        guard Self.parseZip64(Array(variable.dropFirst(nameLength)), size: &localSize, compressed: &compressed, offset: &ignored) != nil else {
            throw unsafe(name, "damaged ZIP64 field, or an extra field other than ZIP64's, in the local header")
        }
        guard method == 0, flags & 0x0009 == 0 else { throw unsafe(name, "the local header says compressed or encrypted") }
        guard localSize == size, compressed == size else {
            throw unsafe(name, "size lie: the local header says \(localSize) bytes, the directory \(size)")
        }
        let dataOffset = variableStart + UInt64(nameLength + extraLength)
        let dataEnd = dataOffset.addingReportingOverflow(size)
        guard !dataEnd.overflow, dataEnd.partialValue <= directoryOffset else {
            throw unsafe(name, "size lie: \(size) bytes do not fit in the archive")
        }
        return ZipEntry(name: name, size: size, headerOffset: headerOffset, dataOffset: dataOffset)
    }

    /// Replaces 0xFFFFFFFF fields by their ZIP64 values, in APPNOTE's order; nil when damaged,
    /// when the field holds more than those values, or when any other extra field is present
    /// (bundles carry no extra data that a signature does not cover).
    private static func parseZip64(_ extra: [UInt8], size: inout UInt64, compressed: inout UInt64, offset: inout UInt64) -> Void? {
        var reader = LittleEndianReader(extra)
        var seen = false
        while reader.remaining >= 4 {
            let id = reader.u16()!, length = Int(reader.u16()!)
            guard let body = reader.take(length), id == ZipFormat.zip64ExtraID, !seen else { return nil }
            seen = true
            var field = LittleEndianReader(body)
            if size == 0xFFFF_FFFF { guard let value = field.u64() else { return nil }; size = value }
            if compressed == 0xFFFF_FFFF { guard let value = field.u64() else { return nil }; compressed = value }
            if offset == 0xFFFF_FFFF { guard let value = field.u64() else { return nil }; offset = value }
            guard field.remaining == 0 else { return nil }
        }
        guard reader.remaining == 0 else { return nil }
        guard size != 0xFFFF_FFFF, compressed != 0xFFFF_FFFF, offset != 0xFFFF_FFFF else { return nil }
        return ()
    }

    /// Requires the entries to tile the file from offset 0 to the central directory: no two
    /// sharing bytes (one stored file's data counted twice), and no byte before, between or
    /// after them that no entry accounts for.
    private func checkContiguous(_ entries: [ZipEntry], directoryOffset: UInt64) throws {
        var expected: UInt64 = 0
        var previous: ZipEntry?
        for entry in entries.sorted(by: { $0.headerOffset < $1.headerOffset }) {
            if entry.headerOffset < expected, let previous {
                throw unsafe(entry.name, "its data overlaps \"\(BundleError.printable(previous.name))\"")
            }
            if entry.headerOffset > expected {
                let place = previous.map { "after entry \"\(BundleError.printable($0.name))\"" } ?? "at the start of the file"
                throw malformed("\(entry.headerOffset - expected) bytes \(place) belong to no listed entry (a bundle holds no byte outside its entries)")
            }
            expected = entry.dataOffset + entry.size
            previous = entry
        }
        guard expected == directoryOffset else {
            throw malformed("\(directoryOffset - expected) bytes before the central directory belong to no listed entry (a bundle holds no byte outside its entries)")
        }
    }
}
