import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A TCP connection from this process to a server on loopback, driven byte by byte: for tests
/// that do what no well-behaved client does — connect and say nothing, send half a request,
/// drip a body — and watch what the server does about it.
///
/// The socket is non-blocking and every wait is a short poll between `Task.sleep`s, bounded by
/// a hang guard (``TestTimeouts``): a thread of the cooperative pool blocked in `recv` could
/// starve the very server, in this process, that the test waits for. The source address may be
/// any of 127.0.0.0/8 (Linux routes the whole block to the loopback interface), so one test
/// process can look like many clients.
public final class LoopbackSocket: Sendable {
    /// The socket's file descriptor.
    public let descriptor: Int32
    /// The address it connects from.
    public let source: String
    /// The port the kernel gave this end (0 when it could not be read).
    public let localPort: Int

    private struct State {
        var received: [UInt8] = []
        var peerClosed = false
        var closed = false
    }

    private let state = Mutex(State())

    /// Opens a socket bound to `source` (the port picked by the kernel) and starts connecting it
    /// to `host`:`port`; ``waitUntilConnected(deadline:)`` waits for the handshake.
    ///
    /// `receiveBuffer` (`SO_RCVBUF`, bytes; the kernel doubles it) and `segmentSize`
    /// (`TCP_MAXSEG`, the largest segment announced to the server) are set before the handshake,
    /// for a client that reads nothing and should make the server's kernel hold no more than a
    /// remote client would: on loopback the segments are 64 KiB, and the kernel sizes a
    /// connection's send buffer by them (megabytes, instead of the ~100 KiB it gives a client
    /// with Ethernet's 1460-byte segments).
    public init(
        port: Int, host: String = "127.0.0.1", from source: String = "127.0.0.1", receiveBuffer: Int? = nil, segmentSize: Int? = nil
    ) throws {
        let descriptor = socket(AF_INET, socketStreamType, 0)
        guard descriptor >= 0 else { throw LoopbackSocketError("socket()", errno: errno) }
        let boundPort: Int
        do {
            if let receiveBuffer {
                var value = Int32(clamping: receiveBuffer)
                if setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &value, socklen_t(MemoryLayout<Int32>.size)) != 0 {
                    let code = errno
                    throw LoopbackSocketError("setsockopt(SO_RCVBUF, \(receiveBuffer))", errno: code)
                }
            }
            if let segmentSize {
                var value = Int32(clamping: segmentSize)
                if setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_MAXSEG, &value, socklen_t(MemoryLayout<Int32>.size)) != 0 {
                    let code = errno
                    throw LoopbackSocketError("setsockopt(TCP_MAXSEG, \(segmentSize))", errno: code)
                }
            }
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
            #if canImport(Darwin)
            var one: Int32 = 1
            _ = setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
            #endif
            let local = try Self.address(source, port: 0)
            if withSocketAddress(local, { bind(descriptor, $0, $1) }) != 0 {
                let code = errno
                throw LoopbackSocketError("bind(\(source))", errno: code)
            }
            boundPort = Self.boundPort(of: descriptor)
            let remote = try Self.address(host, port: port)
            if withSocketAddress(remote, { connect(descriptor, $0, $1) }) != 0 {
                let code = errno
                if code != EINPROGRESS { throw LoopbackSocketError("connect(\(host):\(port)) from \(source)", errno: code) }
            }
        } catch {
            _ = systemClose(descriptor)
            throw error
        }
        self.descriptor = descriptor
        self.source = source
        self.localPort = boundPort
    }

    /// The port `descriptor` is bound to, 0 when it cannot be read.
    private static func boundPort(of descriptor: Int32) -> Int {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let result = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return result == 0 ? Int(UInt16(bigEndian: address.sin_port)) : 0
    }

    deinit { close() }

    /// Everything the peer sent so far (since ``clearReceived()``), as far as it was read.
    public var received: [UInt8] { state.withLock { $0.received } }

    /// Whether the peer was seen closing the connection (end of stream or a reset).
    public var peerHasClosed: Bool { state.withLock { $0.peerClosed } }

    /// Forgets what was received so far.
    public func clearReceived() { state.withLock { $0.received.removeAll() } }

    /// Waits for the TCP handshake to finish; throws when it failed or the hang guard ran out.
    /// (A connection the server accepted and closed at once has connected.)
    public func waitUntilConnected(deadline: ContinuousClock.Instant = TestTimeouts.deadline) async throws {
        while true {
            var entry = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
            if poll(&entry, 1, 0) > 0 {
                var failure: Int32 = 0
                var length = socklen_t(MemoryLayout<Int32>.size)
                guard getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &failure, &length) == 0 else {
                    let code = errno
                    throw LoopbackSocketError("getsockopt(SO_ERROR)", errno: code)
                }
                guard failure == 0 else { throw LoopbackSocketError("connecting from \(source)", errno: failure) }
                return
            }
            guard ContinuousClock.now < deadline else {
                throw LoopbackSocketError("connecting from \(source): no handshake before the hang guard ran out")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Sends all of `bytes`, waiting for room when the socket's buffer is full; throws when the
    /// peer has gone (the server closed or reset the connection) or the hang guard ran out.
    public func write(_ bytes: [UInt8], deadline: ContinuousClock.Instant = TestTimeouts.deadline) async throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { raw in systemSend(descriptor, raw.baseAddress! + offset, raw.count - offset) }
            if sent > 0 {
                offset += sent
                continue
            }
            let code = errno
            if sent < 0, code == EINTR { continue }
            guard sent < 0, code == EAGAIN || code == EWOULDBLOCK else { throw LoopbackSocketError("sending from \(source)", errno: code) }
            guard ContinuousClock.now < deadline else { throw LoopbackSocketError("sending from \(source): no room before the hang guard ran out") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Reads whatever has arrived, without waiting; returns whether the peer has closed the
    /// connection (end of stream, or a reset).
    @discardableResult
    public func drain() -> Bool {
        if state.withLock({ $0.closed || $0.peerClosed }) { return peerHasClosed }
        let descriptor = self.descriptor
        var bytes: [UInt8] = []
        var ended = false
        withUnsafeTemporaryAllocation(byteCount: 16 << 10, alignment: 1) { buffer in
            while true {
                let count = systemReceive(descriptor, buffer.baseAddress, buffer.count)
                if count > 0 {
                    bytes += UnsafeRawBufferPointer(rebasing: buffer[0..<count])
                    continue
                }
                if count == 0 {
                    ended = true
                    return
                }
                let code = errno
                if code == EINTR { continue }
                // A reset, or anything else but "nothing yet": the connection is gone.
                if code != EAGAIN && code != EWOULDBLOCK { ended = true }
                return
            }
        }
        return state.withLock { state in
            state.received += bytes
            if ended { state.peerClosed = true }
            return state.peerClosed
        }
    }

    /// Up to `count` of the bytes that have arrived and were not read yet, left unread (so that
    /// a client that must read nothing can still see that an answer began): empty when none has
    /// come yet, nil once the peer has closed the connection (or reset it) with nothing left
    /// unread, or this socket is closed.
    public func peek(upTo count: Int) -> [UInt8]? {
        let descriptor = self.descriptor
        // Under the lock, so that the descriptor cannot be closed (and its number reused) meanwhile.
        let bytes: [UInt8]? = state.withLock { state in
            guard !state.closed else { return nil }
            var buffer = [UInt8](repeating: 0, count: max(1, count))
            while true {
                let got = buffer.withUnsafeMutableBytes { systemPeek(descriptor, $0.baseAddress, $0.count) }
                if got > 0 { return Array(buffer.prefix(got)) }
                if got == 0 { return nil }
                let code = errno
                if code == EINTR { continue }
                return code == EAGAIN || code == EWOULDBLOCK ? [] : nil
            }
        }
        return bytes
    }

    /// Waits until the peer has closed the connection, reading what it sends meanwhile; false
    /// when the hang guard ran out first.
    public func waitForPeerClose(deadline: ContinuousClock.Instant = TestTimeouts.deadline) async throws -> Bool {
        while !drain() {
            guard ContinuousClock.now < deadline else { return false }
            try await Task.sleep(for: .milliseconds(20))
        }
        return true
    }

    /// Waits until the peer has closed every one of `sockets`; returns those still open when
    /// the hang guard ran out (none when all were closed).
    public static func waitForPeerClose(_ sockets: [LoopbackSocket], deadline: ContinuousClock.Instant = TestTimeouts.deadline) async throws
        -> [LoopbackSocket]
    {
        var open = sockets
        while true {
            open = open.filter { !$0.drain() }
            if open.isEmpty || ContinuousClock.now >= deadline { return open }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// Closes the socket (once; also done when the object goes away).
    public func close() {
        let descriptor = self.descriptor
        state.withLock { state in
            guard !state.closed else { return }
            state.closed = true
            _ = systemClose(descriptor)
        }
    }

    /// The IPv4 socket address of `text` and `port`.
    static func address(_ text: String, port: Int) throws -> sockaddr_in {
        var address = sockaddr_in()
        #if canImport(Darwin)
        address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        guard inet_pton(AF_INET, text, &address.sin_addr) == 1 else { throw LoopbackSocketError("\(text) is not an IPv4 address") }
        return address
    }
}

/// A socket call that failed, with what the system said.
public struct LoopbackSocketError: Error, CustomStringConvertible {
    public var description: String

    init(_ what: String, errno code: Int32? = nil) {
        description = code.map { "\(what): \(String(cString: strerror($0)))" } ?? what
    }
}

/// The open-file limit of this process, which a test that holds thousands of sockets (and the
/// in-process server's side of each) needs raised.
public enum OpenFileLimit {
    /// Raises the soft limit to the hard one; returns the soft limit now in force (0 when it
    /// cannot be read).
    @discardableResult
    public static func raiseToHardLimit() -> Int {
        #if canImport(Glibc)
        let resource = Int32(RLIMIT_NOFILE.rawValue)
        #else
        let resource = RLIMIT_NOFILE
        #endif
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return 0 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(resource, &raised) == 0 { limit = raised }
        }
        return Int(clamping: limit.rlim_cur)
    }
}

#if canImport(Glibc)
private let socketStreamType = Int32(SOCK_STREAM.rawValue)
/// No SIGPIPE when the server has closed: the write fails with EPIPE instead.
private let sendFlags = Int32(MSG_NOSIGNAL)
#else
private let socketStreamType = SOCK_STREAM
private let sendFlags: Int32 = 0
#endif

private func withSocketAddress<R>(_ address: sockaddr_in, _ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
    withUnsafePointer(to: address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
}

private func systemClose(_ descriptor: Int32) -> Int32 { close(descriptor) }

private func systemSend(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    send(descriptor, bytes, count, sendFlags)
}

private func systemReceive(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    recv(descriptor, buffer, count, 0)
}

/// `recv` that leaves what it returns unread.
private func systemPeek(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    recv(descriptor, buffer, count, Int32(MSG_PEEK))
}
