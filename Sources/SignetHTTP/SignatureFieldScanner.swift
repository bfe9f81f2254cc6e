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
        var members: [Input] = []
        let all = Array(value.utf8)
        var bytes = all[...]
        while true {
            guard members.count < limit, let label = token(&bytes), bytes.popFirst() == UInt8(ascii: "="), bytes.popFirst() == UInt8(ascii: "(") else {
                return nil
            }
            let start = bytes.startIndex - 1
            var components: [SignatureComponent] = []
            while bytes.first != UInt8(ascii: ")") {
                if !components.isEmpty { guard bytes.popFirst() == UInt8(ascii: " ") else { return nil } }
                guard let name = quoted(&bytes), let component = component(name) else { return nil }
                components.append(component)
            }
            bytes.removeFirst()
            for index in components.indices.dropFirst() where components[..<index].contains(components[index]) { return nil }
            var parameters = SignatureParameters()
            var seen: Set<String> = []
            while bytes.first == UInt8(ascii: ";") {
                bytes.removeFirst()
                guard let name = token(&bytes), seen.insert(name).inserted, bytes.popFirst() == UInt8(ascii: "=") else { return nil }
                switch name {
                case "created", "expires":
                    guard let number = integer(&bytes) else { return nil }
                    if name == "created" { parameters.created = number } else { parameters.expires = number }
                case "nonce", "alg", "keyid", "tag":
                    guard let text = quoted(&bytes) else { return nil }
                    switch name {
                    case "nonce": parameters.nonce = text
                    case "alg": parameters.algorithm = text
                    case "keyid": parameters.keyID = text
                    default: parameters.tag = text
                    }
                default: return nil
                }
            }
            let serialized = String(decoding: all[start..<bytes.startIndex], as: UTF8.self)
            guard !members.contains(where: { $0.label == label }) else { return nil }
            members.append(Input(label: label, components: components, parameters: parameters, serialized: serialized))
            guard let more = separator(&bytes) else { return nil }
            if !more { return members }
        }
    }

    /// The members of a one-line `Signature` (label → decoded bytes), or nil (also past `limit`).
    static func signatures(_ value: String, limit: Int = .max) -> [(label: String, bytes: [UInt8])]? {
        var members: [(label: String, bytes: [UInt8])] = []
        var bytes = Array(value.utf8)[...]
        while true {
            guard members.count < limit, let label = token(&bytes), bytes.popFirst() == UInt8(ascii: "="), bytes.popFirst() == UInt8(ascii: ":") else {
                return nil
            }
            let original = bytes
            while let byte = bytes.first, isBase64(byte) { bytes.removeFirst() }
            let text = original[original.startIndex..<bytes.startIndex]
            guard bytes.popFirst() == UInt8(ascii: ":"), let decoded = Base64.decode(String(decoding: text, as: UTF8.self)), !decoded.isEmpty,
                  !members.contains(where: { $0.label == label })
            else { return nil }
            members.append((label, decoded))
            guard let more = separator(&bytes) else { return nil }
            if !more { return members }
        }
    }

    /// After a member: the end (false), `,` and optional spaces before another member (true),
    /// or anything else (nil: give up).
    private static func separator(_ bytes: inout ArraySlice<UInt8>) -> Bool? {
        guard !bytes.isEmpty else { return false }
        guard bytes.popFirst() == UInt8(ascii: ",") else { return nil }
        while bytes.first == UInt8(ascii: " ") { bytes.removeFirst() }
        return bytes.isEmpty ? nil : true
    }

    /// A key: a lower-case letter or `*`, then lower-case letters, digits, `_ - . *`.
    private static func token(_ bytes: inout ArraySlice<UInt8>) -> String? {
        guard let first = bytes.first, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first) || first == UInt8(ascii: "*") else { return nil }
        let original = bytes
        while let byte = bytes.first,
              (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "*")
        {
            bytes.removeFirst()
        }
        return String(decoding: original[original.startIndex..<bytes.startIndex], as: UTF8.self)
    }

    /// A string of printable ASCII without escapes (`"` and `\` make the caller give up).
    private static func quoted(_ bytes: inout ArraySlice<UInt8>) -> String? {
        guard bytes.popFirst() == UInt8(ascii: "\"") else { return nil }
        let original = bytes
        while let byte = bytes.first, byte != UInt8(ascii: "\"") {
            guard (0x20...0x7E).contains(byte), byte != UInt8(ascii: "\\") else { return nil }
            bytes.removeFirst()
        }
        let text = original[original.startIndex..<bytes.startIndex]
        guard bytes.popFirst() == UInt8(ascii: "\"") else { return nil }
        return String(decoding: text, as: UTF8.self)
    }

    /// A non-negative integer of 1–15 digits, written without leading zeros.
    private static func integer(_ bytes: inout ArraySlice<UInt8>) -> Int64? {
        guard let first = bytes.first, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { return nil }
        var value: Int64 = 0
        var digits = 0
        while let byte = bytes.first, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
            value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            digits += 1
            bytes.removeFirst()
            guard digits <= 15 else { return nil }
        }
        guard digits == 1 || first != UInt8(ascii: "0") else { return nil }
        return value
    }

    /// A component without parameters that the general reader accepts: a known derived
    /// component, or a lower-case field name.
    private static func component(_ name: String) -> SignatureComponent? {
        guard !name.isEmpty else { return nil }
        if name.hasPrefix("@") {
            guard SignatureComponent.derived.contains(name), name != "@query-param" else { return nil }
        } else {
            guard name.utf8.allSatisfy(SignatureComponent.isTokenByte) else { return nil }
        }
        return SignatureComponent(name)
    }

    private static func isBase64(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "/")
            || byte == UInt8(ascii: "=")
    }
}
