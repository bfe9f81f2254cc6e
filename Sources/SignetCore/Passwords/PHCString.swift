/// A password hash in the PHC string format
/// (`$<id>$<param>=<value>,…$<salt>$<hash>`, salt and hash in base64 without padding),
/// as the Password Hashing Competition specified it and as passlib and libsodium write it.
///
/// Parsing is strict and bounded: an attacker who can write a stored hash must not be able
/// to make the parser, or the derivation it drives, misbehave.
public struct PHCString: Sendable, Equatable, CustomStringConvertible {
    /// The function identifier, such as `scrypt` or `pbkdf2-sha256`.
    public var id: String
    /// The optional version segment (`$v=19$` in argon2 hashes), without `v=`.
    public var version: String?
    /// The parameters in the order written, such as `[("ln", "17"), ("r", "8"), ("p", "1")]`.
    public var parameters: [Parameter]
    /// The salt bytes.
    public var salt: [UInt8]
    /// The hash bytes.
    public var hash: [UInt8]

    /// One `name=value` parameter.
    public struct Parameter: Sendable, Equatable {
        /// The parameter's name, such as `ln` or `i`.
        public var name: String
        /// The value as written, such as `17`; ``PHCString/integer(_:in:)`` reads it as a number.
        public var value: String
        /// The parameter `name=value`.
        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The longest PHC string accepted.
    public static let maximumLength = 512

    /// A PHC string from its parts; `salt` and `hash` are raw bytes, base64-encoded only when the
    /// string is written. Nothing is checked here.
    public init(id: String, version: String? = nil, parameters: [Parameter], salt: [UInt8], hash: [UInt8]) {
        self.id = id
        self.version = version
        self.parameters = parameters
        self.salt = salt
        self.hash = hash
    }

    /// Parses a PHC string; the error names the part that is wrong.
    public init(parsing text: String) throws {
        let source = "password hash"
        guard text.utf8.count <= PHCString.maximumLength else {
            throw SignetCoreError.tooLarge(source: source, limit: PHCString.maximumLength)
        }
        guard text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw SignetCoreError.malformed(source: source, detail: "contains white space or a character outside printable ASCII")
        }
        var fields = text.split(separator: "$", omittingEmptySubsequences: false).map(String.init)
        var version: String?
        if fields.count == 6, fields[2].hasPrefix("v=") {
            version = String(fields.remove(at: 2).dropFirst(2))
            guard let version, !version.isEmpty, version.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                throw SignetCoreError.malformed(source: source, detail: "bad version segment")
            }
        }
        guard fields.count == 5, fields[0].isEmpty else {
            throw SignetCoreError.malformed(source: source, detail: "not a PHC string ($id$parameters$salt$hash)")
        }
        let id = fields[1]
        guard !id.isEmpty, id.count <= 32, id.utf8.allSatisfy(PHCString.isIDCharacter) else {
            throw SignetCoreError.malformed(source: source, detail: "bad function identifier '\(id)'")
        }
        var parameters: [Parameter] = []
        for pair in fields[2].split(separator: ",", omittingEmptySubsequences: false) {
            let parts = pair.split(separator: "=", omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw SignetCoreError.malformed(source: source, detail: "bad parameter '\(pair)' (expected name=value)")
            }
            let name = String(parts[0])
            guard !parameters.contains(where: { $0.name == name }) else {
                throw SignetCoreError.malformed(source: source, detail: "parameter '\(name)' appears twice")
            }
            parameters.append(Parameter(name, String(parts[1])))
        }
        guard let salt = Base64.decodeUnpadded(fields[3]) else {
            throw SignetCoreError.malformed(source: source, detail: "the salt is not base64 without padding")
        }
        guard let hash = Base64.decodeUnpadded(fields[4]) else {
            throw SignetCoreError.malformed(source: source, detail: "the hash is not base64 without padding")
        }
        self.init(id: id, version: version, parameters: parameters, salt: salt, hash: hash)
    }

    /// The value of the parameter `name` as a decimal integer in `range`.
    public func integer(_ name: String, in range: ClosedRange<Int>) throws -> Int {
        guard let text = parameters.first(where: { $0.name == name })?.value else {
            throw SignetCoreError.malformed(source: "password hash", detail: "\(id) hash without the parameter '\(name)'")
        }
        guard text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), text.count <= 10, let value = Int(text),
            text == String(value), range.contains(value)
        else {
            throw SignetCoreError.malformed(
                source: "password hash", detail: "parameter \(name)=\(text) is not an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    /// Refuses parameters other than `names`.
    public func requireOnly(_ names: Set<String>) throws {
        if let unknown = parameters.first(where: { !names.contains($0.name) }) {
            throw SignetCoreError.malformed(source: "password hash", detail: "unknown \(id) parameter '\(unknown.name)'")
        }
    }

    /// The PHC string, `$<id>[$v=<version>]$<param>=<value>,…$<salt>$<hash>`, with salt and hash
    /// in base64 without padding.
    public var description: String {
        let parameterText = parameters.map { "\($0.name)=\($0.value)" }.joined(separator: ",")
        let versionText = version.map { "$v=\($0)" } ?? ""
        return "$\(id)\(versionText)$\(parameterText)$\(Base64.encodeUnpadded(salt))$\(Base64.encodeUnpadded(hash))"
    }

    private static func isIDCharacter(_ byte: UInt8) -> Bool {
        (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39) || byte == 0x2D
    }
}
