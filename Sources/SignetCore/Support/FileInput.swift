#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A file (or standard input, named `-`) opened for reading in chunks.
///
/// Streaming readers use it so that hashing and signing run in constant memory whatever the
/// file's size; `readAll(limit:)` serves the few places that need the whole content.
public final class FileInput {
    /// The name used in messages: the path, or `standard input`.
    public let displayName: String
    /// The size when it is a regular file, for progress reporting.
    public let size: Int64?
    private let descriptor: Int32
    private let ownsDescriptor: Bool

    /// The size of each read: large enough that system-call overhead is negligible.
    public static let chunkSize = 1 << 20

    /// Opens `path` for reading; `-` means standard input.
    public init(path: String) throws {
        if path == "-" {
            descriptor = STDIN_FILENO
            ownsDescriptor = false
            displayName = "standard input"
        } else {
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw FileInput.ioError(path: path, errno: errno) }
            descriptor = fd
            ownsDescriptor = true
            displayName = path
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let code = errno
            if ownsDescriptor { close(descriptor) }
            throw FileInput.ioError(path: displayName, errno: code)
        }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            if ownsDescriptor { close(descriptor) }
            throw SignetCoreError.io(path: displayName, detail: "is a directory, not a file")
        }
        size = (info.st_mode & S_IFMT) == S_IFREG ? Int64(info.st_size) : nil
        #if os(Linux)
        if ownsDescriptor { _ = posix_fadvise(descriptor, 0, 0, POSIX_FADV_SEQUENTIAL) }
        #endif
    }

    deinit {
        if ownsDescriptor { close(descriptor) }
    }

    /// Reads up to `buffer.count` bytes; returns 0 at the end of the input.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        while true {
            let count = posixRead(descriptor, buffer.baseAddress, buffer.count)
            if count >= 0 { return count }
            if errno == EINTR { continue }
            throw FileInput.ioError(path: displayName, errno: errno)
        }
    }

    /// Calls `body` with each chunk of the input, in order, reusing one buffer.
    public func forEachChunk(_ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: FileInput.chunkSize, alignment: 64)
        defer { buffer.deallocate() }
        while true {
            let count = try read(into: buffer)
            if count == 0 { return }
            try body(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
        }
    }

    /// Calls `body` with each chunk of the input and reports each chunk's size to
    /// `progress`: the loop every streaming hash and MAC runs, with read errors naming the input.
    public func stream(progress: ((Int) -> Void)? = nil, _ body: (UnsafeRawBufferPointer) -> Void) throws {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: FileInput.chunkSize, alignment: 64)
        defer { buffer.deallocate() }
        while true {
            let count = try read(into: buffer)
            if count == 0 { return }
            body(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            progress?(count)
        }
    }

    /// Reads the whole input, refusing anything over `limit` bytes.
    public func readAll(limit: Int) throws -> [UInt8] {
        if let size, size > Int64(limit) { throw SignetCoreError.tooLarge(source: displayName, limit: limit) }
        var result = [UInt8]()
        result.reserveCapacity(Int(size ?? 4096))
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let count = try read(into: buffer)
            if count == 0 { return result }
            guard result.count + count <= limit else {
                SecretBytes.zero(&result)
                throw SignetCoreError.tooLarge(source: displayName, limit: limit)
            }
            result.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
        }
    }

    /// Reads a whole file (or `-`), refusing anything over `limit` bytes.
    public static func readAll(path: String, limit: Int) throws -> [UInt8] {
        try FileInput(path: path).readAll(limit: limit)
    }

    static func ioError(path: String, errno code: Int32) -> SignetCoreError {
        let detail: String
        switch code {
        case ENOENT: detail = "no such file or directory"
        case EACCES, EPERM: detail = "permission denied"
        case EISDIR: detail = "is a directory, not a file"
        case ENOSPC: detail = "no space left on the device"
        case ENOTDIR: detail = "a component of the path is not a directory"
        case ELOOP: detail = "too many levels of symbolic links"
        case EROFS: detail = "read-only file system"
        default: detail = String(cString: strerror(code))
        }
        return .io(path: path, detail: detail)
    }
}

/// The system calls under names that our own `read`/`write` methods do not shadow.
@inline(__always) func posixRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(fd, buffer, count)
}

@inline(__always) func posixWrite(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    write(fd, buffer, count)
}
