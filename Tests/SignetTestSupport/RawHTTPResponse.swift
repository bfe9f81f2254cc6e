import Foundation

/// One HTTP/1.1 response as a server put it on the wire, read by a test that speaks raw bytes
/// (``LoopbackSocket``): the status, the header fields and the body (de-chunked).
public struct RawHTTPResponse: Sendable, CustomStringConvertible {
    /// A header field as it came.
    public struct Field: Sendable {
        public var name: String
        public var value: String
    }

    public var status: Int
    public var fields: [Field]
    public var body: [UInt8]

    /// The first value of the field `name` (any case).
    public func field(_ name: String) -> String? {
        fields.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// The body decoded as UTF-8.
    public var text: String { String(decoding: body, as: UTF8.self) }

    public var description: String { "\(status) \(text.prefix(300))" }

    /// The status and header fields of the response `bytes` begin with (its body left empty),
    /// and where its body begins; nil while the head is incomplete (or is not HTTP/1). For an
    /// answer that may never come whole: a download cut short.
    public static func parseHead(_ bytes: [UInt8]) -> (response: RawHTTPResponse, bodyStart: Int)? {
        guard let headEnd = find([13, 10, 13, 10], in: bytes, from: 0) else { return nil }
        var lines = String(decoding: bytes[0..<headEnd], as: UTF8.self).components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ", maxSplits: 2)
        guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/1."), let status = Int(statusLine[1]) else { return nil }
        let fields = lines.compactMap { line -> Field? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return Field(name: String(line[..<colon]), value: line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        return (RawHTTPResponse(status: status, fields: fields, body: []), headEnd + 4)
    }

    /// The first response in `bytes`; nil while it is incomplete (or is not HTTP/1). A body
    /// with neither a length nor chunks ends where the stream does: complete once `ended`.
    public static func parse(_ bytes: [UInt8], ended: Bool) -> RawHTTPResponse? {
        guard let head = parseHead(bytes) else { return nil }
        var response = head.response
        let bodyStart = head.bodyStart
        if (100..<200).contains(response.status) || response.status == 204 || response.status == 304 { return response }
        if response.field("Transfer-Encoding")?.lowercased().contains("chunked") == true {
            guard let body = dechunk(bytes, from: bodyStart) else { return nil }
            response.body = body
        } else if let length = response.field("Content-Length").flatMap({ Int($0) }) {
            guard bytes.count - bodyStart >= length else { return nil }
            response.body = Array(bytes[bodyStart..<(bodyStart + length)])
        } else {
            guard ended else { return nil }
            response.body = Array(bytes[bodyStart...])
        }
        return response
    }

    /// The body of a chunked message starting at `start`, or nil while it is incomplete.
    static func dechunk(_ bytes: [UInt8], from start: Int) -> [UInt8]? {
        var body: [UInt8] = []
        var position = start
        while true {
            guard let lineEnd = find([13, 10], in: bytes, from: position) else { return nil }
            let sizeText = String(decoding: bytes[position..<lineEnd], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else { return nil }
            position = lineEnd + 2
            if size == 0 {
                // Trailer fields, if any, then an empty line.
                if bytes.count >= position + 2, bytes[position] == 13, bytes[position + 1] == 10 { return body }
                return find([13, 10, 13, 10], in: bytes, from: position) == nil ? nil : body
            }
            guard bytes.count >= position + size + 2 else { return nil }
            body += bytes[position..<(position + size)]
            position += size + 2
        }
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard haystack.count >= needle.count, start <= haystack.count - needle.count else { return nil }
        for index in start...(haystack.count - needle.count) where haystack[index..<(index + needle.count)].elementsEqual(needle) {
            return index
        }
        return nil
    }
}

extension LoopbackSocket {
    /// Sends `request` and waits for the whole response to it (what arrived before is
    /// dropped); nil when the peer closes the connection without one.
    public func exchange(_ request: [UInt8], deadline: ContinuousClock.Instant = TestTimeouts.deadline) async throws -> RawHTTPResponse? {
        clearReceived()
        try await write(request, deadline: deadline)
        return try await response(deadline: deadline)
    }

    /// Waits for a whole response; nil when the peer closes the connection without one. Throws
    /// when the hang guard runs out.
    public func response(deadline: ContinuousClock.Instant = TestTimeouts.deadline) async throws -> RawHTTPResponse? {
        while true {
            let ended = drain()
            if let response = RawHTTPResponse.parse(received, ended: ended) { return response }
            if ended { return nil }
            guard ContinuousClock.now < deadline else { throw LoopbackSocketError("no whole answer before the hang guard ran out") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}
