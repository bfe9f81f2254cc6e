/// The rules for paths inside a bundle, applied to every zip entry before anything is written
/// and to every file when a bundle is made.
public enum BundlePath {
    /// The folder, reserved inside bundles and extracted folders, that holds Signet's own files.
    public static let reservedFolder = ".signet"

    /// Checks one path: relative, `/`-separated, no empty, `.` or `..` component, no
    /// backslash, drive letter, control character or NUL, valid UTF-8, at most `maximumLength`
    /// bytes, and not inside ``reservedFolder``.
    public static func validate(_ path: String, source: String, limits: BundleLimits) throws {
        func refuse(_ detail: String) -> BundleError { BundleError.unsafeEntry(source: source, entry: path, detail: detail) }
        guard !path.isEmpty else { throw refuse("empty path") }
        guard path.utf8.count <= limits.maximumPathLength else { throw refuse("path longer than \(limits.maximumPathLength) bytes") }
        guard !path.hasPrefix("/") else { throw refuse("absolute path") }
        guard !path.contains("\\") else { throw refuse("backslash in path (a Windows separator)") }
        guard !path.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw refuse("control character in path")
        }
        let components = path.split(separator: "/", omittingEmptySubsequences: false)
        if let first = components.first, first.count == 2, first.hasSuffix(":") { throw refuse("drive letter in path") }
        for component in components {
            switch component {
            case "": throw refuse(path.hasSuffix("/") ? "directory entry (bundles hold files only)" : "empty path component")
            case ".": throw refuse("\".\" path component")
            case "..": throw refuse("\"..\" path component (it would write outside the destination)")
            default: continue
            }
        }
        if components[0].lowercased() == reservedFolder { throw refuse("\(reservedFolder)/ is reserved for Signet's own files") }
    }

    /// Checks a whole set of paths for collisions: the same path twice, two paths equal when
    /// case is ignored (they would overwrite each other on macOS and Windows), and a path used
    /// both as a file and as a folder.
    public static func checkCollisions(_ paths: [String], source: String) throws {
        var seen: [String: String] = [:]
        for path in paths {
            let folded = path.lowercased()
            if let earlier = seen[folded] {
                let detail =
                    Array(earlier.utf8) == Array(path.utf8) ? "appears twice"
                    : earlier == path ? "differs from \"\(BundleError.printable(earlier))\" only in Unicode normalisation"
                    : "differs from \"\(BundleError.printable(earlier))\" only in case"
                throw BundleError.unsafeEntry(source: source, entry: path, detail: detail)
            }
            seen[folded] = path
        }
        for path in paths {
            var prefix = Substring("")
            for component in path.split(separator: "/").dropLast() {
                prefix = prefix.isEmpty ? component : Substring(prefix + "/" + component)
                if let file = seen[prefix.lowercased()] {
                    throw BundleError.unsafeEntry(source: source, entry: path, detail: "lies inside \"\(BundleError.printable(file))\", which is a file")
                }
            }
        }
    }
}
