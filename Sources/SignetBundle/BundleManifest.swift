import Foundation
import SignetCore

/// What a bundle's signatures cover: its name, version, dates and every file with its size
/// and SHA-256. Stored in the bundle as canonical JSON (``CanonicalJSON``); the signatures
/// are over exactly those bytes (docs/formats/bundle.md).
public struct BundleManifest: Sendable, Equatable {
    /// The `format` member of every manifest.
    public static let format = "signet-bundle-manifest-v1"

    /// One file of the bundle.
    public struct File: Sendable, Equatable {
        /// The path inside the bundle (``BundlePath`` rules), `/`-separated.
        public var path: String
        /// The size in bytes.
        public var size: Int64
        /// The SHA-256 of the content.
        public var sha256: [UInt8]

        /// A listed file: its `path` inside the bundle, its `size` in bytes and the SHA-256 of its content.
        public init(path: String, size: Int64, sha256: [UInt8]) {
            self.path = path
            self.size = size
            self.sha256 = sha256
        }
    }

    /// What the bundle is called; rollback protection is per name.
    public var name: String
    /// The release number: each release of a name must be greater than the last accepted.
    public var version: Int64
    /// When it was made.
    public var created: Date
    /// After this moment the bundle is refused; nil for never.
    public var expires: Date?
    /// The files, sorted by path.
    public var files: [File]

    /// A manifest of `files`, which are sorted by the UTF-8 bytes of their paths (the order they
    /// are signed in). Nothing is validated here.
    public init(name: String, version: Int64, created: Date, expires: Date?, files: [File]) {
        self.name = name
        self.version = version
        self.created = created
        self.expires = expires
        self.files = files.sorted { Array($0.path.utf8).lexicographicallyPrecedes(Array($1.path.utf8)) }
    }

    /// The canonical JSON bytes that are stored and signed.
    public var canonicalBytes: [UInt8] {
        let files = files.map { file in
            CanonicalJSON.object([
                "path": .string(file.path), "size": .integer(file.size), "sha256": .string(Hex.encode(file.sha256)),
            ])
        }
        return CanonicalJSON.object([
            "format": .string(Self.format),
            "name": .string(name),
            "version": .integer(version),
            "created": .string(BundleDate.format(created)),
            "expires": expires.map { .string(BundleDate.format($0)) } ?? .null,
            "files": .array(files),
        ]).bytes
    }

    /// Parses manifest bytes; they must be exactly the canonical form of what they say.
    ///
    /// Canonical bytes are read in one pass (``CanonicalManifestScanner``); anything else goes
    /// through the general JSON reader, which names what is wrong — a member, a type, a range —
    /// or, for valid JSON in another form, refuses it as not canonical.
    public init(bytes: [UInt8], source: String, limits: BundleLimits = BundleLimits()) throws {
        var scanner = CanonicalManifestScanner(bytes)
        if let fields = scanner.scan(limits: limits) {
            try self.init(fields: fields, source: source)
            return
        }
        try self.init(fields: try Self.readFields(bytes, source: source, limits: limits), source: source)
        guard canonicalBytes == bytes else {
            throw BundleError.malformed(source: source, detail: "the manifest is not in canonical form (docs/formats/bundle.md)")
        }
    }

    /// The members through the general JSON reader: types, ranges and unknown members checked.
    private static func readFields(_ bytes: [UInt8], source: String, limits: BundleLimits) throws -> ManifestFields {
        let reader = try JSONObjectReader(
            CanonicalJSON.parse(bytes, source: source), source: source, context: "the manifest",
            allowed: ["format", "name", "version", "created", "expires", "files"])
        var files: [ManifestFields.FileFields] = []
        for element in try reader.array("files", maximum: limits.maximumEntries) {
            let entry = try JSONObjectReader(element, source: source, context: "a file of the manifest", allowed: ["path", "size", "sha256"])
            files.append(
                ManifestFields.FileFields(
                    path: try entry.string("path"), sha256: try entry.string("sha256"), size: try entry.integer("size", in: 0...limits.maximumTotalSize)))
        }
        return ManifestFields(
            format: try reader.string("format"), name: try reader.string("name"), version: try reader.integer("version", in: 1...Int64(1 << 53)),
            created: try reader.string("created"), expires: try reader.optionalString("expires"), files: files)
    }

