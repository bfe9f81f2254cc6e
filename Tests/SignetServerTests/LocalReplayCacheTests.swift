import Foundation
import Logging
import SignetCore
import SignetHTTP
import SignetServer
import SignetTestSupport
import Synchronization
import Testing

/// The in-memory replay cache of a node on SQLite, in process with a clock the test sets: what
/// a crash, a clean stop, a clock set back and a damaged snapshot leave for the next start.
@Suite struct LocalReplayCacheTests {
    final class Clock: Sendable {
        let now = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
        func set(_ seconds: Int64) { now.withLock { $0 = Date(timeIntervalSince1970: TimeInterval(seconds)) } }
        var wallClock: WallClock { WallClock { self.now.withLock { $0 } } }
    }

    static let logger: Logger = {
        var logger = Logger(label: "signet.replay-cache-test")
        logger.logLevel = .critical
        return logger
    }()

    /// A migrated store on SQLite in `folder`, reading `clock`.
    static func store(in folder: TemporaryFolder, clock: Clock) async throws -> (ServerStore, String) {
        let path = folder.file("signet.sqlite")
        let store = ServerStore(database: try ServerDatabase(location: .sqlite(path: path), logger: logger), clock: clock.wallClock)
        try await store.migrate()
        return (store, path)
    }

    /// A temporary folder, a clock at 1,800,000,000 and a migrated store on SQLite in the folder.
    final class Fixture: Sendable {
        let folder: TemporaryFolder
        let clock = Clock()
        let store: ServerStore
        let path: String

        init(_ prefix: String) async throws {
            folder = try TemporaryFolder(prefix: prefix)
            (store, path) = try await LocalReplayCacheTests.store(in: folder, clock: clock)
        }

        /// A cache on the fixture's store, prepared with the clock at `second`.
        func cache(preparedAt second: Int64) async throws -> LocalReplayCache {
            clock.set(second)
            let cache = LocalReplayCache(store: store, capacity: 1000)
            try await cache.prepare(path: path, logger: LocalReplayCacheTests.logger)
            return cache
        }

        /// Closes the database; the folder goes with the fixture.
        func close() {
            let store = store
            Task { await store.database.shutdown() }
        }
    }

    static func insert(_ cache: LocalReplayCache, _ nonce: String, created: Int64) async throws -> Bool {
        try await cache.insert(nonce: nonce, keyID: "app", created: created, until: Date(timeIntervalSince1970: TimeInterval(created + 301)))
    }

