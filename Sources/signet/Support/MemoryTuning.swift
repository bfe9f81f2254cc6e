#if canImport(Glibc)
import Glibc
#endif

/// Process-wide allocator settings for the CLI.
enum MemoryTuning {
    /// Streaming commands (encrypt, decrypt, hash, bundles) allocate and free buffers of 64 KiB
    /// to 1 MiB on several threads. glibc's defaults hand each freed one back to the kernel
    /// (madvise/munmap) and fault it in again on the next allocation, which cost age
    /// encryption about a third of its time. This keeps freed memory in the process instead (a
    /// few MiB at most). `mallopt` is in <malloc.h>, which the Glibc module does not import, so
    /// it is looked up by name; where it is missing nothing changes.
    static func keepFreedMemory() {
        #if canImport(Glibc)
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        guard let symbol = dlsym(nil, "mallopt") else { return }
        let mallopt = unsafeBitCast(symbol, to: Mallopt.self)
        _ = mallopt(-1, 256 << 20)  // M_TRIM_THRESHOLD
        _ = mallopt(-3, 32 << 20)  // M_MMAP_THRESHOLD
        #endif
    }
}
