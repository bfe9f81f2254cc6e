import Foundation

extension UserInput {
    /// The stored forms an address typed at sign-in (or named by an admin) may have: its
    /// normalised form first, then the forms servers before the current rules stored — trimmed
    /// and lower-cased only, as typed and decomposed (NFD) — so that an account registered
    /// before the rules does not lose its owner. An address the current rules refuse (a
    /// look-alike) is still looked up in those older forms: finding such an account needs its
    /// password, and refusing would lock its owner out. Throws what ``normalizedEmail(_:)``
    /// throws when not even the old shape (one `@`, at most 254 bytes) holds.
    static func lookupForms(_ text: String) throws -> [String] {
        let legacy = text.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        let olderForms = [legacy, legacy.decomposedStringWithCanonicalMapping]
        do {
            let email = try normalizedEmail(text)
            return ([email] + olderForms).uniqued
        } catch {
            guard !legacy.isEmpty, legacy.utf8.count <= maximumEmailLength, legacy.split(separator: "@", omittingEmptySubsequences: false).count == 2,
                  legacy.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F })
            else { throw error }
            return olderForms.uniqued
        }
    }
}

extension Array where Element == String {
    /// Without repeats, compared byte for byte: Swift's `==` holds NFC and NFD spellings equal,
    /// and the database does not.
    fileprivate var uniqued: [String] {
        var seen = Set<[UInt8]>()
        return filter { seen.insert([UInt8]($0.utf8)).inserted }
    }
}
