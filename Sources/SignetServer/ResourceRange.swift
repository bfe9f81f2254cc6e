import Foundation

/// What a GET of a stored resource gets, from its `If-None-Match`, `Range` and `If-Range`
/// fields (RFC 9110 §13.1.2, §14.2, §13.1.5).
public enum ResourceAnswer: Sendable, Equatable {
    /// 304: the client holds this version already.
    case notModified
    /// 200 with the whole bundle.
    case full
    /// 206 with these bytes.
    case partial(ClosedRange<Int64>)
    /// 416: the range starts past the end.
    case unsatisfiable

    /// The answer for a resource of `size` bytes and entity tag `etag` (quoted).
    ///
    /// A range that cannot be parsed, several ranges, and a range whose `If-Range` names
    /// another tag are answered with the whole bundle, as RFC 9110 allows; only a single byte
    /// range is served in part.
    public static func decide(etag: String, size: Int64, ifNoneMatch: String?, range: String?, ifRange: String?) -> ResourceAnswer {
        if let ifNoneMatch {
            let tags = ifNoneMatch.split(separator: ",").map { tag in
                let trimmed = tag.trimmingCharacters(in: .whitespaces)
                return trimmed.hasPrefix("W/") ? String(trimmed.dropFirst(2)) : trimmed
            }
            if tags.contains("*") || tags.contains(etag) { return .notModified }
        }
        guard let range else { return .full }
        if let ifRange, ifRange.trimmingCharacters(in: .whitespaces) != etag { return .full }
        guard range.hasPrefix("bytes="), !range.contains(",") else { return .full }
        let spec = range.dropFirst("bytes=".count).trimmingCharacters(in: .whitespaces)
        guard let dash = spec.firstIndex(of: "-") else { return .full }
        let first = spec[..<dash], last = spec[spec.index(after: dash)...]
        guard first.allSatisfy(\.isASCIIDigit), last.allSatisfy(\.isASCIIDigit), first.count <= 18, last.count <= 18 else { return .full }
        if first.isEmpty {
            // The last N bytes.
            guard let count = Int64(last), count > 0, size > 0 else { return last.isEmpty ? .full : .unsatisfiable }
            return .partial(max(0, size - count)...(size - 1))
        }
        guard let start = Int64(first) else { return .full }
        guard start < size else { return .unsatisfiable }
        if last.isEmpty { return .partial(start...(size - 1)) }
        guard let end = Int64(last), end >= start else { return .full }
        return .partial(start...min(end, size - 1))
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
