import SignetCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Thin, error-mapped system calls for the bundle code.
enum BundleFiles {
    static func error(_ path: String, _ code: Int32 = errno) -> BundleError {
        BundleError.io(path: path, detail: String(cString: strerror(code)))
    }

    /// Reads a whole (small) file, refusing more than `limit` bytes.
    static func read(_ path: String, limit: Int) throws -> [UInt8] {
        do {
            return try FileInput.readAll(path: path, limit: limit)
        } catch SignetCoreError.tooLarge {
            throw BundleError.malformed(source: path, detail: "larger than \(limit) bytes")
        } catch SignetCoreError.io(_, let detail) {
            throw BundleError.io(path: path, detail: detail)
        } catch {
            throw BundleError.io(path: path, detail: "\(error)")
        }
    }

    /// Runs `body`, whose only errors are ``BundleError``s, with that type restored (the
    /// standard library's `withUnsafeBytes` rethrows untyped).
    static func typed<R>(_ body: () throws -> R) throws -> R {
        do {
            return try body()
        } catch let error as BundleError {
            throw error
        } catch {
            throw BundleError.io(path: "", detail: "\(error)")
        }
    }

    /// Writes all of `buffer` at the file's current offset.
    static func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer, path: String) throws {
        var done = 0
        while done < buffer.count {
            let count = write(fd, buffer.baseAddress! + done, buffer.count - done)
            if count < 0 {
                if errno == EINTR { continue }
                throw error(path)
            }
            done += count
        }
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String) throws {
        try typed { try bytes.withUnsafeBytes { try writeAll(fd, $0, path: path) } }
    }

    /// Reads exactly `buffer.count` bytes at `offset`; a short file is malformed input.
    static func readExactly(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64, path: String) throws {
        var done = 0
        while done < buffer.count {
            let count = pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if count < 0 {
                if errno == EINTR { continue }
                throw error(path)
            }
            if count == 0 { throw BundleError.malformed(source: path, detail: "the file ends early (cut short?)") }
            done += count
        }
    }

    static func readExactly(_ fd: Int32, count: Int, at offset: UInt64, path: String) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        try typed { try bytes.withUnsafeMutableBytes { try readExactly(fd, into: $0, at: offset, path: path) } }
        return bytes
    }

    /// What is at `path` without following a final symbolic link; nil when nothing is.
    static func lstatMode(_ path: String) -> mode_t? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return info.st_mode & S_IFMT
    }

    /// Creates `path` and any missing parents (mode 0755), refusing to pass through anything
    /// that is not a real folder.
    static func makeFolders(_ path: String, lastMode: mode_t = 0o755) throws {
        var current = path.hasPrefix("/") ? "" : "."
        let components = path.split(separator: "/")
        for (index, component) in components.enumerated() {
            current += "/" + component
            switch lstatMode(current) {
            case S_IFDIR?: continue
            case nil:
                let mode = index == components.count - 1 ? lastMode : 0o755
                guard mkdir(current, mode) == 0 || errno == EEXIST else { throw error(current) }
            default: throw BundleError.io(path: current, detail: "is not a folder")
            }
        }
    }

    /// Removes a folder tree this process made (no symbolic links are followed).
    static func removeTree(_ path: String) {
        guard let mode = lstatMode(path) else { return }
        if mode == S_IFDIR, let folder = opendir(path) {
            var names: [String] = []
            while let entry = readdir(folder) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                if name != "." && name != ".." { names.append(name) }
            }
            closedir(folder)
            for name in names { removeTree(path + "/" + name) }
            rmdir(path)
        } else {
            unlink(path)
        }
    }
}
