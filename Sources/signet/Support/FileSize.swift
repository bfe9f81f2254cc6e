#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Sizes of regular files, for sizing progress bars before the work starts.
enum FileSize {
    /// The size of the regular file at `path`; nil for stdin, pipes, and missing files.
    static func of(_ path: String) -> Int64? {
        guard path != "-" else { return nil }
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int64(info.st_size)
    }

    /// The sum of the sizes of the regular files among `paths`.
    static func total(_ paths: [String]) -> Int64 {
        paths.reduce(0) { $0 + (of($1) ?? 0) }
    }
}
