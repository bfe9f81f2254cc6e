import CBundleSystem
import SignetCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes a zip of stored (uncompressed) entries to an open file, streaming: each entry's
/// content passes through once, its CRC-32 is patched into the local header afterwards, and
/// ZIP64 records are used where sizes or offsets need them.
struct ZipWriter {
    private let fd: Int32
    private let path: String
    /// Starts the disk writeback of what is written as it is written.
    private var pacer: WritebackPacer
    private var offset: UInt64 = 0
    private var central = LittleEndianWriter()
    private var count: UInt64 = 0
    private var current: (name: [UInt8], size: UInt64, headerOffset: UInt64, crcOffset: UInt64, written: UInt64, crc: UInt)?

    init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
        pacer = WritebackPacer(fileDescriptor: fd)
    }

    /// Starts an entry of exactly `size` bytes.
    mutating func begin(name: String, size: UInt64) throws {
        precondition(current == nil, "an entry is already open")
        let nameBytes = Array(name.utf8)
        let large = size >= 0xFFFF_FFFF
        var header = LittleEndianWriter()
        header.u32(ZipFormat.localHeaderSignature)
        header.u16(large ? 45 : 20)
        header.u16(ZipFormat.utf8Flag)
        header.u16(0)  // stored
        header.u16(0)
        header.u16(ZipFormat.dosDate)
        header.u32(0)  // CRC-32, patched by end()
        header.u32(large ? 0xFFFF_FFFF : UInt32(size))
        header.u32(large ? 0xFFFF_FFFF : UInt32(size))
        header.u16(UInt16(nameBytes.count))
        header.u16(large ? 20 : 0)
        header.append(nameBytes)
        if large {
            header.u16(ZipFormat.zip64ExtraID)
            header.u16(16)
            header.u64(size)
            header.u64(size)
        }
        try BundleFiles.writeAll(fd, header.bytes, path: path)
        pacer.appended(header.bytes.count)
        current = (nameBytes, size, offset, offset + 14, 0, crc32(0, nil, 0))
        offset += UInt64(header.bytes.count)
    }

    /// Appends content to the open entry.
    mutating func write(_ buffer: UnsafeRawBufferPointer) throws {
        try account(buffer.count)
        try BundleFiles.writeAll(fd, buffer, path: path)
        pacer.appended(buffer.count)
        checksum(buffer)
    }

    private mutating func write(bytes: [UInt8]) throws {
        try account(bytes.count)
        try BundleFiles.writeAll(fd, bytes, path: path)
        pacer.appended(bytes.count)
        bytes.withUnsafeBytes { checksum($0) }
    }

    private mutating func account(_ count: Int) throws {
        guard let entry = current else { preconditionFailure("no entry is open") }
        guard entry.written + UInt64(count) <= entry.size else {
            throw BundleError.io(path: path, detail: "\(String(decoding: entry.name, as: UTF8.self)) grew while it was being added")
        }
        current!.written += UInt64(count)
        offset += UInt64(count)
    }

    private mutating func checksum(_ buffer: UnsafeRawBufferPointer) {
        guard !buffer.isEmpty else { return }
        current!.crc = crc32(current!.crc, buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt32(buffer.count))
    }

    /// Ends the open entry: checks its size, patches its CRC-32, records it for the directory.
    mutating func end() throws {
        guard let entry = current else { return }
        current = nil
        guard entry.written == entry.size else {
            throw BundleError.io(path: path, detail: "\(String(decoding: entry.name, as: UTF8.self)) changed size while it was being added")
        }
        var crc = LittleEndianWriter()
        crc.u32(UInt32(truncatingIfNeeded: entry.crc))
        let patched = crc.bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, 4, off_t(entry.crcOffset)) }
        guard patched == 4 else { throw BundleFiles.error(path) }

        let largeSize = entry.size >= 0xFFFF_FFFF
        let largeOffset = entry.headerOffset >= 0xFFFF_FFFF
        var extra = LittleEndianWriter()
        if largeSize || largeOffset {
            extra.u16(ZipFormat.zip64ExtraID)
            extra.u16(UInt16((largeSize ? 16 : 0) + (largeOffset ? 8 : 0)))
            if largeSize {
                extra.u64(entry.size)
                extra.u64(entry.size)
            }
            if largeOffset { extra.u64(entry.headerOffset) }
        }
        central.u32(ZipFormat.centralHeaderSignature)
        central.u16(ZipFormat.unixMadeBy)
        central.u16(largeSize || largeOffset ? 45 : 20)
        central.u16(ZipFormat.utf8Flag)
        central.u16(0)
        central.u16(0)
        central.u16(ZipFormat.dosDate)
        central.u32(UInt32(truncatingIfNeeded: entry.crc))
        central.u32(largeSize ? 0xFFFF_FFFF : UInt32(entry.size))
        central.u32(largeSize ? 0xFFFF_FFFF : UInt32(entry.size))
        central.u16(UInt16(entry.name.count))
        central.u16(UInt16(extra.bytes.count))
        central.u16(0)  // comment
        central.u16(0)  // disk
        central.u16(0)  // internal attributes
        central.u32(UInt32(0o100644) << 16)  // a regular file, rw-r--r--
        central.u32(largeOffset ? 0xFFFF_FFFF : UInt32(entry.headerOffset))
        central.append(entry.name)
        central.append(extra.bytes)
        count += 1
    }

    /// Adds a small entry in one step.
    mutating func add(name: String, bytes: [UInt8]) throws {
        try begin(name: name, size: UInt64(bytes.count))
        try write(bytes: bytes)
        try end()
    }

    /// Writes the central directory and the end records.
    mutating func finish() throws {
        let directoryOffset = offset
        let directorySize = UInt64(central.bytes.count)
        try BundleFiles.writeAll(fd, central.bytes, path: path)
        pacer.appended(central.bytes.count)
        offset += directorySize
        var end = LittleEndianWriter()
        let needs64 = count >= 0xFFFF || directoryOffset >= 0xFFFF_FFFF || directorySize >= 0xFFFF_FFFF
        if needs64 {
            let recordOffset = offset
            end.u32(ZipFormat.zip64EndSignature)
            end.u64(UInt64(ZipFormat.zip64EndSize - 12))
            end.u16(ZipFormat.unixMadeBy)
            end.u16(45)
            end.u32(0)
            end.u32(0)
            end.u64(count)
            end.u64(count)
            end.u64(directorySize)
            end.u64(directoryOffset)
            end.u32(ZipFormat.zip64LocatorSignature)
            end.u32(0)
            end.u64(recordOffset)
            end.u32(1)
        }
        end.u32(ZipFormat.endSignature)
        end.u16(0)
        end.u16(0)
        end.u16(needs64 ? 0xFFFF : UInt16(count))
        end.u16(needs64 ? 0xFFFF : UInt16(count))
        end.u32(needs64 ? 0xFFFF_FFFF : UInt32(directorySize))
        end.u32(needs64 ? 0xFFFF_FFFF : UInt32(directoryOffset))
        end.u16(0)
        try BundleFiles.writeAll(fd, end.bytes, path: path)
        pacer.appended(end.bytes.count)
        offset += UInt64(end.bytes.count)
    }
}
