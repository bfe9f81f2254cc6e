import Foundation
import SignetCore

/// Rules for what users type: e-mail normalisation and the limits on every field.
///
/// Two addresses a person cannot tell apart must not become two accounts, and a name must not
/// be able to rearrange the text shown around it (docs/server.md, "Which e-mail addresses and
/// names are accepted").
public enum UserInput {
    /// The longest e-mail address, in bytes of UTF-8 (RFC 5321's path limit; RFC 6531 counts
    /// octets too).
    public static let maximumEmailLength = 254

    /// The most combining marks in a row (UAX #15's stream-safe limit).
    static let maximumCombiningMarks = 30

    /// The address as it is stored and compared: trimmed, lower-cased, in NFC.
    ///
    /// Refused (422 on `email`), each naming the code point: control, invisible and formatting
    /// characters (zero-width space, soft hyphen, joiners, variation selectors, bidi controls);
    /// anything NFKC would change (full-width letters, ligatures); punctuation or symbols outside
    /// ASCII; a local part or domain label that mixes scripts (UTS #39's single-script rule, with
    /// Han and kana as Japanese, Han and Hangul as Korean); a Cyrillic or Greek one made only of
    /// letters that look Latin. Normalising the result again gives it unchanged.
    public static func normalizedEmail(_ text: String) throws -> String {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw emailError("is empty") }
        // Normalisation reorders combining marks: bound its work before it starts.
        guard trimmed.utf8.count <= 4 * maximumEmailLength else { throw emailError("is longer than \(maximumEmailLength) bytes of UTF-8") }
        let email = trimmed.lowercased().precomposedStringWithCanonicalMapping
        guard email.utf8.count <= maximumEmailLength else { throw emailError("is longer than \(maximumEmailLength) bytes of UTF-8") }

        for scalar in email.unicodeScalars {
            if let problem = forbidden(scalar, allowingJoiners: false) { throw emailError(problem) }
            if scalar.properties.isWhitespace { throw emailError("contains a space (\(codePoint(scalar)))") }
        }
        if let problem = compatibilityProblem(email) { throw emailError(problem) }
        if let symbol = email.unicodeScalars.first(where: { !$0.isASCII && !isLetterMarkOrDigit($0) }) {
            throw emailError("contains \(codePoint(symbol)), which is not a letter, a mark or a digit (the only characters accepted outside ASCII)")
        }

        let scalars = Array(email.unicodeScalars)
        let parts = scalars.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty else { throw emailError("is not an e-mail address") }
        let labels = parts[1].split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2, labels.allSatisfy({ !$0.isEmpty }) else { throw emailError("is not an e-mail address") }

        // Each part is judged alone, as UTS #39 judges each label: a Latin local part may have a
        // Greek domain.
        var units: [(ArraySlice<Unicode.Scalar>, String)] = [(parts[0], "the local part")]
        for label in labels { units.append((label, "a domain label")) }
        var scripts: [ScriptSet] = []
        for (unit, name) in units {
            if let first = unit.first, isMark(first) {
                throw emailError("\(name) begins with a combining mark (\(codePoint(first)))")
            }
            scripts.append(try singleScript(unit, name))
        }
        // A Cyrillic or Greek top-level domain (.рф, .ελ) says the whole address is read in that
        // script; elsewhere an all-look-alike unit passes for Latin.
        let topLevel = scripts[scripts.count - 1]
        for ((unit, name), script) in zip(units, scripts) where topLevel == .all || topLevel.intersection(script).isEmpty {
            if let letter = ScriptSet.latinLookAlike(unit) {
                throw emailError("\(name) is written only with Cyrillic or Greek letters that look like Latin ones (\(codePoint(letter)))")
            }
        }
        return email
    }

    static func checkPassword(_ password: String, allowed: ClosedRange<Int>) throws {
        guard password.count >= allowed.lowerBound else {
            throw ServerError.unprocessable(field: "password", detail: "must be at least \(allowed.lowerBound) characters")
        }
        guard password.count <= allowed.upperBound, password.utf8.count <= PasswordHasher.maximumPasswordLength else {
            throw ServerError.unprocessable(
                field: "password", detail: "must be at most \(allowed.upperBound) characters and \(PasswordHasher.maximumPasswordLength) bytes of UTF-8")
        }
    }

    /// A display name as it is stored: trimmed and in NFC, at most `maximum` characters and
    /// `maximumBytes` bytes of UTF-8 (a few characters can carry kilobytes of combining marks).
    ///
    /// Refused (422 on `displayName`): control characters and line breaks, bidi controls (which
    /// reorder the text shown around the name), other invisible and formatting characters but
    /// the joiners and variation selectors that emoji and Indic scripts need, unassigned code
    /// points, and more than 30 combining marks in a row.
    public static func displayName(_ text: String, maximum: Int, maximumBytes: Int) throws -> String {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.utf8.count <= 4 * maximumBytes else { throw nameError("is longer than \(maximumBytes) bytes of UTF-8") }
        let name = trimmed.precomposedStringWithCanonicalMapping
        guard !name.isEmpty else { throw nameError("is empty") }
        guard name.utf8.count <= maximumBytes else { throw nameError("is longer than \(maximumBytes) bytes of UTF-8") }
        guard name.count <= maximum else { throw nameError("is longer than \(maximum) characters") }
        var marks = 0
        for scalar in name.unicodeScalars {
            if let problem = forbidden(scalar, allowingJoiners: true) { throw nameError(problem) }
            marks = scalar.properties.canonicalCombiningClass == .notReordered ? 0 : marks + 1
            guard marks <= maximumCombiningMarks else {
                throw nameError("has more than \(maximumCombiningMarks) combining marks on one character")
            }
        }
        return name
    }
}

