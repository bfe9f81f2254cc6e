import Foundation
import Logging
import SignetCore
import SignetHTTP
import Synchronization

/// The replay cache of one node on SQLite: nonces in memory, so a signed request costs no
/// database write, with rules that keep a restart from reopening a window:
///
/// - After a stop that was not clean (`kill -9`, a crash, a power loss), a signature made before
///   the process started is refused (401, ``HTTPSignatureError/createdBeforeStart(created:start:)``).
///   The start is the whole second after the process began, or after the last second the
///   previous process may have accepted (the high-water mark it kept in the lock file, so a
///   clock set back across the restart does not reopen a window), and the server listens only
///   from the next whole second on.
/// - After a clean stop (``persist()``), the nonces held are restored from the snapshot the
///   stopped process wrote, and the previous start stays the bound: a client whose clock runs
///   behind is not refused after a planned restart.
/// - A signature dated in the future (`created` after this node's current second, within the
///   clock skew allowed) is also written to the database before it is accepted, and every start
///   loads the unexpired ones.
///
/// The rules need the node to be the database's only server: ``prepare(path:logger:wait:)``
/// takes an exclusive lock on a file beside the database (named after its real path), waiting
/// for a stopping server to let it go.
package final class LocalReplayCache: NonceCache {
    let store: ServerStore
    let capacity: Int
    /// The nonces held: replaced by ``prepare(path:logger:wait:)`` (before any is accepted) when
    /// it restores a snapshot, whose fingerprints need the salts they were made with.
    private let cache: Mutex<InMemoryNonceCache>
    private var memory: InMemoryNonceCache { cache.withLock { $0 } }
    /// The first second of `created` accepted: `Int64.max` (nothing) until ``prepare(path:logger:wait:)``
    /// has run and again once ``persist()`` has begun.
    private let start = Atomic<Int64>(Int64.max)
    /// The last second whose signatures this process may accept, as written to the lock file.
    private let highWater = Atomic<Int64>(Int64.min)

    struct Files {
        var lock: Int32 = -1
        var snapshot = ""
    }

    private let files = Mutex(Files())

    package init(store: ServerStore, capacity: Int) {
        self.store = store
        self.capacity = capacity
        var random = SystemRandomNumberGenerator()
        cache = Mutex(Self.makeCache(capacity: capacity, clock: store.clock, salts: (random.next(), random.next())))
    }

    private static func makeCache(capacity: Int, clock: WallClock, salts: (UInt64, UInt64)) -> InMemoryNonceCache {
        InMemoryNonceCache(capacity: capacity, reserving: min(capacity, 1 << 16), clock: clock, salts: salts, portable: true)
    }

    deinit {
        files.withLock { if $0.lock >= 0 { close($0.lock) } }
    }

    /// How many nonces are held.
    package var count: Int { memory.count }

    private var second: Int64 { Int64(store.clock.now.timeIntervalSince1970.rounded(.down)) }

    /// Takes the database's serving lock, restores a clean stop's snapshot or else sets the
    /// start after the previous process's high-water mark, waits for the next whole second and
    /// loads the future-dated nonces of earlier processes. Runs before the server listens;
    /// nothing if it already has.
    package func prepare(path: String, logger: Logger, wait: Duration = .seconds(30)) async throws {
        let real = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        // A second name of the same file would give a second lock (and SQLite its own -wal).
        var info = stat()
        if stat(real, &info) == 0, info.st_nlink > 1 {
            throw ServerError.configuration(detail: "\(real) has \(info.st_nlink) hard links: one SQLite database has one server, and another name for it would let a second run beside this one; remove the other links")
        }
        guard let lock = try await takeLock(real + "-node.lock", logger: logger, wait: wait) else { return }
        let previous = Self.readHighWater(lock)
        let snapshotPath = real + "-nonces"
        let snapshot = Self.readSnapshot(snapshotPath, capacity: capacity, logger: logger)
        // Consumed before anything is served: a snapshot read twice would restore a bound that
        // a later process has since passed.
        if unlink(snapshotPath) != 0, errno != ENOENT {
            throw ServerError.configuration(detail: "\(snapshotPath): cannot remove the replay cache's snapshot: \(String(cString: strerror(errno)))")
        }
        // The mark only ever rises, whatever this clock says.
        if previous != Int64.min { highWater.store(previous, ordering: .sequentiallyConsistent) }
        var start = second + 1
        let restored = snapshot.map { Self.makeCache(capacity: capacity, clock: store.clock, salts: $0.cache.salts) }
        if let snapshot, previous > snapshot.highWater {
            logger.warning("the replay cache's snapshot is older than the last server's run and is ignored", metadata: ["file": "\(snapshotPath)"])
        }
        if let snapshot, let restored, previous <= snapshot.highWater, restored.restore(snapshot.cache) {
            cache.withLock { $0 = restored }
            start = snapshot.start
        } else {
            if let snapshot, previous <= snapshot.highWater {
                logger.warning("the replay cache's snapshot holds more nonces than the cache's size and is ignored", metadata: ["file": "\(snapshotPath)"])
            }
            if previous != Int64.min, previous >= second {
                let ahead = previous == Int64.max ? "ever" : "\(previous - second + 1) s"
                logger.error("""
                    the lock file says the last server accepted signatures up to a second this clock has not reached: signatures \
                    created before it are refused (for \(ahead)); if this clock is right, the lock file is damaged: stop the server, \
                    remove it, wait 10 minutes (every signature made before will have expired) and start again
                    """, metadata: ["lock": "\(real)-node.lock", "until": "\(previous)"])
            }
            start = max(start, previous == Int64.min ? start : previous.addingReportingOverflow(1).overflow ? Int64.max : previous + 1)
        }
        let now = store.clock.now.timeIntervalSince1970
        try? await Task.sleep(for: .milliseconds(Int64(((now.rounded(.down) + 1 - now) * 1000).rounded(.up))))
        let stored = try await store.nonces.unexpired(limit: memory.capacity + 1)
        guard stored.count + memory.count <= memory.capacity else {
            throw ServerError.configuration(detail: "the database holds more unexpired nonces than the replay cache's \(memory.capacity); raise its size, or start again once they expire")
        }
        for nonce in stored {
            _ = try? await memory.insert(nonce: nonce.nonce, keyID: nonce.keyID, until: Date(timeIntervalSince1970: TimeInterval(nonce.expiry)))
        }
        files.withLock { $0.snapshot = snapshotPath }
        try raiseHighWater(to: second)
        startKept.store(start, ordering: .sequentiallyConsistent)
        self.start.store(start, ordering: .sequentiallyConsistent)
    }

    /// After the server has stopped: refuses every further signature, writes the snapshot the
    /// next start restores (the nonces held, the start and the high-water mark) and lets go of
    /// the lock. Without it (a crash) the next start refuses what was signed before it.
    package func persist(logger: Logger) {
        start.store(Int64.max, ordering: .sequentiallyConsistent)
        let (lock, path) = files.withLock { files -> (Int32, String) in
            defer { files.lock = -1 }
            return (files.lock, files.snapshot)
        }
        guard lock >= 0 else { return }
        defer { close(lock) }
        // A start that failed part way has nothing to hand on.
        guard !path.isEmpty else { return }
        let snapshot = ReplaySnapshot(start: startBeforeStop, highWater: highWater.load(ordering: .sequentiallyConsistent), cache: memory.snapshot())
        do {
            try Data(snapshot.encoded()).write(to: URL(fileURLWithPath: path), options: .atomic)
            _ = chmod(path, FileAccess.privateFile)
        } catch {
            logger.warning("the replay cache could not be saved: the next start refuses signatures made before it", metadata: [
                "file": "\(path)", "error": "\(error)",
            ])
        }
    }

    /// The start in force before ``persist()`` (kept for the snapshot).
    private let startKept = Atomic<Int64>(Int64.max)
    private var startBeforeStop: Int64 { startKept.load(ordering: .sequentiallyConsistent) }

    private func takeLock(_ path: String, logger: Logger, wait: Duration) async throws -> Int32? {
        if files.withLock({ $0.lock >= 0 }) { return nil }
        let descriptor = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, FileAccess.privateFile)
        guard descriptor >= 0 else {
            throw ServerError.configuration(detail: "\(path): cannot open the serving lock: \(String(cString: strerror(errno)))")
        }
        let deadline = ContinuousClock.now + wait
        var told = false
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR, ContinuousClock.now < deadline, !Task.isCancelled else {
                close(descriptor)
                throw ServerError.configuration(detail: "another server has been serving this SQLite database for \(wait) (\(path) is locked); one SQLite database has one server, several nodes need PostgreSQL")
            }
            if !told {
                logger.warning("waiting for the other server on this SQLite database to stop", metadata: ["lock": "\(path)"])
                told = true
            }
            try? await Task.sleep(for: .milliseconds(100))
        }
        files.withLock { $0.lock = descriptor }
        return descriptor
    }

    /// The high-water mark the lock file holds (`Int64.min` when none).
    private static func readHighWater(_ lock: Int32) -> Int64 {
        var value: Int64 = 0
        let read = withUnsafeMutableBytes(of: &value) { pread(lock, $0.baseAddress, 8, 0) }
        return read == 8 ? Int64(littleEndian: value) : Int64.min
    }

    /// Writes `second` as the high-water mark before a signature of that second is accepted.
    private func raiseHighWater(to second: Int64) throws {
        guard second > highWater.load(ordering: .relaxed) else { return }
        let written = files.withLock { files -> Bool in
            guard files.lock >= 0 else { return false }
            var value = second.littleEndian
            return withUnsafeBytes(of: &value) { pwrite(files.lock, $0.baseAddress, 8, 0) } == 8
        }
        guard written else { throw ServerError.unavailable(detail: "the replay cache's high-water mark could not be written") }
        highWater.store(second, ordering: .sequentiallyConsistent)
    }

    private static func readSnapshot(_ path: String, capacity: Int, logger: Logger) -> ReplaySnapshot? {
        // Not through a link, not a FIFO or device, and no larger than a full cache's.
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno != ENOENT {
                logger.warning("the replay cache's snapshot cannot be opened (a link is not followed) and is ignored", metadata: [
                    "file": "\(path)", "error": "\(String(cString: strerror(errno)))",
                ])
            }
            return nil
        }
        defer { close(descriptor) }
        var info = stat()
        let limit = ReplaySnapshot.size(entries: capacity)
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_size <= limit else {
            logger.warning("the replay cache's snapshot is not a regular file, or holds more nonces than the cache's size, and is ignored", metadata: ["file": "\(path)"])
            return nil
        }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count == bytes.count, let snapshot = ReplaySnapshot(decoding: bytes) else {
            logger.warning("the replay cache's snapshot is damaged and is ignored", metadata: ["file": "\(path)"])
            return nil
        }
        return snapshot
    }

    package func insert(nonce: String, keyID: String, until expiry: Date) async throws -> Bool {
        try await insert(nonce: nonce, keyID: keyID, created: nil, until: expiry)
    }

    package func insert(nonce: String, keyID: String, created: Int64?, until expiry: Date) async throws -> Bool {
        let start = start.load(ordering: .relaxed)
        // Without `created` (a policy that does not require it) the database decides.
        guard let created else { return try await stored(nonce: nonce, keyID: keyID, until: expiry) }
        guard created >= start else { throw HTTPSignatureError.createdBeforeStart(created: created, start: start) }
        let second = self.second
        do {
            try raiseHighWater(to: second)
        } catch {
            throw HTTPSignatureError.replayCacheFull(detail: "the replay record could not be written")
        }
        guard try await memory.insert(nonce: nonce, keyID: keyID, until: expiry) else { return false }
        guard created > second else { return true }
        return try await stored(nonce: nonce, keyID: keyID, until: expiry)
    }

    private func stored(nonce: String, keyID: String, until expiry: Date) async throws -> Bool {
        do {
            return try await store.nonces.insert(nonce, keyID: keyID, until: Int64(expiry.timeIntervalSince1970.rounded(.up)))
        } catch {
            throw HTTPSignatureError.replayCacheFull(detail: "the database did not record the nonce")
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

    func insert(nonce: String, keyID: String, until expiry: Date) async throws -> Bool {
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
        // In one order on every node, so two nodes' statements over the same rows never wait
        // on each other in opposite orders (a deadlock PostgreSQL would break after a second).
        unique.sort { ($0.keyID, $0.nonce) < ($1.keyID, $1.nonce) }
        metrics?.replayBatches.increment()
        metrics?.replayBatchedNonces.increment(by: Int64(unique.count))
        do {
            let fresh = try await store.nonces.insertAll(unique.map { ($0.keyID, $0.nonce, $0.expiry) })
            for pending in unique {
                pending.answer.resume(returning: .success(fresh.contains(StoredNonceKey(keyID: pending.keyID, nonce: pending.nonce))))
            }
        } catch {
            // One row the statement could not take must not fail the others: each alone.
            let retry = unique.count > 1
            for pending in unique {
                var result = Result<Bool, HTTPSignatureError>.failure(.replayCacheFull(detail: "the database did not record the nonce"))
                if retry, let fresh = try? await store.nonces.insertAll([(pending.keyID, pending.nonce, pending.expiry)]) {
                    result = .success(!fresh.isEmpty)
                }
                pending.answer.resume(returning: result)
            }
        }
    }
}
