import SignetCore

/// A one-pass reader of `Signature-Input` and `Signature` fields in the canonical shape every
/// signer writes — `sig1=("@method" "@target-uri");created=1;nonce="…";alg="…";keyid="…"` and
/// `sig1=:base64:` — that builds the inputs without the general structured-field parser.
///
/// It accepts only what the general path (``StructuredDictionaryParser`` then
/// ``SignatureInput/init(member:label:)``) reads to exactly the same result, and gives up
/// (nil) on anything else — parameters on a component, escapes, unknown or repeated signature
/// parameters, leading zeros, several field lines, repeated labels, stray whitespace — which
/// then goes to the general path, errors and all. Because it accepts canonical text only, the
/// received inner list *is* its serialisation, the `@signature-params` value. The tests hold
/// it to the general path over a generated corpus and the fuzzer over any input.
enum SignatureFieldScanner {
    /// One `Signature-Input` member.
    struct Input {
        let label: String
        let components: [SignatureComponent]
        let parameters: SignatureParameters
        /// The member's value as received: `(…);created=…`.
        let serialized: String
    }

    /// The members of a one-line `Signature-Input`, or nil to use the general parser (also
    /// past `limit` members, which the general parser then refuses).
    static func inputs(_ value: String, limit: Int = .max) -> [Input]? {
        withBytes(value) { inputs(Cursor($0), limit: limit) }
    }

    /// The members of a one-line `Signature` (label → decoded bytes), or nil (also past `limit`).
    static func signatures(_ value: String, limit: Int = .max) -> [(label: String, bytes: [UInt8])]? {
        withBytes(value) { signatures(Cursor($0), limit: limit) }
    }

    /// The value's UTF-8 bytes in place (a copy only for a string not stored natively).
    private static func withBytes<R>(_ value: String, _ body: (UnsafeBufferPointer<UInt8>) -> R?) -> R? {
        if let result = value.utf8.withContiguousStorageIfAvailable(body) { return result }
        return Array(value.utf8).withUnsafeBufferPointer(body)
    }

    private static func inputs(_ cursor: Cursor, limit: Int) -> [Input]? {
        var bytes = cursor
        var members: [Input] = []
        while true {
            guard members.count < limit, let label = bytes.token(), bytes.pop() == UInt8(ascii: "="), bytes.pop() == UInt8(ascii: "(") else {
                return nil
            }
            let start = bytes.index - 1
            var components: [SignatureComponent] = []
            while bytes.first != UInt8(ascii: ")") {
                // Past the limit the general reader refuses it, with the reason.
                guard components.count < SignatureInput.maximumComponents else { return nil }
                if !components.isEmpty { guard bytes.pop() == UInt8(ascii: " ") else { return nil } }
                guard let name = bytes.quotedRange(), let component = component(bytes.text(name)) else { return nil }
                components.append(component)
            }
            bytes.index += 1
            guard (try? SignatureInput.checkDistinct(components, field: "Signature-Input")) != nil else { return nil }
            var parameters = SignatureParameters()
            var seen: UInt8 = 0
            while bytes.first == UInt8(ascii: ";") {
                bytes.index += 1
                guard let name = bytes.tokenRange(), let parameter = Parameter(bytes.text(name)), seen & parameter.rawValue == 0,
                      bytes.pop() == UInt8(ascii: "=")
                else { return nil }
                seen |= parameter.rawValue
                switch parameter {
                case .created, .expires:
                    guard let number = bytes.integer() else { return nil }
                    if parameter == .created { parameters.created = number } else { parameters.expires = number }
                case .nonce, .alg, .keyid, .tag:
                    guard let range = bytes.quotedRange() else { return nil }
                    let text = String(decoding: bytes.text(range), as: UTF8.self)
                    switch parameter {
                    case .nonce: parameters.nonce = text
                    case .alg: parameters.algorithm = text
                    case .keyid: parameters.keyID = text
                    default: parameters.tag = text
                    }
                }
            }
            let serialized = String(decoding: bytes.text(start..<bytes.index), as: UTF8.self)
            guard !members.contains(where: { $0.label == label }) else { return nil }
            members.append(Input(label: label, components: components, parameters: parameters, serialized: serialized))
            guard let more = bytes.separator() else { return nil }
            if !more { return members }
        }
    }

