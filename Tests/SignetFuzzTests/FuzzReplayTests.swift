import Foundation
import SignetFuzzTargets
import Testing

/// Replays the seed corpus and every recorded finding through each fuzz target, on every test
/// run: a regression in a parser shows up here as a crash or a failed invariant, long after
/// the fuzzer found it. The corpus folders must exist and hold files, so that this cannot pass
/// by replaying nothing.
@Suite("fuzz corpus and regressions replay")
struct FuzzReplayTests {
    /// The repository's `Fuzz/` folder, found from this file's path.
    static let fuzzFolder: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // SignetFuzzTests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()  // the repository
        .appendingPathComponent("Fuzz", isDirectory: true)

    /// The regular files of `folder` (sorted; hidden ones such as `.gitkeep` skipped), or nil
    /// when the folder does not exist.
    static func files(in folder: URL) -> [URL]? {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder), isFolder.boolValue else { return nil }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { !$0.hasPrefix(".") }.sorted().map { folder.appendingPathComponent($0) }.filter { url in
            var isSubfolder: ObjCBool = false
            return FileManager.default.fileExists(atPath: url.path, isDirectory: &isSubfolder) && !isSubfolder.boolValue
        }
    }

    @Test("every target has a seed corpus, and every corpus folder a target")
    func corpusFoldersMatchTargets() throws {
        let corpus = Self.fuzzFolder.appendingPathComponent("corpus", isDirectory: true)
        let folders = try FileManager.default.contentsOfDirectory(atPath: corpus.path).filter { !$0.hasPrefix(".") }
        #expect(Set(folders) == Set(FuzzTargets.names), "Fuzz/corpus/ folders and FuzzTargets.all differ")
        #expect(FuzzTargets.names.count == Set(FuzzTargets.names).count, "two targets share a name")
        #expect(FuzzTargets.names.count >= 20)
    }

    @Test("the corpus and the regressions replay without a finding", arguments: FuzzTargets.names)
    func replay(target: String) async throws {
        let run = try #require(FuzzTargets.named(target))
        let seeds = try #require(
            Self.files(in: Self.fuzzFolder.appendingPathComponent("corpus/\(target)", isDirectory: true)),
            "Fuzz/corpus/\(target)/ is missing")
        #expect(!seeds.isEmpty, "Fuzz/corpus/\(target)/ holds no seed")
        let regressions = Self.files(in: Self.fuzzFolder.appendingPathComponent("regressions/\(target)", isDirectory: true)) ?? []
        let inputs: [[UInt8]] = try (seeds + regressions).map { try [UInt8](Data(contentsOf: $0)) }
        // On a thread of its own, as libFuzzer calls a target: the targets that verify whole
        // bundles block while async work runs, which must not take a thread from the pool
        // that runs that work (a one-core machine has one).
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let thread = Thread {
                for bytes in inputs { run(bytes) }
                continuation.resume()
            }
            thread.stackSize = 8 << 20
            thread.start()
        }
    }
}
