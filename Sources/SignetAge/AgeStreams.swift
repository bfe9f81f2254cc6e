import SignetCore

/// One layer that bytes are pulled from while decrypting: the caller's reader, the armor
/// decoder, or a buffer over either.
protocol AgeByteSource: AnyObject {
    /// Reads up to `buffer.count` bytes (`buffer` is never empty) and returns how many; 0 only
    /// at the end, and from then on.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int
}

/// One layer that bytes are pushed into while encrypting: the caller's writer or the armor
/// encoder.
protocol AgeByteSink: AnyObject {
    /// Takes `bytes`, in order.
    func write(_ bytes: [UInt8]) throws
    /// Takes the bytes `buffer` points to, in order; they are valid only during the call.
    func write(buffer: UnsafeRawBufferPointer) throws
    /// Flushes whatever the layer still holds; called once, after the last write.
    func finish() throws
}

extension AgeByteSink {
    /// By default a buffer is written as an array (a copy).
    func write(buffer: UnsafeRawBufferPointer) throws {
        try write(Array(buffer))
    }
}

extension AgeByteSource {
    /// Reads until `buffer` is full or the input ends; returns how many bytes were read.
    func readFull(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        var filled = 0
        while filled < buffer.count {
            let count = try read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
            if count == 0 { break }
            filled += count
        }
        return filled
    }
}

extension AgeError {
    /// What an error thrown by a caller's reader or writer becomes: an ``AgeError`` passes
    /// through, a `SignetCoreError.io` keeps the path it names, anything else is an I/O failure
    /// of `path`.
    static func fromCaller(_ error: any Error, path: String) -> AgeError {
        if let error = error as? AgeError { return error }
        if let error = error as? SignetCoreError, case .io(let named, let detail) = error {
            return .io(path: named, detail: detail)
        }
        return .io(path: path, detail: String(describing: error))
    }
}

/// The caller's reader as a source. Once it has reported the end it is not called again.
final class AgeClosureSource: AgeByteSource {
    private let body: (UnsafeMutableRawBufferPointer) throws -> Int
    private let path: String
    private var ended = false

    /// A source calling `body`; its errors name `path`.
    init(_ body: @escaping (UnsafeMutableRawBufferPointer) throws -> Int, path: String) {
        self.body = body
        self.path = path
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard !ended, buffer.count > 0 else { return 0 }
        let count: Int
        do {
            count = try body(buffer)
        } catch {
            throw AgeError.fromCaller(error, path: path)
        }
        guard count >= 0, count <= buffer.count else {
            throw AgeError.io(path: path, detail: "the reader reported \(count) bytes read into a buffer of \(buffer.count)")
        }
        if count == 0 { ended = true }
        return count
    }
}

/// The caller's writer as a sink: of arrays, or of buffers (which saves a copy).
final class AgeClosureSink: AgeByteSink {
    private let arrays: (([UInt8]) throws -> Void)?
    private let buffers: ((UnsafeRawBufferPointer) throws -> Void)?
    private let path: String

    /// A sink calling `body` with arrays; its errors name `path`.
    init(_ body: @escaping ([UInt8]) throws -> Void, path: String) {
        arrays = body
        buffers = nil
        self.path = path
    }

    /// A sink calling `body` with buffers valid during the call; its errors name `path`.
    init(buffers body: @escaping (UnsafeRawBufferPointer) throws -> Void, path: String) {
        arrays = nil
        buffers = body
        self.path = path
    }

    func write(_ bytes: [UInt8]) throws {
        guard !bytes.isEmpty else { return }
        do {
            if let arrays {
                try arrays(bytes)
            } else {
                try bytes.withUnsafeBytes { buffer in try buffers?(buffer) }
            }
        } catch {
            throw AgeError.fromCaller(error, path: path)
        }
    }

    func write(buffer: UnsafeRawBufferPointer) throws {
        guard !buffer.isEmpty else { return }
        do {
            if let buffers {
                try buffers(buffer)
            } else {
                try arrays?(Array(buffer))
            }
        } catch {
            throw AgeError.fromCaller(error, path: path)
        }
    }