    private static func signatures(_ cursor: Cursor, limit: Int) -> [(label: String, bytes: [UInt8])]? {
        var bytes = cursor
        var members: [(label: String, bytes: [UInt8])] = []
        while true {
            guard members.count < limit, let label = bytes.token(), bytes.pop() == UInt8(ascii: "="), bytes.pop() == UInt8(ascii: ":") else {
                return nil
            }
            let start = bytes.index
            while let byte = bytes.first, isBase64(byte) { bytes.index += 1 }
            let text = bytes.text(start..<bytes.index)
            // Only the alphabet and `=` got here, so the strict padded decoder reads it as
            // `Base64.decode` would (no white space to skip).
            guard bytes.pop() == UInt8(ascii: ":"), let decoded = Base64.decodeCanonicalPadded(Array(text)), !decoded.isEmpty,
                  !members.contains(where: { $0.label == label })
            else { return nil }
            members.append((label, decoded))
            guard let more = bytes.separator() else { return nil }
            if !more { return members }
        }
    }

    /// The signature parameters Signet reads, each a bit of a set.
    private enum Parameter: UInt8 {
        case created = 1, expires = 2, nonce = 4, alg = 8, keyid = 16, tag = 32

        init?(_ name: Slice<UnsafeBufferPointer<UInt8>>) {
            switch name.count {
            case 3: if name.elementsEqual("alg".utf8) { self = .alg } else if name.elementsEqual("tag".utf8) { self = .tag } else { return nil }
            case 5: if name.elementsEqual("nonce".utf8) { self = .nonce } else if name.elementsEqual("keyid".utf8) { self = .keyid } else { return nil }
            case 7:
                if name.elementsEqual("created".utf8) { self = .created } else if name.elementsEqual("expires".utf8) { self = .expires } else { return nil }
            default: return nil
            }
        }
    }

    /// The derived components the scanner takes (all but `@query-param`, which has a
    /// parameter), made once.
    private static let derivedComponents: [([UInt8], SignatureComponent)] = SignatureComponent.derived.sorted()
        .filter { $0 != "@query-param" }.map { (Array($0.utf8), SignatureComponent($0)) }

    /// A component without parameters that the general reader accepts: a known derived
    /// component, or a lower-case field name.
    private static func component(_ name: Slice<UnsafeBufferPointer<UInt8>>) -> SignatureComponent? {
        guard let first = name.first else { return nil }
        if first == UInt8(ascii: "@") {
            return derivedComponents.first { $0.0.elementsEqual(name) }?.1
        }
        guard name.allSatisfy(SignatureComponent.isTokenByte) else { return nil }
        return SignatureComponent(String(decoding: name, as: UTF8.self))
    }

    /// A read position in a field value.
    private struct Cursor {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        var first: UInt8? { index < bytes.count ? bytes[index] : nil }
        var isAtEnd: Bool { index >= bytes.count }

        mutating func pop() -> UInt8? {
            guard index < bytes.count else { return nil }
            defer { index += 1 }
            return bytes[index]
        }

        func text(_ range: Range<Int>) -> Slice<UnsafeBufferPointer<UInt8>> { bytes[range] }

        /// After a member: the end (false), `,` and optional spaces before another member
        /// (true), or anything else (nil: give up).
        mutating func separator() -> Bool? {
            guard !isAtEnd else { return false }
            guard pop() == UInt8(ascii: ",") else { return nil }
            while first == UInt8(ascii: " ") { index += 1 }
            return isAtEnd ? nil : true
        }

        /// A key: a lower-case letter or `*`, then lower-case letters, digits, `_ - . *`.
        mutating func tokenRange() -> Range<Int>? {
            guard let first, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first) || first == UInt8(ascii: "*") else { return nil }
            let start = index
            while let byte = self.first,
                  (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "*")
            {
                index += 1
            }
            return start..<index
        }

        mutating func token() -> String? {
            tokenRange().map { String(decoding: bytes[$0], as: UTF8.self) }
        }

        /// The inside of a string of printable ASCII without escapes (`"` and `\` make the
        /// caller give up).
        mutating func quotedRange() -> Range<Int>? {
            guard pop() == UInt8(ascii: "\"") else { return nil }
            let start = index
            while let byte = first, byte != UInt8(ascii: "\"") {
                guard (0x20...0x7E).contains(byte), byte != UInt8(ascii: "\\") else { return nil }
                index += 1
            }
            let end = index
            guard pop() == UInt8(ascii: "\"") else { return nil }
            return start..<end
        }

        /// A non-negative integer of 1–15 digits, written without leading zeros.
        mutating func integer() -> Int64? {
            guard let first, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { return nil }
            var value: Int64 = 0
            var digits = 0
            while let byte = self.first, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
                digits += 1
                index += 1
                guard digits <= 15 else { return nil }
            }
            guard digits == 1 || first != UInt8(ascii: "0") else { return nil }
            return value
        }
    }

    private static func isBase64(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "/")
            || byte == UInt8(ascii: "=")
    }
}
