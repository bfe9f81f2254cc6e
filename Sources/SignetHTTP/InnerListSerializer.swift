import RawStructuredFieldValues

/// Serialises the inner lists of `Signature-Input` — the `@signature-params` line of every
/// signature base — without swift-http-structured-headers' generic serializer, which is not
/// inlinable and so runs unspecialised, at a cost comparable to the rest of a verification.
///
/// It handles the kinds signature inputs hold: strings, tokens, integers, booleans and byte
/// sequences, in items and parameters. For anything else (decimals, dates, display strings) or
/// a value it would have to refuse, it returns nil and the caller uses the library, whose
/// result or refusal stands. A test holds it to the library over the generated corpus of the
/// structured-dictionary differential test.
enum InnerListSerializer {
    /// The serialisation of `list`, or nil to leave it to the library.
    static func serialize(_ list: InnerList) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(128)
        out.append(UInt8(ascii: "("))
        var first = true
        for item in list.bareInnerList {
            if !first { out.append(UInt8(ascii: " ")) }
            first = false
            guard append(item.rfc9651BareItem, to: &out), appendParameters(item.rfc9651Parameters, to: &out) else { return nil }
        }
        out.append(UInt8(ascii: ")"))
        guard appendParameters(list.rfc9651Parameters, to: &out) else { return nil }
        return String(decoding: out, as: UTF8.self)
    }

    private static func appendParameters(_ parameters: OrderedMap<String, RFC9651BareItem>, to out: inout [UInt8]) -> Bool {
        for (key, value) in parameters {
            guard isKey(key) else { return false }
            out.append(UInt8(ascii: ";"))
            out.append(contentsOf: key.utf8)
            if case .bool(true) = value { continue }
            out.append(UInt8(ascii: "="))
            guard append(value, to: &out) else { return false }
        }
        return true
    }

    private static func append(_ item: RFC9651BareItem, to out: inout [UInt8]) -> Bool {
        switch item {
        case .integer(let value):
            guard (-999_999_999_999_999...999_999_999_999_999).contains(value) else { return false }
            out.append(contentsOf: String(value).utf8)
        case .string(let value):
            out.append(UInt8(ascii: "\""))
            for byte in value.utf8 {
                guard (0x20...0x7E).contains(byte) else { return false }
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { out.append(UInt8(ascii: "\\")) }
                out.append(byte)
            }
            out.append(UInt8(ascii: "\""))
        case .token(let value):
            guard isToken(value) else { return false }
            out.append(contentsOf: value.utf8)
        case .bool(let value):
            out.append(contentsOf: value ? Array("?1".utf8) : Array("?0".utf8))
        case .undecodedByteSequence(let value):
            guard value.utf8.allSatisfy(isBase64Character) else { return false }
            out.append(UInt8(ascii: ":"))
            out.append(contentsOf: value.utf8)
            out.append(UInt8(ascii: ":"))
        default:
            return false  // decimals, dates, display strings: the library
        }
        return true
    }

    private static func isKey(_ key: String) -> Bool {
        guard let first = key.utf8.first, (0x61...0x7A).contains(first) || first == UInt8(ascii: "*") else { return false }
        return key.utf8.allSatisfy { byte in
            (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "*")
        }
    }

    private static func isToken(_ token: String) -> Bool {
        guard let first = token.utf8.first, (0x41...0x5A).contains(first) || (0x61...0x7A).contains(first) || first == UInt8(ascii: "*") else {
            return false
        }
        return token.utf8.allSatisfy { byte in
            (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
                || Array("!#$%&'*+-.^_`|~:/".utf8).contains(byte)
        }
    }

    private static func isBase64Character(_ byte: UInt8) -> Bool {
        (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
            || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "=")
    }
}
