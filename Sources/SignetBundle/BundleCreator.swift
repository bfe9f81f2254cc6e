import Foundation
import SignetCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Makes a signed bundle: a zip of the files (stored, in path order), then the canonical
/// manifest and its signatures under `.signet/` (docs/formats/bundle.md).
public struct BundleCreator: Sendable {
    /// Called with the number of bytes just added.
    public typealias Progress = @Sendable (Int) -> Void

    /// The bundle's name: 1–128 of `A–Z a–z 0–9 . _ -`, not starting with `.` or `-`. Rollback
    /// protection is per name.
    public var name: String
    /// The release number, 1 to 2^53; each release of a name must be greater than the last one a
    /// verifier accepted.
    public var version: Int64
    /// When verifiers start refusing the bundle; nil for never.
    public var expires: Date?
    /// The creation time written to the manifest, to the second.
    public var created: Date
    /// Bounds the inputs are held to (number of files, total size, path length), so that a bundle
    /// is never made that verifiers with the same limits would refuse.
    public var limits: BundleLimits

    /// A creator of release `version` of `name`. Name and version are checked when the bundle is
    /// made, not here.
    public init(name: String, version: Int64, expires: Date? = nil, created: Date = Date(), limits: BundleLimits = BundleLimits()) {
        self.name = name
        self.version = version
        self.expires = expires
        self.created = created
        self.limits = limits
    }

    /// The files `inputs` name, with their paths inside the bundle: a folder contributes
    /// every file below it (paths relative to it), a file its own name.
    public func collect(_ inputs: [String]) throws -> [(path: String, source: String)] {
        var files: [(path: String, source: String)] = []
        for input in inputs {
            let trimmed = input.count > 1 && input.hasSuffix("/") ? String(input.dropLast()) : input
            switch BundleFiles.lstatMode(trimmed) {
            case S_IFDIR?: try walk(trimmed, prefix: "", into: &files)
            case S_IFREG?: files.append((String(trimmed.split(separator: "/").last ?? Substring(trimmed)), trimmed))
            case S_IFLNK?: throw BundleError.invalidArgument(detail: "\(input): is a symbolic link; bundles hold regular files only")
            case nil: throw BundleFiles.error(input)
            default: throw BundleError.invalidArgument(detail: "\(input): is not a regular file or folder")
            }
        }
        guard !files.isEmpty else { throw BundleError.invalidArgument(detail: "nothing to bundle: the inputs hold no files") }
        guard files.count <= limits.maximumEntries else {
            throw BundleError.invalidArgument(detail: "\(files.count) files, more than the limit of \(limits.maximumEntries)")
        }
        try BundleError.asArgument { () throws in
            for file in files { try BundlePath.validate(file.path, source: file.source, limits: limits) }
            try BundlePath.checkCollisions(files.map(\.path), source: "the inputs")
        }
        return files.sorted { Array($0.path.utf8).lexicographicallyPrecedes(Array($1.path.utf8)) }
    }

    private func walk(_ folder: String, prefix: String, into files: inout [(path: String, source: String)]) throws {
        guard let handle = opendir(folder) else { throw BundleFiles.error(folder) }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        closedir(handle)
        for name in names.sorted() {
            let source = folder + "/" + name
            let path = prefix.isEmpty ? name : prefix + "/" + name
            switch BundleFiles.lstatMode(source) {
            case S_IFDIR?: try walk(source, prefix: path, into: &files)
            case S_IFREG?: files.append((path, source))
            case S_IFLNK?: throw BundleError.invalidArgument(detail: "\(source): is a symbolic link; bundles hold regular files only")
            default: throw BundleError.invalidArgument(detail: "\(source): is not a regular file")
            }
            guard files.count <= limits.maximumEntries else {
                throw BundleError.invalidArgument(detail: "more than \(limits.maximumEntries) files under \(folder)")
            }
        }
    }

    /// Writes the bundle of `inputs` to `output`, signed by every signer; returns the manifest.
    /// The output appears complete or not at all; an existing one is replaced only when
    /// `overwrite` is set.
    public func create(
        inputs: [String], signers: [any Signer], output: String, overwrite: Bool = false, progress: Progress? = nil
    ) async throws -> BundleManifest {
        try BundleError.asArgument { () throws in try BundleName.validate(name, source: "--name") }
        guard version >= 1, version <= Int64(1 << 53) else { throw BundleError.invalidArgument(detail: "the version must be between 1 and 2^53") }
        guard !signers.isEmpty else { throw BundleError.invalidArgument(detail: "at least one signing key is needed") }
        if !overwrite, BundleFiles.lstatMode(output) != nil { throw BundleError.outputExists(path: output) }
        let files = try collect(inputs)

        let file: AtomicFileWriter
        do { file = try AtomicFileWriter(path: output, permissions: .standard) } catch { throw BundleError(writing: error, to: output) }
        var writer = ZipWriter(fd: file.fileDescriptor, path: output)
        var listed: [BundleManifest.File] = []
        var total: Int64 = 0
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: FileInput.chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        for file in files {
            let input: FileInput
            do { input = try FileInput(path: file.source) } catch { throw BundleError.io(path: file.source, detail: "\(error)") }
            let size = input.size ?? 0
            total += size
            guard total <= limits.maximumTotalSize else {
                throw BundleError.invalidArgument(detail: "the files add up to more than \(limits.maximumTotalSize) bytes")
            }
            try writer.begin(name: file.path, size: UInt64(size))
            var hasher = DigestAlgorithm.sha256.makeHasher()
            while true {
                let count: Int
                do { count = try input.read(into: buffer) } catch { throw BundleError.io(path: file.source, detail: "\(error)") }
                if count == 0 { break }
                let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
                hasher.update(bufferPointer: chunk)
                try writer.write(chunk)
                progress?(count)
            }
            try writer.end()
            listed.append(BundleManifest.File(path: file.path, size: size, sha256: hasher.finalize().bytes))
        }
        let manifest = BundleManifest(name: name, version: version, created: created, expires: expires, files: listed)
        let manifestBytes = manifest.canonicalBytes
        let signatures = try await BundleSignature.sign(manifestBytes, with: signers)
        try writer.add(name: BundleLayout.manifestEntry, bytes: manifestBytes)
        try writer.add(name: BundleLayout.signaturesEntry, bytes: SignatureList.bytes(signatures))
        try writer.finish()
        do { try file.commit(overwrite: overwrite) } catch { throw BundleError(writing: error, to: output) }
        return manifest
    }
}

/// Where Signet's own entries live in a bundle and in an extracted folder.
enum BundleLayout {
    static let manifestEntry = BundlePath.reservedFolder + "/manifest.json"
    static let signaturesEntry = BundlePath.reservedFolder + "/signatures.json"
}

extension BundleError {
    /// The bundle error for a failed atomic write of `path`.
    init(writing error: any Error, to path: String) {
        guard let error = error as? SignetCoreError else {
            self = error as? BundleError ?? .io(path: path, detail: String(describing: error))
            return
        }
        switch error {
        case .outputExists: self = .outputExists(path: path)
        case .io(_, let detail): self = .io(path: path, detail: detail)
        default: self = .io(path: path, detail: error.description)
        }
    }
}
