import HummingbirdCore
import Logging
import NIOCore
import Synchronization

/// Counts open connections per peer address and refuses one over
/// ``ServerLimits/maximumConnectionsPerAddress`` before any byte of it is read (its TLS
/// handshake included). The total is bounded by Hummingbird's `MaximumAvailableConnections`,
/// which stops accepting instead.
final class ConnectionCounter: Sendable {
    let maximumPerAddress: Int
    private let open = Mutex<[String: Int]>([:])

    init(maximumPerAddress: Int) {
        self.maximumPerAddress = maximumPerAddress
    }

    /// Takes a place for `address`; false when it has none left.
    func admit(_ address: String) -> Bool {
        open.withLock { open in
            let count = open[address, default: 0]
            guard count < maximumPerAddress else { return false }
            open[address] = count + 1
            return true
        }
    }

    func release(_ address: String) {
        open.withLock { open in
            guard let count = open[address] else { return }
            open[address] = count > 1 ? count - 1 : nil
        }
    }

}

/// A server child channel (HTTP/1, over TLS or not) whose connections are first counted by
/// peer address: one past the limit is closed at once.
struct GuardedChildChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value
    let base: Base
    let counter: ConnectionCounter
    /// `SO_SNDBUF` for each accepted connection (``ServerLimits/socketSendBuffer``).
    let sendBuffer: Int

    struct TooManyConnections: Error {}

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let address = ClientAddress.budgetKey(channel.remoteAddress?.ipAddress ?? "unknown")
        guard counter.admit(address) else {
            logger.debug("connection refused: too many from one address", metadata: ["address": "\(address)"])
            channel.close(promise: nil)
            return channel.eventLoop.makeFailedFuture(TooManyConnections())
        }
        let counter = self.counter
        channel.closeFuture.whenComplete { _ in counter.release(address) }
        // Best effort: a socket that refuses the option keeps the kernel's default.
        try? channel.syncOptions?.setOption(ChannelOptions.socketOption(.so_sndbuf), value: SocketOptionValue(sendBuffer))
        return base.setup(channel: channel, logger: logger)
    }

    /// Past the shutdown deadline the service group cancels every connection's task: the
    /// channel is closed outright then (not only its input, which a TLS channel cannot close on
    /// its own), so that a request stalled half-sent cannot hold the process past its deadline.
    func handle(value: Value, logger: Logger) async {
        let channel = value.channel
        await withTaskCancellationHandler {
            await base.handle(value: value, logger: logger)
        } onCancel: {
            channel.close(promise: nil)
        }
    }
}
