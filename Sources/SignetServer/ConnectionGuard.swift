import HummingbirdCore
import Logging
import NIOCore
import Synchronization

/// The server's open connections: how many each peer address holds
/// (``ServerLimits/maximumConnectionsPerAddress``, checked before any byte of a connection is
/// read, its TLS handshake included) and which of them are waiting on their client rather than
/// on the server.
///
/// When the connections reach ``ServerLimits/maximumConnections`` (where Hummingbird's
/// `MaximumAvailableConnections` stops accepting), the one that has waited longest on its
/// client — silent since it was accepted, still in its TLS handshake or request head, or idle
/// between requests — is closed to make room, as nginx reuses idle keep-alive connections when
/// it runs out. A few dozen addresses, each under its own limit, can then fill the table with
/// silent sockets and still not keep a new client out: the newest connection is the last to
/// go. A connection whose request is being read or answered is never closed for room.
final class ConnectionTable: Sendable {
    let maximumPerAddress: Int
    let maximumTotal: Int

    private struct Entry {
        let channel: any Channel
        let address: String
        /// When the connection began to wait on its client (a tick of ``State/clock``), or nil
        /// while a request on it is being served.
        var waitingSince: UInt64?
    }

    private struct State {
        var perAddress: [String: Int] = [:]
        var entries: [ObjectIdentifier: Entry] = [:]
        var clock: UInt64 = 0
        var evicted = 0
    }

    private let state = Mutex(State())

    init(maximumPerAddress: Int, maximumTotal: Int) {
        self.maximumPerAddress = maximumPerAddress
        self.maximumTotal = maximumTotal
    }

    /// What became of a new connection.
    enum Admission {
        /// Refused: its address holds all the connections it may.
        case refused
        /// Admitted; `making room` is a connection to close so that the server can go on
        /// accepting (the one that has waited longest on its client), if the table is full.
        case admitted(makingRoom: (any Channel)?)
    }

    /// Adds `channel` from `address` (waiting on its client), or refuses it.
    func admit(_ channel: any Channel, from address: String) -> Admission {
        state.withLock { state in
            let count = state.perAddress[address, default: 0]
            guard count < maximumPerAddress else { return .refused }
            state.perAddress[address] = count + 1
            state.clock += 1
            state.entries[ObjectIdentifier(channel)] = Entry(channel: channel, address: address, waitingSince: state.clock)
            guard state.entries.count >= maximumTotal else { return .admitted(makingRoom: nil) }
            // Full: the connection that has waited longest on its client goes (a linear search,
            // only ever made when the table is full).
            var oldest: (key: ObjectIdentifier, since: UInt64)?
            for (key, entry) in state.entries {
                guard let since = entry.waitingSince, since < oldest?.since ?? .max else { continue }
                oldest = (key, since)
            }
            guard let oldest, let entry = Self.remove(oldest.key, from: &state) else { return .admitted(makingRoom: nil) }
            state.evicted += 1
            return .admitted(makingRoom: entry.channel)
        }
    }

    /// A request on `channel` has begun: it is not closed to make room until it is answered.
    func serving(_ channel: any Channel) {
        state.withLock { $0.entries[ObjectIdentifier(channel)]?.waitingSince = nil }
    }

    /// The request on `channel` is answered: it waits on its client again.
    func waiting(_ channel: any Channel) {
        state.withLock { state in
            guard state.entries[ObjectIdentifier(channel)] != nil else { return }
            state.clock += 1
            state.entries[ObjectIdentifier(channel)]?.waitingSince = state.clock
        }
    }

    /// `channel` has closed.
    func closed(_ channel: any Channel) {
        state.withLock { _ = Self.remove(ObjectIdentifier(channel), from: &$0) }
    }

    /// How many connections were closed to make room, since the server started.
    var evictions: Int { state.withLock { $0.evicted } }

    private static func remove(_ key: ObjectIdentifier, from state: inout State) -> Entry? {
        guard let entry = state.entries.removeValue(forKey: key) else { return nil }
        let count = state.perAddress[entry.address, default: 1]
        state.perAddress[entry.address] = count > 1 ? count - 1 : nil
        return entry
    }
}

/// A server child channel (HTTP/1, over TLS or not) whose connections are entered in the
/// ``ConnectionTable``: one past its address's limit is closed at once; one that fills the
/// table closes the connection that has waited longest on its client.
struct GuardedChildChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value
    let base: Base
    let table: ConnectionTable
    /// `SO_SNDBUF` for each accepted connection (``ServerLimits/socketSendBuffer``).
    let sendBuffer: Int

    struct TooManyConnections: Error {}

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let address = ClientAddress.budgetKey(channel.remoteAddress?.ipAddress ?? "unknown")
        switch table.admit(channel, from: address) {
        case .refused:
            logger.debug("connection refused: too many from one address", metadata: ["address": "\(address)"])
            channel.close(promise: nil)
            return channel.eventLoop.makeFailedFuture(TooManyConnections())
        case .admitted(let makingRoom):
            if let makingRoom {
                logger.debug("connection closed to make room: it waited longest on its client", metadata: [
                    "address": "\(makingRoom.remoteAddress?.ipAddress ?? "unknown")",
                ])
                RequestDeadlineHandler.abort(makingRoom)
            }
        }
        let table = self.table
        channel.closeFuture.whenComplete { _ in table.closed(channel) }
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