    @Test func afterACrashTheStartIsPastEverythingAcceptedEvenWithTheClockSetBack() async throws {
        let fixture = try await Fixture("signet-replay-crash")
        defer { fixture.close() }
        let (clock, store, path) = (fixture.clock, fixture.store, fixture.path)
        let t: Int64 = 1_800_000_000
        clock.set(t)
        var first: LocalReplayCache? = LocalReplayCache(store: store, capacity: 1000)
        try await first!.prepare(path: path, logger: Self.logger)
        clock.set(t + 10)
        #expect(try await Self.insert(first!, "n1", created: t + 10))
        #expect(try await Self.insert(first!, "n1", created: t + 10) == false)
        first = nil  // a crash: no snapshot, the lock let go

        clock.set(t - 100)  // the clock was set back before the restart
        let second = LocalReplayCache(store: store, capacity: 1000)
        try await second.prepare(path: path, logger: Self.logger)
        for (nonce, created) in [("n1", t + 10), ("n2", t - 100), ("n3", t + 5)] {
            await #expect(throws: HTTPSignatureError.createdBeforeStart(created: created, start: t + 11)) {
                _ = try await Self.insert(second, nonce, created: created)
            }
        }
        #expect(try await Self.insert(second, "n4", created: t + 11))
    }

    @Test func aCleanStopHandsItsNoncesAndItsStartToTheNextStart() async throws {
        let fixture = try await Fixture("signet-replay-clean")
        defer { fixture.close() }
        let path = fixture.path
        let t: Int64 = 1_800_000_000
        let first = try await fixture.cache(preparedAt: t)
        #expect(try await Self.insert(first, "n1", created: t + 1))
        #expect(try await Self.insert(first, "ahead", created: t + 200))
        first.persist(logger: Self.logger)
        // Once persisting has begun, nothing more is accepted.
        await #expect(throws: HTTPSignatureError.self) { _ = try await Self.insert(first, "late", created: t + 1) }
        #expect(FileManager.default.fileExists(atPath: path + "-nonces"))

        let second = try await fixture.cache(preparedAt: t + 60)
        #expect(!FileManager.default.fileExists(atPath: path + "-nonces"), "the snapshot is read once")
        #expect(try await Self.insert(second, "n1", created: t + 1) == false)
        #expect(try await Self.insert(second, "ahead", created: t + 200) == false)
        // A client whose clock runs 55 s behind is not refused after a planned restart.
        #expect(try await Self.insert(second, "slow", created: t + 5))
        await #expect(throws: HTTPSignatureError.createdBeforeStart(created: t, start: t + 1)) {
            _ = try await Self.insert(second, "old", created: t)
        }
    }

    @Test func aDamagedSnapshotIsIgnoredAndTheStartRuleApplies() async throws {
        let fixture = try await Fixture("signet-replay-damaged")
        defer { fixture.close() }
        let path = fixture.path
        let t: Int64 = 1_800_000_000
        let first = try await fixture.cache(preparedAt: t)
        #expect(try await Self.insert(first, "n1", created: t + 1))
        first.persist(logger: Self.logger)
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path + "-nonces")))
        bytes[bytes.count / 2] ^= 0x01
        try Data(bytes).write(to: URL(fileURLWithPath: path + "-nonces"))

        let second = try await fixture.cache(preparedAt: t + 60)
        await #expect(throws: HTTPSignatureError.createdBeforeStart(created: t + 1, start: t + 61)) {
            _ = try await Self.insert(second, "n1", created: t + 1)
        }
    }

    @Test func aSecondCacheOnTheSameDatabaseWaitsThenGivesUp() async throws {
        let fixture = try await Fixture("signet-replay-lock")
        defer { fixture.close() }
        let (store, path) = (fixture.store, fixture.path)
        let first = LocalReplayCache(store: store, capacity: 1000)
        try await first.prepare(path: path, logger: Self.logger)
        // Through a symbolic link: the lock is named after the database's real path.
        let link = fixture.folder.file("link.sqlite")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
        let second = LocalReplayCache(store: store, capacity: 1000)
        await #expect(throws: ServerError.self) { try await second.prepare(path: link, logger: Self.logger, wait: .milliseconds(300)) }
        // A second prepare of the first is nothing.
        try await first.prepare(path: path, logger: Self.logger)
    }

    /// The high-water mark only rises: a clock set back, then a clean stop, then a crash, still
    /// leaves the first server's mark in force (found by the second attack round).
    @Test func theHighWaterMarkSurvivesAClockSetBackAndTwoStops() async throws {
        let fixture = try await Fixture("signet-replay-clockback")
        defer { fixture.close() }
        let (clock, store, path) = (fixture.clock, fixture.store, fixture.path)
        let t: Int64 = 1_800_000_000
        clock.set(t + 100)  // a clock 100 s fast
        var fast: LocalReplayCache? = LocalReplayCache(store: store, capacity: 1000)
        try await fast!.prepare(path: path, logger: Self.logger)
        // Dated in this clock's present: held in memory only.
        clock.set(t + 110)
        #expect(try await Self.insert(fast!, "a", created: t + 110))
        fast = nil  // crash

        for (index, now) in [t, t + 1, t + 2].enumerated() {
            clock.set(now)
            let cache = LocalReplayCache(store: store, capacity: 1000)
            try await cache.prepare(path: path, logger: Self.logger)
            await #expect(throws: HTTPSignatureError.createdBeforeStart(created: t + 110, start: t + 111), "start \(index)") {
                _ = try await Self.insert(cache, "a", created: t + 110)
            }
            if index == 0 { cache.persist(logger: Self.logger) }  // a clean stop, then crashes
        }
    }

    @Test func aLockFileAtTheEndOfTimeRefusesEverythingWithoutCrashing() async throws {
        let fixture = try await Fixture("signet-replay-lock-max")
        defer { fixture.close() }
        let (store, path) = (fixture.store, fixture.path)
        var end = Int64.max.littleEndian
        try Data(bytes: &end, count: 8).write(to: URL(fileURLWithPath: path + "-node.lock"))
        let cache = LocalReplayCache(store: store, capacity: 1000)
        try await cache.prepare(path: path, logger: Self.logger)
        await #expect(throws: HTTPSignatureError.createdBeforeStart(created: 1_800_000_001, start: .max)) {
            _ = try await Self.insert(cache, "n", created: 1_800_000_001)
        }
    }

    @Test func aDatabaseWithHardLinksIsRefused() async throws {
        let fixture = try await Fixture("signet-replay-hardlink")
        defer { fixture.close() }
        let (store, path) = (fixture.store, fixture.path)
        #expect(link(path, fixture.folder.file("other.sqlite")) == 0)
        let cache = LocalReplayCache(store: store, capacity: 1000)
        await #expect(throws: ServerError.self) { try await cache.prepare(path: path, logger: Self.logger, wait: .milliseconds(300)) }
    }

    /// What one process writes, another restores: the fingerprints are not the standard
    /// library's per-process hashes.
    @Test func aSnapshotIsRestoredByAnotherProcess() async throws {
        let t: Int64 = 1_800_000_000
        let salts: (UInt64, UInt64) = (0x0123_4567_89AB_CDEF, 0xFEDC_BA98_7654_3210)
        let cache = InMemoryNonceCache(capacity: 10, reserving: nil, clock: .fixed(Date(timeIntervalSince1970: TimeInterval(t))), salts: salts, portable: true)
        #expect(try await cache.insert(nonce: "n1", keyID: "app", until: Date(timeIntervalSince1970: TimeInterval(t + 300))))
        // The fingerprint of ("app", "n1") under these salts, as any process computes it: the
        // first 16 bytes of SHA-256(salts ‖ length of the key id ‖ key id ‖ nonce), little-endian.
        let entry = try #require(cache.snapshot().entries.first)
        #expect(entry.high == 0x5cd6_344d_e096_626d && entry.low == 0x16cf_c33a_ab26_2af9, "computed with Python's hashlib")
        let written = try #require(ReplaySnapshot(decoding: ReplaySnapshot(start: t, highWater: t, cache: cache.snapshot()).encoded()))
        let other = InMemoryNonceCache(capacity: 10, reserving: nil, clock: .fixed(Date(timeIntervalSince1970: TimeInterval(t))), salts: salts, portable: true)
        #expect(other.restore(written.cache))
        #expect(try await other.insert(nonce: "n1", keyID: "app", until: Date(timeIntervalSince1970: TimeInterval(t + 300))) == false)
    }

    @Test func snapshotsThatAreNotWholeAreRefused() throws {
        let snapshot = ReplaySnapshot(
            start: 5, highWater: 6, cache: InMemoryNonceCache.Snapshot(salts: (7, 8), entries: [(9, 10, 11.5), (12, 13, 14)]))
        let bytes = snapshot.encoded()
        let decoded = try #require(ReplaySnapshot(decoding: bytes))
        #expect(decoded.encoded() == bytes)
        #expect(decoded.start == 5 && decoded.highWater == 6 && decoded.cache.entries.count == 2)
        for cut in [0, 10, bytes.count - 33, bytes.count - 1] { #expect(ReplaySnapshot(decoding: Array(bytes.prefix(cut))) == nil, "cut at \(cut)") }
        #expect(ReplaySnapshot(decoding: bytes + [0]) == nil)
        var flipped = bytes
        flipped[40] ^= 0x80
        #expect(ReplaySnapshot(decoding: flipped) == nil)
        var wrongMagic = bytes
        wrongMagic[0] = UInt8(ascii: "S")
        #expect(ReplaySnapshot(decoding: wrongMagic) == nil)
    }
}
