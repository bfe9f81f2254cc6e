#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Starts the disk writeback of a file as it is written, so that the `fsync` that makes it
/// durable waits for the tail only, instead of for the whole file's writeback to start and end
/// then; and keeps the dirty pages bounded. Every writer of durable output (the atomic writer,
/// bundle creation, bundle extraction) tells its pacer what it appended.
///
/// On Linux it calls `sync_file_range(2)` (as databases do): every ``window`` bytes it starts
/// the writeback of what was appended since the last start, and waits for the window before
/// that one. Elsewhere it does nothing. Only an optimisation: the durability promise is the
/// writer's `fsync`.
package struct WritebackPacer: Sendable {
    /// How much is written between two starts of writeback.
    package static let window: Int64 = 8 << 20

    private let fileDescriptor: Int32
    private var written: Int64 = 0
    private var started: Int64 = 0
    private var waited: Int64 = 0

    /// A pacer for the file open as `fileDescriptor`, written from its start.
    package init(fileDescriptor: Int32) {
        self.fileDescriptor = fileDescriptor
    }

    /// Records `count` bytes appended to the file, and starts writeback when a window is full.
    package mutating func appended(_ count: Int) {
        written += Int64(count)
        guard written - started >= Self.window else { return }
        if let syncRange = Self.syncFileRange {
            _ = syncRange(fileDescriptor, started, written - started, Self.rangeWrite)
            if started > waited {
                _ = syncRange(fileDescriptor, waited, started - waited, Self.rangeWaitBefore | Self.rangeWrite | Self.rangeWaitAfter)
                waited = started
            }
        }
        started = written
    }

    /// Linux's `sync_file_range(2)` (not in the Glibc module, which is built without
    /// `_GNU_SOURCE`), looked up once; nil elsewhere.
    private static let syncFileRange: (@convention(c) (Int32, Int64, Int64, UInt32) -> Int32)? = {
        #if os(Linux)
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "sync_file_range") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int32, Int64, Int64, UInt32) -> Int32).self)
        #else
        return nil
        #endif
    }()
    private static let rangeWaitBefore: UInt32 = 1
    private static let rangeWrite: UInt32 = 2
    private static let rangeWaitAfter: UInt32 = 4
}
