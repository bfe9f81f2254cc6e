/// The ASCII armor of age files (age-encryption.org/v1, "ASCII armor"): the strict PEM of
/// RFC 7468 §3 with the label `AGE ENCRYPTED FILE`, padded base64 in lines of 64 columns,
/// the last one at most 64.
///
/// The decoder is as strict as the spec asks, so an armored file is not malleable either:
/// canonical base64, every line full but the last, no empty line, no header, nothing after
/// the END line but white space. It accepts CR LF line ends (the spec allows it) and white
/// space before the BEGIN line and after the END line, up to ``AgeArmor/maximumWhitespace``
/// bytes each (as age does).
enum AgeArmor {
    /// The first line of an armored file.
    static let beginLine = Array("-----BEGIN AGE ENCRYPTED FILE-----".utf8)
    /// The last line of an armored file.
    static let endLine = Array("-----END AGE ENCRYPTED FILE-----".utf8)
    /// The width of a full line.
    static let columns = 64
    /// The bytes a full line carries.
    static let bytesPerLine = 48
    /// The most white space accepted before the BEGIN line, and after the END line.
    static let maximumWhitespace = 1024

    /// Whether `input` starts (after white space) with five dashes: a binary age file starts
    /// with `age-encryption.org/`, so anything starting like PEM is read as armor, and a bad
    /// BEGIN line is reported as such.
    static func isArmored(_ input: AgeBufferedSource) throws -> Bool {
        let start = try input.peek(upTo: maximumWhitespace + 5)
        guard let first = start.firstIndex(where: { !isWhitespace($0) }) else { return false }
        return start[first...].starts(with: beginLine.prefix(5))
    }

    /// Space, tab, LF, vertical tab, form feed, CR.
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || (byte >= 0x09 && byte <= 0x0D)
    }
}

/// Armors what is written to it and passes it on to the layer below, a line at a time.
final class AgeArmorEncoder: AgeByteSink {
    private let lower: any AgeByteSink
    private var pending: [UInt8] = []
    private var started = false

    /// An encoder writing to `lower`.
    init(_ lower: any AgeByteSink) { self.lower = lower }

    func write(_ bytes: [UInt8]) throws {
        var output: [UInt8] = []
        startIfNeeded(&output)
        pending += bytes
        let full = pending.count / AgeArmor.bytesPerLine * AgeArmor.bytesPerLine
        output.reserveCapacity(output.count + full / AgeArmor.bytesPerLine * (AgeArmor.columns + 1))
        var offset = 0
        while offset < full {
            AgeBase64.append(pending[offset..<(offset + AgeArmor.bytesPerLine)], padded: true, to: &output)
            output.append(0x0A)
            offset += AgeArmor.bytesPerLine
        }
        pending.removeFirst(full)
        try lower.write(output)
    }

    func finish() throws {
        var output: [UInt8] = []
        startIfNeeded(&output)
        // The last line is the short one; when the data fills its lines, END follows the last
        // full line directly, with no empty line between.
        if !pending.isEmpty {
            AgeBase64.append(pending, padded: true, to: &output)
            output.append(0x0A)
            pending = []
        }
        output += AgeArmor.endLine
        output.append(0x0A)
        try lower.write(output)
        try lower.finish()
    }

    private func startIfNeeded(_ output: inout [UInt8]) {
        guard !started else { return }
        started = true
        output += AgeArmor.beginLine
        output.append(0x0A)
    }
}

/// Reads an armored file from the layer below and yields the age file it holds, a line at a
/// time, so armored files stream in constant memory too.
final class AgeArmorDecoder: AgeByteSource {
    private enum State { case beforeBegin, inBody, finished }

    private let lower: AgeBufferedSource
    private let source: String
    private var state = State.beforeBegin
    private var line = 0
    private var decoded: [UInt8] = []
    private var offset = 0

    /// A decoder over `lower`; errors name `source`.
    init(_ lower: AgeBufferedSource, source: String) {
        self.lower = lower
        self.source = source
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        var written = 0
        while written < buffer.count {
            if offset < decoded.count {
                let count = min(buffer.count - written, decoded.count - offset)
                UnsafeMutableRawBufferPointer(rebasing: buffer[written..<(written + count)])
                    .copyBytes(from: decoded[offset..<(offset + count)])
                offset += count
                written += count
                continue
            }
            switch state {
            case .finished: return written
            case .beforeBegin: try readBegin()
            case .inBody: try decodeLine()
            }
        }
        return written
    }

    private func malformed(_ detail: String) -> AgeError {
        .malformedHeader(source: source, detail: "armor line \(line): \(detail)")
    }

    /// The next line without its LF and without one CR before it; nil at the end.
    private func nextLine(limit: Int) throws -> AgeLine? {
        guard var next = try lower.readLine(limit: limit) else { return nil }
        line += 1
        if next.bytes.last == 0x0D { next.bytes.removeLast() }
        return next
    }

    /// Skips blank lines, then requires the BEGIN line.
    private func readBegin() throws {
        var skipped = 0
        while true {
            guard let next = try nextLine(limit: AgeArmor.maximumWhitespace) else {
                throw malformed("the input holds no \"-----BEGIN AGE ENCRYPTED FILE-----\" line")
            }
            if next.bytes.allSatisfy(AgeArmor.isWhitespace) {
                skipped += next.bytes.count + 1
                guard skipped <= AgeArmor.maximumWhitespace else {
                    throw malformed("more than \(AgeArmor.maximumWhitespace) bytes of white space before the armor")
                }
                continue
            }
            guard next.terminated, next.bytes == AgeArmor.beginLine else {
                throw malformed("the armor must begin with the line \"-----BEGIN AGE ENCRYPTED FILE-----\"")
            }
            state = .inBody
            return
        }
    }

    /// Decodes one line of base64 into `decoded`, or reads the END line.
    private func decodeLine() throws {
        guard let next = try nextLine(limit: AgeArmor.columns + 1) else {
            throw malformed("the armor ends without its END line")
        }
        if next.bytes == AgeArmor.endLine {
            try finishAfterEnd()
            return
        }
        guard !next.bytes.isEmpty else { throw malformed("an empty line inside the armor") }
        guard next.bytes.count <= AgeArmor.columns else { throw malformed("a line longer than 64 columns") }
        guard next.terminated else { throw malformed("the armor ends without its END line") }
        guard let bytes = AgeBase64.decodePadded(next.bytes) else {
            throw malformed("not canonical padded base64 (bad character, length, padding or trailing bits)")
        }
        decoded = bytes
        offset = 0
        if bytes.count < AgeArmor.bytesPerLine {
            // A short line is the last: the END line must follow it.
            guard let end = try nextLine(limit: AgeArmor.columns + 1), end.bytes == AgeArmor.endLine else {
                throw malformed("a line shorter than 64 columns must be the last, followed by the END line")
            }
            try finishAfterEnd()
        }
    }

    /// After the END line, only white space may follow, and not much of it.
    private func finishAfterEnd() throws {
        state = .finished
        let trailing = UnsafeMutableRawBufferPointer.allocate(byteCount: AgeArmor.maximumWhitespace + 1, alignment: 1)
        defer { trailing.deallocate() }
        let count = try lower.readFull(into: trailing)
        guard trailing[0..<count].allSatisfy(AgeArmor.isWhitespace) else {
            throw malformed("data after the END line")
        }
        guard count <= AgeArmor.maximumWhitespace else {
            throw malformed("more than \(AgeArmor.maximumWhitespace) bytes of white space after the END line")
        }
    }
}