extension UserInput {
    /// Why `scalar` may not stand in an address or a name, or nil. With `allowingJoiners`, ZWJ,
    /// ZWNJ and variation selectors pass: emoji sequences (👩‍💻, ❤️) and Indic scripts need them.
    static func forbidden(_ scalar: Unicode.Scalar, allowingJoiners: Bool) -> String? {
        let properties = scalar.properties
        switch properties.generalCategory {
        case .control: return "contains a control character (\(codePoint(scalar)))"
        case .lineSeparator, .paragraphSeparator: return "contains a line break (\(codePoint(scalar)))"
        case .unassigned, .surrogate: return "contains \(codePoint(scalar)), which is not an assigned character"
        default: break
        }
        if properties.isBidiControl {
            return "contains a bidirectional control character (\(codePoint(scalar))), which reorders the text around it"
        }
        if properties.generalCategory == .format || properties.isDefaultIgnorableCodePoint {
            if allowingJoiners && (properties.isJoinControl || properties.isVariationSelector) { return nil }
            return "contains an invisible or formatting character (\(codePoint(scalar)))"
        }
        return nil
    }

    /// Why NFKC would change `email` (it holds a compatibility character: a full-width letter,
    /// a ligature, a superscript), or nil when it would not.
    static func compatibilityProblem(_ email: String) -> String? {
        guard !email.precomposedStringWithCompatibilityMapping.unicodeScalars.elementsEqual(email.unicodeScalars) else { return nil }
        let culprit = email.unicodeScalars.first { scalar in
            let alone = String(scalar)
            return !alone.decomposedStringWithCompatibilityMapping.unicodeScalars.elementsEqual(alone.decomposedStringWithCanonicalMapping.unicodeScalars)
        }
        let which = culprit.map { "\(codePoint($0)), " } ?? ""
        return "contains \(which)a compatibility form that NFKC normalisation changes (full-width letters, ligatures, superscripts): type the plain character"
    }

    /// The scripts all of `unit`'s letters share (UTS #39 §5.1), or a refusal naming the first
    /// letter that shares none with those before it.
    static func singleScript(_ unit: ArraySlice<Unicode.Scalar>, _ name: String) throws -> ScriptSet {
        var resolved = ScriptSet.all
        for scalar in unit {
            guard let scripts = ScriptSet.of(scalar) else {
                throw emailError("contains \(codePoint(scalar)), which is not in this server's script table (Unicode \(ScriptSet.unicodeVersion))")
            }
            let next = resolved.intersection(scripts)
            guard !next.isEmpty else {
                throw emailError("\(name) mixes scripts: \(codePoint(scalar)) (\(scripts.name)) after \(resolved.name) letters")
            }
            resolved = next
        }
        return resolved
    }

    static func isLetterMarkOrDigit(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter, .decimalNumber: return true
        default: return isMark(scalar)
        }
    }

    static func isMark(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: return true
        default: return false
        }
    }

    /// `U+200B`: how a refusal names a code point (the character itself may be invisible).
    static func codePoint(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    private static func emailError(_ detail: String) -> ServerError { .unprocessable(field: "email", detail: detail) }

    private static func nameError(_ detail: String) -> ServerError { .unprocessable(field: "displayName", detail: detail) }
}
