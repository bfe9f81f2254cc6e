import Foundation

/// A problem with a test's own data (a vector file that is missing or malformed).
public struct VectorError: Error, Sendable, CustomStringConvertible {
    /// What is wrong, for the failure message.
    public let description: String

    /// An error saying `description`.
    public init(description: String) { self.description = description }
}

/// Reads the vector files a test target copies into its resource bundle (`resources: [.copy("Vectors")]`); pass the target's `Bundle.module`.
public enum TestVectors {
    /// The URL of `<folder>/<relative>` among `bundle`'s resources; throws ``VectorError`` when it is not there.
    public static func url(_ relative: String, in bundle: Bundle, folder: String = "Vectors") throws -> URL {
        if let base = bundle.resourceURL {
            let candidate = base.appendingPathComponent(folder + "/" + relative)
            if FileManager.default.fileExists(atPath: candidate.path) { return candidate }
        }
        // Fallback for Foundation implementations that resolve resources differently.
        var parts = relative.split(separator: "/").map(String.init)
        if let name = parts.popLast() {
            let subdirectory = ([folder] + parts).joined(separator: "/")
            if let url = bundle.url(forResource: name, withExtension: nil, subdirectory: subdirectory) { return url }
        }
        throw VectorError(description: "\(folder)/\(relative) is not in the test bundle")
    }

    /// The path of `<folder>/<relative>` among `bundle`'s resources.
    public static func path(_ relative: String, in bundle: Bundle, folder: String = "Vectors") throws -> String {
        try url(relative, in: bundle, folder: folder).path
    }

    /// The content of `<folder>/<relative>` among `bundle`'s resources.
    public static func data(_ relative: String, in bundle: Bundle, folder: String = "Vectors") throws -> Data {
        try Data(contentsOf: url(relative, in: bundle, folder: folder))
    }

    /// `<folder>/<relative>` among `bundle`'s resources, decoded from JSON as a `T`.
    public static func decode<T: Decodable>(
        _ type: T.Type, _ relative: String, in bundle: Bundle, folder: String = "Vectors"
    ) throws -> T {
        try JSONDecoder().decode(T.self, from: data(relative, in: bundle, folder: folder))
    }

    /// Decodes hex (either case) without the code under test, so that vector data does not depend on it.
    public static func bytes(hex text: String) throws -> [UInt8] {
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
