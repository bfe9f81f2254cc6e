import Foundation
import SignetCore
import SignetPKCS11

/// The last guard before a message reaches the terminal: every `pkcs11:` URI in it (any case of
/// the scheme) loses its PIN — `PKCS11URI.redacted` where that leaves nothing that could be one,
/// else all but the scheme (`pkcs11:…`) — whoever wrote the message: a command, a library, or
/// ArgumentParser quoting an argument it did not expect.
enum SecretRedaction {
    static func redacted(_ message: String) -> String {
        guard message.range(of: "pkcs11:", options: .caseInsensitive) != nil else { return message }
        var result = ""
        var rest = Substring(message)
        while let found = rest.range(of: "pkcs11:", options: .caseInsensitive) {
            result += rest[..<found.lowerBound]
            let end = rest[found.lowerBound...].firstIndex { $0.isWhitespace || $0 == "'" || $0 == "\"" || $0 == "`" } ?? rest.endIndex
            result += redactedURI(String(rest[found.lowerBound..<end]))
            rest = rest[end...]
        }
        return result + rest
    }

    /// One URI: its PIN hidden, or, when a PIN might still show, only its scheme.
    static func redactedURI(_ uri: String) -> String {
        let scheme = String(uri.prefix(7))
        let hidden = PKCS11URI.redacted(scheme.lowercased() + uri.dropFirst(7))
        let folded = Self.folded(hidden)
        // Anything still spelling a PIN attribute with a value other than the mask.
        var mightShow = false
        var search = folded[...]
        while let hit = search.range(of: "value") {
            // The rest of this attribute: whatever junk comes before its `=`, then its value.
            let attribute = search[hit.upperBound...].prefix { $0 != "&" && $0 != ";" && $0 != "?" }
            if let equals = attribute.firstIndex(of: "="), !attribute[attribute.index(after: equals)...].hasPrefix("***") { mightShow = true }
            search = search[hit.upperBound...]
        }
        if folded.contains("pin") && mightShow { return scheme + "…" }
        return scheme + hidden.dropFirst(7)
    }

    /// Percent-decoded (what decodes), lower-cased, with every dash-like character a `-`.
    static func folded(_ text: String) -> String {
        let decoded = text.removingPercentEncoding ?? text
        return String(decoded.lowercased().unicodeScalars.map { scalar -> Character in
            scalar.properties.generalCategory == .dashPunctuation ? "-" : Character(scalar)
        })
    }

    /// A message as it may reach a terminal: PINs hidden, then every control character escaped
    /// line by line (the line breaks a multi-line message has are kept).
    static func forTerminal(_ message: String) -> String {
        redacted(message).split(separator: "\n", omittingEmptySubsequences: false)
            .map { PrintableText.terminalSafe(String($0)) }.joined(separator: "\n")
    }
}
