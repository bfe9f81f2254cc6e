#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Bounds the time a connection may take over what it owes the server, past what the idle
/// timeout catches (a connection that sends or reads a byte now and then is never idle):
///
/// - a request body must arrive within ``ServerLimits/bodyReadTimeout``, plus one second for
///   every `minimumBodyRate` bytes it brought (so a large upload at a reasonable speed is not
///   cut, and a trickle is): then the request fails with ``RequestBodyTimeout`` (answered 408)
///   and the connection is closed shortly after;
/// - a response the client does not read (the channel stays unwritable) for
///   ``ServerLimits/writeTimeout`` closes the connection;
/// - a response that says `Connection: close` closes the connection once it is written, rather
///   than reading on: Hummingbird would otherwise drain a refused request's whole body.
///
/// It also tells the ``ConnectionTable`` when the connection is being served — a request read
/// whole and not yet answered, its answer flowing — and when it waits on its client: silent,
/// between requests, while a body is still to come, or while the client does not read its
/// answer. Only the first is spared when the server runs out of room: a request head that
/// announces a body it never sends, or a download read a trickle at a time, holds a place no
/// better than a silent socket.
final class RequestDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// The rate a body must keep up past the first `bodyReadTimeout`: 16 KiB/s.
    static let minimumBodyRate: Int64 = 16 << 10
    /// How long after a body timeout the connection is closed if the application has not closed it.
    static let closeGrace: TimeAmount = .seconds(2)

    let bodyReadTimeout: TimeAmount
    let writeTimeout: TimeAmount
    private var bodyStart: NIODeadline?
    private var bodyBytes: Int64 = 0
    private var bodyTimer: Scheduled<Void>?
    private var writeTimer: Scheduled<Void>?
    private var closeAfterResponse = false
    /// Where the connection is told to be serving a request or waiting on its client (nil in
    /// tests of this handler alone).
    let table: ConnectionTable?
    /// Requests whose head was read and whose response is not yet written whole (more than
    /// one when pipelined).
    private var unanswered = 0
    /// A request head was read and its body has not ended.
    private var bodyPending = false
    /// The channel is not writable: the client does not read.
    private var stalled = false
    /// What the table was last told.
    private var served = false

    init(bodyReadTimeout: Duration, writeTimeout: Duration, table: ConnectionTable? = nil) {
        self.bodyReadTimeout = TimeAmount(bodyReadTimeout)
        self.writeTimeout = TimeAmount(writeTimeout)
        self.table = table
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            unanswered += 1
            bodyPending = true
            bodyStart = .now()
            bodyBytes = 0
            scheduleBodyCheck(context: context, at: .now() + bodyReadTimeout)
        case .body(let buffer):
            bodyBytes += Int64(buffer.readableBytes)
        case .end:
            bodyStart = nil
            bodyTimer?.cancel()
            bodyTimer = nil
            bodyPending = false
            updateTable(context.channel)
        }
        context.fireChannelRead(data)
    }

    /// Tells the table whether the connection is being served now, when that changed.
    private func updateTable(_ channel: any Channel) {
        guard let table else { return }
        let serving = unanswered > 0 && !bodyPending && !stalled
        guard serving != served else { return }
        served = serving
        if serving { table.serving(channel) } else { table.waiting(channel) }
    }

    private func scheduleBodyCheck(context: ChannelHandlerContext, at deadline: NIODeadline) {
        bodyTimer?.cancel()
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        bodyTimer = context.eventLoop.scheduleTask(deadline: deadline) {
            let (handler, context) = loopBound.value
            handler.checkBody(context: context)
        }
    }

    private func checkBody(context: ChannelHandlerContext) {
        bodyTimer = nil
        guard let bodyStart else { return }
        let earned = TimeAmount.seconds(bodyBytes / Self.minimumBodyRate)
        let deadline = bodyStart + bodyReadTimeout + earned
        guard deadline <= .now() else {
            scheduleBodyCheck(context: context, at: deadline)
            return
        }
        self.bodyStart = nil
        context.fireErrorCaught(RequestBodyTimeout())
        let channel = context.channel
        context.eventLoop.scheduleTask(in: Self.closeGrace) { channel.close(promise: nil) }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head):
            closeAfterResponse = head.headerFields[.connection]?.lowercased() == "close"
            context.write(data, promise: promise)
        case .body:
            context.write(data, promise: promise)
        case .end:
            unanswered = max(0, unanswered - 1)
            updateTable(context.channel)
            guard closeAfterResponse else {
                context.write(data, promise: promise)
                return
            }
            closeAfterResponse = false
            let written = promise ?? context.eventLoop.makePromise()
            let channel = context.channel
            written.futureResult.whenComplete { _ in channel.close(promise: nil) }
            context.writeAndFlush(data, promise: written)
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        stalled = !context.channel.isWritable
        updateTable(context.channel)
        if context.channel.isWritable {
            writeTimer?.cancel()
            writeTimer = nil
        } else if writeTimer == nil {
            let channel = context.channel
            writeTimer = context.eventLoop.scheduleTask(in: writeTimeout) { Self.abort(channel) }
        }
        context.fireChannelWritabilityChanged()
    }

    /// Closes with a reset (`SO_LINGER` 0): what the client never read is dropped at once,
    /// instead of the kernel keeping it, orphaned and counted by no limit, for as long as the
    /// client stays connected.
    static func abort(_ channel: any Channel) {
        guard let socket = channel as? any SocketOptionProvider else {
            channel.close(promise: nil)
            return
        }
        socket.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in channel.close(promise: nil) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        bodyTimer?.cancel()
        writeTimer?.cancel()
        bodyTimer = nil
        writeTimer = nil
        context.fireChannelInactive()
    }
}

/// A request body that did not arrive in time (``ServerLimits/bodyReadTimeout``).
struct RequestBodyTimeout: Error {}
