import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import SignetAPI

/// Answers a request whose head the HTTP decoder refused — over `--max-header-bytes` or the
/// field count, or not HTTP/1.1 at all — with a problem document (400 `server.badRequest`,
/// `Request-Id`, `Connection: close`) like every other refusal, instead of Hummingbird's bare
/// `400` without a body; then closes the connection, which cannot carry another request. An
/// error once a request's head has passed (a broken body) goes on to the application, whose
/// ``ProblemMiddleware`` answers it.
final class HeadRefusalHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    let limits: ServerLimits
    /// A request's head has passed and its body has not ended: an error now is the body's.
    private var bodyPending = false
    /// Requests whose response has not ended (pipelined ones wait their turn).
    private var unanswered = 0
    /// A refused head whose answer waits for the responses before it.
    private var refusal: (any Error)?
    private var refused = false

    init(limits: ServerLimits) {
        self.limits = limits
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            bodyPending = true
            unanswered += 1
        case .end: bodyPending = false
        case .body: break
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .end = unwrapOutboundIn(data) else {
            context.write(data, promise: promise)
            return
        }
        unanswered = max(0, unanswered - 1)
        context.write(data, promise: promise)
        if unanswered == 0, let error = refusal {
            refusal = nil
            refuse(error, context: context)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard error is HTTPParserError, !bodyPending else {
            context.fireErrorCaught(error)
            return
        }
        guard !refused else { return }
        refused = true
        // Pipelined after requests still being answered: refused once their answers are out.
        if unanswered > 0 {
            refusal = error
        } else {
            refuse(error, context: context)
        }
    }

    private func refuse(_ error: any Error, context: ChannelHandlerContext) {
        let detail = "the request head is not valid HTTP/1.1, or is over the limits (\(limits.maximumHeaderBytes) bytes, \(limits.maximumHeaderFields) fields): \(error)"
        let document = ProblemDocument(code: .badRequest, detail: detail, instance: nil)
        let body = (try? ServerResponder.encoder.encode(document)).map(Array.init) ?? []
        var fields = HTTPFields()
        fields[.contentType] = ProblemDocument.mediaType
        fields[.contentLength] = String(body.count)
        fields[.connection] = "close"
        fields[.requestID] = UUID().uuidString.lowercased()
        context.write(wrapOutboundOut(.head(HTTPResponse(status: ProblemCode.badRequest.httpStatus, headerFields: fields))), promise: nil)
        context.write(wrapOutboundOut(.body(context.channel.allocator.buffer(bytes: body))), promise: nil)
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in bound.value.close(promise: nil) }
    }
}
