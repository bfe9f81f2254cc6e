import Foundation

/// A fresh, private folder under the system's temporary folder, removed when the last reference goes (or by ``remove()``).
public final class TemporaryFolder: Sendable {
    /// The folder itself.
    public let url: URL

    /// The folder's path.
    public var path: String { url.path }

    /// Makes a new, empty folder named `prefix-UUID`.
    public init(prefix: String = "signet-tests") throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// Removes the folder and everything in it now (also done when the object goes away).
    public func remove() { try? FileManager.default.removeItem(at: url) }

    /// The path `name` (which may contain `/`) has inside the folder; the file need not exist.
    public func file(_ name: String) -> String { path + "/" + name }

    /// The URL `name` has inside the folder; the file need not exist.
    public func fileURL(_ name: String) -> URL { URL(fileURLWithPath: file(name)) }

    /// Writes `bytes` to `name`, making the folders on its way; returns the file's path.
    @discardableResult
    public func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        try write(name, Data(bytes))
    }

    /// Writes `data` to `name`, making the folders on its way; returns the file's path.
    @discardableResult
    public func write(_ name: String, _ data: Data) throws -> String {
        let target = fileURL(name)
        try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: target)
        return target.path
    }

    /// Writes the UTF-8 of `text` to `name`, making the folders on its way; returns the file's path.
    @discardableResult
    public func write(_ name: String, _ text: String) throws -> String {
        try write(name, Data(text.utf8))
    }

    /// The bytes of the file `name`.
    public func read(_ name: String) throws -> [UInt8] { Array(try readData(name)) }

    /// The content of the file `name`.
    public func readData(_ name: String) throws -> Data { try Data(contentsOf: fileURL(name)) }

    /// The content of the file `name`, decoded as UTF-8.
    public func readText(_ name: String) throws -> String { String(decoding: try readData(name), as: UTF8.self) }

    /// Whether `name` exists inside the folder (a dangling symbolic link does not).
    public func exists(_ name: String) -> Bool { FileManager.default.fileExists(atPath: file(name)) }

    /// The names directly in the folder, hidden ones included, sorted.
    public func contents() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: path).sorted()
    }

    /// The permission bits of `name` as the file system reports them; -1 when they are not reported.
    public func permissions(_ name: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: file(name))
        return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }
}
