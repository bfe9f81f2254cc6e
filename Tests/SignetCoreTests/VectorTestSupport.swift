import Foundation
import Testing

/// A problem with a test's own data (a vector file that is missing or malformed).
struct VectorError: Error, CustomStringConvertible {
    let description: String
}

/// Loads the JSON vector files copied into the test bundle from `Tests/SignetCoreTests/Vectors`.
enum VectorFile {
    static func decode<T: Decodable>(_ type: T.Type, named name: String) throws -> T {
        return try JSONDecoder().decode(T.self, from: Data(contentsOf: url(named: name)))
    }

    static func url(named name: String) throws -> URL {
        if let url = Bundle.module.url(forResource: name, withExtension: "json", subdirectory: "Vectors") {
            return url
        }
        // Fallback for Foundation implementations that resolve subdirectories differently.
        if let url = Bundle.module.resourceURL?.appendingPathComponent("Vectors/\(name).json"),
            FileManager.default.fileExists(atPath: url.path)
        {
            return url
        }
        throw VectorError(description: "Vectors/\(name).json is not in the test bundle")
    }

    /// Decodes hex without SignetCore's `Hex`, so that the vector data does not depend on the
    /// code under test.
    static func bytes(hex text: String) throws -> [UInt8] {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { throw VectorError(description: "odd-length hex in a vector: \(text)") }
        var result: [UInt8] = []
        result.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else {
                throw VectorError(description: "non-hex character in a vector: \(text)")
            }
            result.append(high << 4 | low)
            index += 2
        }
        return result
    }

    private static func nibble(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return character - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

/// A private folder under the system's temporary directory. Call `remove()` in a `defer`.
struct ScratchDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("signet-core-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// Writes `bytes` to `name` inside the folder and returns the file's path.
    @discardableResult
    func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let file = url.appendingPathComponent(name)
        try Data(bytes).write(to: file)
        return file.path
    }

    /// The path `name` would have inside the folder (the file need not exist).
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

/// Adds up progress reports, which may arrive from any thread.
final class ByteCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var sum = 0

    func add(_ count: Int) {
        lock.lock()
        sum += count
        lock.unlock()
    }

    var total: Int {
        lock.lock()
        defer { lock.unlock() }
        return sum
    }
}
