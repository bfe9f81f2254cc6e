#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A file written atomically, streamed: content goes to a temporary file beside the target
/// (through ``write(_:)``, the ``fileDescriptor``, or another writer that opens
/// ``temporaryPath``); ``commit(overwrite:)`` flushes it with `fsync`, moves it into place —
/// `rename`, or `link` when an existing file must not be replaced, which makes "does it exist?"
/// and the write one atomic step — and syncs the folder so the new name survives a power loss.
/// Released without a commit, the temporary file is removed: the target is either the old
/// file or the new one, never a torn one.
///
/// Not `Sendable`: one writer belongs to one task.
public final class AtomicFileWriter {
    /// The target.
    public let path: String
    /// The temporary file, in the target's folder.
    public let temporaryPath: String
    /// The temporary file, open for writing.
    public let fileDescriptor: Int32
    private var committed = false
    /// The temporary file's entry in ``TemporaryFiles`` (removed on a signal).
    private let registration: Int
    /// Starts the writeback as content is appended through ``write(_:)`` or ``appended(_:)``.
    private var pacer: WritebackPacer

    /// Creates the temporary file (`.NAME.signet-XXXXXX` beside `path`) with `permissions`.
    public init(path: String, permissions: AtomicFile.Permissions) throws {
        self.path = path
        let folder = AtomicFile.parentFolder(of: path)
        let base = path.split(separator: "/").last.map(String.init) ?? path
        // Made and registered in one step: a signal's cleanup sees it, or it is not made.
        let (fd, code, made, registered) = TemporaryFiles.uninterrupted { () -> (Int32, Int32, String, Int) in
            var template = Array("\(folder)/.\(base).signet-XXXXXX".utf8CString)
            let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
            guard fd >= 0 else { return (fd, errno, "", 0) }
            let made = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return (fd, 0, made, TemporaryFiles.register(made))
        }
        guard fd >= 0 else { throw FileInput.ioError(path: path, errno: code) }
        fileDescriptor = fd
        pacer = WritebackPacer(fileDescriptor: fd)
        temporaryPath = made
        registration = registered
        guard fchmod(fd, permissions.mode) == 0 else {
            let code = errno
            close(fd)
            unlink(temporaryPath)
            TemporaryFiles.unregister(registration)
            throw FileInput.ioError(path: path, errno: code)
        }
    }

    deinit {
        close(fileDescriptor)
        if !committed { unlink(temporaryPath) }
        TemporaryFiles.unregister(registration)
    }

    /// Appends `bytes` to the temporary file.
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        var written = 0
        while written < bytes.count {
            let result = posixWrite(fileDescriptor, bytes.baseAddress! + written, bytes.count - written)
            if result < 0 {
                if errno == EINTR { continue }
                throw FileInput.ioError(path: path, errno: errno)
            }
            written += result
        }
        pacer.appended(bytes.count)
    }

    /// Tells the writer that `count` bytes were appended through ``fileDescriptor`` by another
    /// writer, so that their writeback starts as they are written (see ``WritebackPacer``).
    package func appended(_ count: Int) {
        pacer.appended(count)
    }

    /// Appends `bytes` to the temporary file.
    public func write(_ bytes: some Collection<UInt8>) throws {
        let contiguous = Array(bytes)
        let result = contiguous.withUnsafeBytes { buffer in Result { () throws in try write(buffer) } }
        try result.get()
    }

    /// Flushes the temporary file and moves it into place. With `overwrite` false, an
    /// existing target is ``SignetCoreError/outputExists(path:)`` and stays as it was.
    public func commit(overwrite: Bool) throws {
        precondition(!committed, "committed twice")
        guard fsync(fileDescriptor) == 0 else { throw FileInput.ioError(path: path, errno: errno) }
        if overwrite {
            var info = stat()
            if stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
                throw SignetCoreError.io(path: path, detail: "is a directory, not a file")
            }
            guard rename(temporaryPath, path) == 0 else { throw FileInput.ioError(path: path, errno: errno) }
        } else {
            // link(2) fails with EEXIST if the destination exists, atomically.
            guard link(temporaryPath, path) == 0 else {
                if errno == EEXIST { throw SignetCoreError.outputExists(path: path) }
                throw FileInput.ioError(path: path, errno: errno)
            }
            unlink(temporaryPath)
        }
        committed = true
        TemporaryFiles.unregister(registration)
        AtomicFile.syncFolder(AtomicFile.parentFolder(of: path))
    }
}