    /// What the members mean: format, name, dates, digests, and the files sorted by path with
    /// none listed twice.
    private init(fields: ManifestFields, source: String) throws {
        guard fields.format == Self.format else {
            throw BundleError.malformed(source: source, detail: "the manifest's format is \"\(BundleError.printable(fields.format))\", not \(Self.format)")
        }
        name = fields.name
        try BundleName.validate(name, source: source)
        version = fields.version
        created = try BundleDate.parse(fields.created, source: source, field: "created")
        expires = try fields.expires.map { (text: String) throws in try BundleDate.parse(text, source: source, field: "expires") }
        var files: [File] = []
        files.reserveCapacity(fields.files.count)
        // Equal as Swift strings (also canonically equivalent ones): a path listed twice would
        // otherwise be checked twice and trap whoever indexes files by path.
        var seen = Set<String>(minimumCapacity: fields.files.count)
        for file in fields.files {
            guard file.sha256.utf8.count == 64, let sha256 = Hex.decodeLowercase(file.sha256) else {
                throw BundleError.malformed(source: source, detail: "\"\(BundleError.printable(file.path))\": sha256 must be 64 lowercase hex digits")
            }
            guard seen.insert(file.path).inserted else {
                throw BundleError.malformed(source: source, detail: "the manifest lists \"\(BundleError.printable(file.path))\" twice")
            }
            files.append(File(path: file.path, size: file.size, sha256: sha256))
        }
        // Sorted by the UTF-8 bytes of the path, as written: one byte string per manifest.
        for (earlier, later) in zip(files, files.dropFirst()) where !earlier.path.utf8.lexicographicallyPrecedes(later.path.utf8) {
            throw BundleError.malformed(
                source: source, detail: "the manifest's files are not sorted by path (\"\(BundleError.printable(later.path))\" after \"\(BundleError.printable(earlier.path))\")")
        }
        self.files = files
    }
}

/// Bundle names: what rollback state is kept under, so they become file names.
public enum BundleName {
    /// 1–128 characters of `A–Z a–z 0–9 . _ -`, not starting with `.` or `-`.
    public static func validate(_ name: String, source: String) throws {
        let allowed = name.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
                || byte == UInt8(ascii: "-")
        }
        guard allowed, (1...128).contains(name.utf8.count), !name.hasPrefix("."), !name.hasPrefix("-") else {
            throw BundleError.malformed(
                source: source,
                detail: "bundle name \"\(BundleError.printable(name))\" must be 1–128 of A–Z a–z 0–9 . _ - and not start with . or -")
        }
    }
}

/// Dates in manifests: ISO 8601 in UTC to the second, `2031-01-01T00:00:00Z`.
public enum BundleDate {
    /// Formats a date, dropping fractions of a second.
    public static func format(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down)))
    }

    /// Parses the manifest form strictly.
    public static func parse(_ text: String, source: String, field: String) throws -> Date {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        guard text.utf8.count == 20, text.hasSuffix("Z"), let date = formatter.date(from: text), format(date) == text else {
            throw BundleError.malformed(source: source, detail: "\(field) \"\(BundleError.printable(text))\" is not a date like 2031-01-01T00:00:00Z")
        }
        return date
    }

    /// Parses what a user types: ISO 8601 with `Z` or an offset, with or without seconds'
    /// fractions, a year from 0001 to 9999, and nothing else: no text after it, no day the
    /// month does not have (Foundation's formatter takes both).
    public static func parseArgument(_ text: String, option: String) throws -> Date {
        let refused = BundleError.invalidArgument(
            detail: "\(option): \"\(BundleError.printable(text))\" is not an ISO 8601 date and time such as 2031-01-01T00:00:00Z (years 0001 to 9999)")
        let shape = /(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})/
        guard let match = text.wholeMatch(of: shape), let year = Int(match.1), let month = Int(match.2), let day = Int(match.3),
            let hour = Int(match.4), let minute = Int(match.5), let second = Int(match.6),
            year >= 1, (1...12).contains(month), hour < 24, minute < 60, second < 60
        else { throw refused }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        guard (1...days).contains(day) else { throw refused }
        for options: ISO8601DateFormatter.Options in [[.withInternetDateTime], [.withInternetDateTime, .withFractionalSeconds]] {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = options
            if let date = formatter.date(from: text) { return date }
        }
        throw refused
    }
}
