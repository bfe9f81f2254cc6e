import Foundation
import Logging
import SQLKit
import SignetHTTP
import Synchronization

/// The replay cache of one node on SQLite: nonces in memory, so a signed request costs no
/// database write, with two rules that keep a restart from reopening a window:
///
/// - A signature made before the process started is refused (401,
///   ``HTTPSignatureError/createdBeforeStart(created:start:)``). The start is the whole second
///   after the process began, and the server listens only from then on, so a client that signs
///   after the server is up is never refused; one whose request was in flight across the
///   restart signs again.
/// - A signature dated in the future (`created` after this node's current second, within the
///   clock skew allowed) is also written to the database before it is accepted, and every node
///   loads the unexpired ones before it listens: such a signature, accepted just before a
///   restart, could otherwise pass the first rule after it.
///
/// The two rules need the node to be the database's only server: ``prepare()`` takes an
/// exclusive lock beside the database file, waiting for a stopping server to let it go.
final class LocalReplayCache: NonceCache {
    let store: ServerStore
    let memory: InMemoryNonceCache
    /// The first second of `created` accepted (0 until ``prepare()`` has run: nothing is
    /// accepted before, since the server does not listen yet).
    private let start = Atomic<Int64>(Int64.max)
    private let lock = Mutex<Int32>(-1)

    init(store: ServerStore, capacity: Int) {
        self.store = store
        memory = InMemoryNonceCache(capacity: capacity, reserving: min(capacity, 1 << 16), clock: store.clock)
    }

    deinit {
        lock.withLock { if $0 >= 0 { close($0) } }
    }

    /// How many nonces are held.
    var count: Int { memory.count }

    /// Takes the database's serving lock, waits for the next whole second (the start) and
    /// loads the future-dated nonces earlier processes recorded. Runs before the server listens.
    func prepare(path: String, logger: Logger, wait: Duration = .seconds(30)) async throws(ServerError) {
        try await takeLock(path + "-node.lock", logger: logger, wait: wait)
        let now = store.clock().timeIntervalSince1970
        let start = Int64(now.rounded(.down)) + 1
        try? await Task.sleep(for: .milliseconds(Int64(((Double(start) - now) * 1000).rounded(.up))))
        let stored = try await store.unexpiredNonces(limit: memory.capacity + 1)
        guard stored.count <= memory.capacity else {
            throw .configuration(detail: "the database holds more unexpired nonces than the replay cache's \(memory.capacity); raise its size, or start again within \(HTTPSignaturePolicy().maximumAge) s")
        }
        for nonce in stored {
            _ = try? await memory.insert(nonce: nonce.nonce, keyID: nonce.keyID, until: Date(timeIntervalSince1970: TimeInterval(nonce.expiry)))
        }
        self.start.store(start, ordering: .sequentiallyConsistent)
    }

    private func takeLock(_ path: String, logger: Logger, wait: Duration) async throws(ServerError) {
        let descriptor = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, FileAccess.privateFile)
        guard descriptor >= 0 else {
            throw .configuration(detail: "\(path): cannot open the serving lock: \(String(cString: strerror(errno)))")
        }
        let deadline = ContinuousClock.now + wait
        var told = false
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR, ContinuousClock.now < deadline else {
                close(descriptor)
                throw .configuration(detail: "another server has been serving this SQLite database for \(wait) (\(path) is locked); one SQLite database has one server, several nodes need PostgreSQL")
            }
            if !told {
                logger.warning("waiting for the other server on this SQLite database to stop", metadata: ["lock": "\(path)"])
                told = true
            }
            try? await Task.sleep(for: .milliseconds(100))
        }
        lock.withLock { $0 = descriptor }
    }

    func insert(nonce: String, keyID: String, until expiry: Date) async throws(HTTPSignatureError) -> Bool {
        try await insert(nonce: nonce, keyID: keyID, created: nil, until: expiry)
    }

    func insert(nonce: String, keyID: String, created: Int64?, until expiry: Date) async throws(HTTPSignatureError) -> Bool {
        let start = start.load(ordering: .relaxed)
        // Without `created` (a policy that does not require it) the database decides.
        guard let created else { return try await stored(nonce: nonce, keyID: keyID, until: expiry) }
        guard created >= start else { throw .createdBeforeStart(created: created, start: start) }
        guard try await memory.insert(nonce: nonce, keyID: keyID, until: expiry) else { return false }
        let second = Int64(store.clock().timeIntervalSince1970.rounded(.down))
        guard created > second else { return true }
        return try await stored(nonce: nonce, keyID: keyID, until: expiry)
    }

    private func stored(nonce: String, keyID: String, until expiry: Date) async throws(HTTPSignatureError) -> Bool {
        do {
            return try await store.insertNonce(nonce, keyID: keyID, until: Int64(expiry.timeIntervalSince1970.rounded(.up)))
        } catch {
            throw .replayCacheFull
        }
    }
}

