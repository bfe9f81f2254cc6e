extension PKCS11URI {
    /// `text` with every `pin-value` hidden, for messages about a URI that may not parse.
    ///
    /// `text` is cut as the parser cuts it (the path, up to the first `?`, at each `;`; the
    /// query at each `&`). A piece named `pin-value` — percent-decoded, in any case — shows
    /// whole as `pin-value=***` (`?pin-value=1234;TAIL` → `?pin-value=***`), and the query
    /// pieces right after it that are not a well-formed `name=value` the query accepts (a PIN
    /// with an `&`) as `***` (`pin-value=12&34` → `pin-value=***&***`). One misplaced in the
    /// path hides the rest of the path, up to the `?`. Everything else shows as written.
    public static func redacted(_ text: String) -> String {
        let bytes = Array(text.utf8)
        let question = bytes.firstIndex(of: UInt8(ascii: "?"))
        var hiding = false
        var path: [String] = []
        for component in bytes[..<(question ?? bytes.endIndex)].split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: false) {
            if let scheme = pinValueScheme(component) {
                // Whatever follows up to the `?` may be the rest of the PIN (a `;` in it).
                path.append(scheme + "pin-value=***")
                hiding = true
                break
            }
            path.append(String(decoding: component, as: UTF8.self))
        }
        guard let question else { return path.joined(separator: ";") }
        var query: [String] = []
        for component in bytes[(question + 1)...].split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: false) {
            if let scheme = pinValueScheme(component) {
                query.append(scheme + "pin-value=***")
                hiding = true
            } else if hiding && !isKnownQueryAttribute(component) {
                query.append("***")
            } else {
                query.append(String(decoding: component, as: UTF8.self))
                hiding = false
            }
        }
        return path.joined(separator: ";") + "?" + query.joined(separator: "&")
    }

    /// For a piece of a URI named `pin-value` (percent-decoded, in any case, white space left
    /// out, after any scheme), what precedes the name: `pkcs11:` for the first piece of the
    /// path, else empty. Nil for any other piece.
    static func pinValueScheme(_ component: ArraySlice<UInt8>) -> String? {
        let name = component[..<(component.firstIndex(of: UInt8(ascii: "=")) ?? component.endIndex)]
        var decoded: [UInt8] = []
        var index = name.startIndex
        while index < name.endIndex {
            var byte = name[index]
            index += 1
            if byte == UInt8(ascii: "%"), name.endIndex - index >= 2, let high = hexValue(name[index]), let low = hexValue(name[index + 1]) {
                byte = high << 4 | low
                index += 2
            }
            if [0x20, 0x09, 0x0A, 0x0D].contains(byte) { continue }
            decoded.append(byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte)
        }
        if let colon = decoded.lastIndex(of: UInt8(ascii: ":")) { decoded.removeSubrange(...colon) }
        guard decoded == Array("pin-value".utf8) else { return nil }
        return name.lastIndex(of: UInt8(ascii: ":")).map { String(decoding: name[...$0], as: UTF8.self) } ?? ""
    }

    /// Whether a query piece is a well-formed `name=value` whose name the parser accepts there.
    static func isKnownQueryAttribute(_ component: ArraySlice<UInt8>) -> Bool {
        guard let parsed = try? attribute(component, literal: Self.isQueryLiteral, uri: "") else { return false }
        return ["module-path", "module-name", "pin-source", "pin-value"].contains(parsed.0) || parsed.0.hasPrefix("x-")
    }
}