    func finish() throws {}
}

/// A line of text as ``AgeBufferedSource/readLine(limit:)`` returns it: without its LF.
struct AgeLine {
    /// The bytes before the LF (or before the end of the input).
    var bytes: [UInt8]
    /// Whether an LF ended the line; false for a last line the input ends inside, and for a
    /// line cut at the limit.
    var terminated: Bool
}

/// A buffer over another source, for reading lines (the header, the armor) and peeking at the
/// start of the input, and then whole blocks (the payload).
final class AgeBufferedSource: AgeByteSource {
    /// The buffer's size; larger reads go straight to the layer below.
    static let capacity = 64 * 1024

    private let lower: any AgeByteSource
    private let storage: UnsafeMutableRawBufferPointer
    private var start = 0
    private var end = 0
    private var exhausted = false

    /// A buffer over `lower`.
    init(_ lower: any AgeByteSource) {
        self.lower = lower
        storage = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.capacity, alignment: 16)
    }

    deinit { storage.deallocate() }

    private var buffered: Int { end - start }

    /// Reads from below until `count` bytes are buffered (`count` ≤ ``capacity``) or the input ends.
    private func fill(toHold count: Int) throws {
        while buffered < count, !exhausted {
            if end == Self.capacity {
                // Move what is left to the front: lines and peeks are short, so this is rare.
                let kept = buffered
                if kept > 0 { storage.baseAddress!.copyMemory(from: storage.baseAddress! + start, byteCount: kept) }
                start = 0
                end = kept
            }
            let read = try lower.read(into: UnsafeMutableRawBufferPointer(rebasing: storage[end...]))
            if read == 0 { exhausted = true } else { end += read }
        }
    }

    /// Up to `count` bytes from the current position, without consuming them (fewer only at
    /// the end of the input).
    func peek(upTo count: Int) throws -> [UInt8] {
        let wanted = min(count, Self.capacity)
        try fill(toHold: wanted)
        return Array(storage[start..<(start + min(wanted, buffered))])
    }

    /// The next line, without its LF; nil at the end of the input. A line with no LF within
    /// `limit` bytes comes back as its first `limit + 1` bytes, unterminated, for the caller
    /// to refuse (`limit` < ``capacity``).
    func readLine(limit: Int) throws -> AgeLine? {
        var scanned = 0
        while true {
            while scanned < buffered {
                if storage[start + scanned] == 0x0A {
                    let line = Array(storage[start..<(start + scanned)])
                    start += scanned + 1
                    return AgeLine(bytes: line, terminated: true)
                }
                scanned += 1
                if scanned > limit {
                    let line = Array(storage[start..<(start + scanned)])
                    start += scanned
                    return AgeLine(bytes: line, terminated: false)
                }
            }
            if exhausted {
                guard buffered > 0 else { return nil }
                let line = Array(storage[start..<end])
                start = end
                return AgeLine(bytes: line, terminated: false)
            }
            try fill(toHold: buffered + 1)
        }
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard buffer.count > 0 else { return 0 }
        if buffered == 0 {
            if exhausted { return 0 }
            // A large read bypasses the buffer: the payload streams without an extra copy.
            if buffer.count >= Self.capacity {
                let count = try lower.read(into: buffer)
                if count == 0 { exhausted = true }
                return count
            }
            try fill(toHold: 1)
            if buffered == 0 { return 0 }
        }
        let count = min(buffer.count, buffered)
        buffer.baseAddress!.copyMemory(from: storage.baseAddress! + start, byteCount: count)
        start += count
        return count
    }
}

/// Bytes held in memory as a source (headers parsed from an array, the convenience APIs).
final class AgeMemorySource: AgeByteSource {
    private let bytes: [UInt8]
    private var offset = 0

    /// A source yielding `bytes`.
    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let count = min(buffer.count, bytes.count - offset)
        guard count > 0 else { return 0 }
        buffer.copyBytes(from: bytes[offset..<(offset + count)])
        offset += count
        return count
    }
}