/// The replay cache of nodes sharing PostgreSQL: every nonce in the database, so a request
/// accepted by one node and replayed to another is refused. Nonces of concurrent requests go in
/// batches, one statement each (a request is answered only once its batch has committed): under
/// load a node makes one round trip for many requests, not one for each.
final class SharedReplayCache: NonceCache {
    struct Pending {
        let keyID: String
        let nonce: String
        let expiry: Int64
        let answer: CheckedContinuation<Result<Bool, HTTPSignatureError>, Never>
    }

    struct State {
        var pending: [Pending] = []
        var flushing = false
    }

    let store: ServerStore
    let metrics: ServerMetrics?
    /// The most nonces in one statement.
    static let batchLimit = 256
    private let state = Mutex(State())

    init(store: ServerStore, metrics: ServerMetrics? = nil) {
        self.store = store
        self.metrics = metrics
    }

    func insert(nonce: String, keyID: String, until expiry: Date) async throws(HTTPSignatureError) -> Bool {
        let expiry = Int64(expiry.timeIntervalSince1970.rounded(.up))
        let result = await withCheckedContinuation { (answer: CheckedContinuation<Result<Bool, HTTPSignatureError>, Never>) in
            let flush = state.withLock { state -> Bool in
                state.pending.append(Pending(keyID: keyID, nonce: nonce, expiry: expiry, answer: answer))
                if state.flushing { return false }
                state.flushing = true
                return true
            }
            if flush { Task { await self.flushAll() } }
        }
        return try result.get()
    }

    /// Writes batches until none waits.
    private func flushAll() async {
        while true {
            let batch = state.withLock { state -> [Pending] in
                let batch = Array(state.pending.prefix(Self.batchLimit))
                state.pending.removeFirst(batch.count)
                if batch.isEmpty { state.flushing = false }
                return batch
            }
            if batch.isEmpty { return }
            await flush(batch)
        }
    }

    private func flush(_ batch: [Pending]) async {
        // A nonce twice in one batch: the second is a replay of the first (and one statement
        // may not touch a row twice).
        struct Key: Hashable { let keyID: String, nonce: String }
        var first: [Key: Int] = [:]
        var unique: [Pending] = []
        for pending in batch {
            let key = Key(keyID: pending.keyID, nonce: pending.nonce)
            if first[key] != nil {
                pending.answer.resume(returning: .success(false))
            } else {
                first[key] = unique.count
                unique.append(pending)
            }
        }
        metrics?.replayBatches.increment()
        metrics?.replayBatchedNonces.increment(by: Int64(unique.count))
        do {
            let fresh = try await store.insertNonces(unique.map { ($0.keyID, $0.nonce, $0.expiry) })
            for pending in unique {
                pending.answer.resume(returning: .success(fresh.contains(StoredNonceKey(keyID: pending.keyID, nonce: pending.nonce))))
            }
        } catch {
            for pending in unique { pending.answer.resume(returning: .failure(.replayCacheFull)) }
        }
    }
}

/// A key id and nonce, as the database returns the ones it recorded.
struct StoredNonceKey: Hashable {
    let keyID: String
    let nonce: String
}

extension ServerStore {
    /// Records the nonces, in one statement; returns those that were new (the others are
    /// replays of unexpired ones).
    func insertNonces(_ nonces: [(keyID: String, nonce: String, expiry: Int64)]) async throws(ServerError) -> Set<StoredNonceKey> {
        guard !nonces.isEmpty else { return [] }
        let now = self.now
        let rows = nonces.map { "(\(bind: $0.keyID), \(bind: $0.nonce), \(bind: $0.expiry))" as SQLQueryString }.joined(separator: ", ")
        return try await database.withConnection(durability: .relaxed) { sql in
            let inserted = try await sql.raw("""
                INSERT INTO nonces (key_id, nonce, expires_at) VALUES \(rows)
                ON CONFLICT (key_id, nonce) DO UPDATE SET expires_at = excluded.expires_at
                WHERE nonces.expires_at <= \(bind: now)
                RETURNING key_id, nonce
                """).all()
            return Set(try inserted.map { StoredNonceKey(keyID: try $0.text("key_id"), nonce: try $0.text("nonce")) })
        }
    }

    /// The unexpired nonces, at most `limit`.
    package func unexpiredNonces(limit: Int) async throws(ServerError) -> [(keyID: String, nonce: String, expiry: Int64)] {
        let now = self.now
        return try await database.withConnection { sql in
            try await sql.raw("""
                SELECT key_id, nonce, expires_at FROM nonces WHERE expires_at > \(bind: now) LIMIT \(bind: limit)
                """).all().map { (try $0.text("key_id"), try $0.text("nonce"), try $0.integer("expires_at")) }
        }
    }
}
