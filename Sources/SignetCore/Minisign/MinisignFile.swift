#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Signing and verifying files as minisign does (`minisign -S` / `minisign -V`).
///
/// ```swift
/// let key = try MinisignSecretKeyFile.read(path: "minisign.key").decrypt(passphrase: passphrase)
/// let signature = try await MinisignFile.sign(path: "app.zip", signer: key.signer, keyID: key.keyID)
/// try AtomicFile.write(signature.fileContents, to: "app.zip.minisig", permissions: .standard, overwrite: false)
///
/// let verified = try MinisignFile.verify(signature, path: "app.zip", publicKey: publicKey)
/// print(verified.trustedCommentText)
/// ```
public enum MinisignFile {
    /// What to write into a new signature.
    public struct Options: Sendable {
        /// The trusted comment; nil for minisign's `timestamp:<unix>\tfile:<name>[\thashed]`.
        public var trustedComment: String?
        /// The untrusted comment; nil for `signature from minisign secret key`.
        public var untrustedComment: String?
        /// Sign the whole file (`"Ed"`, minisign `-l`) instead of its BLAKE2b-512 digest.
        public var legacy: Bool

        /// Options; every nil means minisign's default.
        public init(trustedComment: String? = nil, untrustedComment: String? = nil, legacy: Bool = false) {
            self.trustedComment = trustedComment
            self.untrustedComment = untrustedComment
            self.legacy = legacy
        }
    }

    /// The untrusted comment minisign writes by default.
    public static let defaultUntrustedComment = "signature from minisign secret key"
    /// The suffix of a signature file's default name.
    public static let signatureSuffix = ".minisig"
    /// The largest file a legacy (`"Ed"`) signature is made or checked for: the whole file is
    /// the Ed25519 message and is held in memory.
    public static let maximumLegacyMessageSize = FileSignature.maximumEd25519MessageSize

    /// minisign's default trusted comment: `timestamp:<unix time>\tfile:<base name>`, plus
    /// `\thashed` for a prehashed signature.
    public static func defaultTrustedComment(path: String, prehashed: Bool, timestamp: Int = Int(time(nil))) -> String {
        let name = path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? path
        return "timestamp:\(timestamp)\tfile:\(name)" + (prehashed ? "\thashed" : "")
    }

    /// Signs the file at `path` (`-`: standard input) with an Ed25519 `signer`.
    ///
    /// The default (``MinisignSignature/Algorithm/prehashed``) streams the file through
    /// BLAKE2b-512 in constant memory; `legacy` reads it whole (at most
    /// ``maximumLegacyMessageSize``).
    public static func sign(
        path: String, signer: any Signer, keyID: MinisignKeyID, options: Options = Options(),
        progress: FileDigester.Progress? = nil
    ) async throws -> MinisignSignature {
        guard signer.algorithm == .ed25519 else {
            throw SignetCoreError.algorithmMismatch(
                algorithm: signer.algorithm.rawValue, keyDescription: "minisign", hint: "minisign signatures are Ed25519")
        }
        let trusted = options.trustedComment ?? defaultTrustedComment(path: path, prehashed: !options.legacy)
        let untrusted = options.untrustedComment ?? defaultUntrustedComment
        try MinisignText.checkComment(trusted, kind: "trusted", maximumLength: MinisignSignature.maximumTrustedCommentLength)
        try MinisignText.checkComment(untrusted, kind: "untrusted", maximumLength: MinisignSignature.maximumUntrustedCommentLength)
        let algorithm: MinisignSignature.Algorithm = options.legacy ? .legacy : .prehashed
        let message = try self.message(path: path, algorithm: algorithm, progress: progress)
        let signature = try await signer.sign(message: message)
        let trustedBytes = Array(trusted.utf8)
        let global = try await signer.sign(message: signature + trustedBytes)
        return MinisignSignature(
            algorithm: algorithm, keyID: keyID, signature: signature, untrustedComment: Array(untrusted.utf8),
            trustedComment: trustedBytes, globalSignature: global)
    }

    /// Verifies `signature` over the file at `path` as `minisign -V` does: the key ids must
    /// match, then the file signature, then the global signature over the trusted comment.
    ///
    /// Legacy (`Ed`) signatures sign the whole file and are refused unless `allowLegacy`: a
    /// prehashed `ED` signature is an Ed25519 signature over the file's BLAKE2b-512 digest, so
    /// relabelled as `Ed` it verifies for a 64-byte file holding that digest. Allow legacy
    /// signatures only for publishers known to make them.
    ///
    /// - Parameters:
    ///   - signature: the parsed `.minisig`.
    ///   - path: the signed file.
    ///   - publicKey: the signer's public key.
    ///   - allowLegacy: accept `Ed` signatures too (minisign's default; Signet's is off).
    ///   - progress: called with the bytes read.
    /// - Returns: the signature, whose trusted comment is now known to be genuine.
    /// - Throws: ``SignetCoreError/legacySignatureNotAllowed(source:)`` for a legacy signature
    ///   without `allowLegacy`; ``SignetCoreError/signatureInvalid(detail:)`` for a key id
    ///   mismatch or a signature that does not verify.
    @discardableResult
    public static func verify(
        _ signature: MinisignSignature, path: String, publicKey: MinisignPublicKey, allowLegacy: Bool = false,
        progress: FileDigester.Progress? = nil
    ) throws -> MinisignSignature {
        if !allowLegacy, signature.algorithm == .legacy {
            throw SignetCoreError.legacySignatureNotAllowed(source: path)
        }
        guard signature.keyID == publicKey.keyID else {
            throw SignetCoreError.signatureInvalid(
                detail: "the signature's key id is \(signature.keyID) but the public key's is \(publicKey.keyID) (signed by another key)")
        }
        let message = try self.message(path: path, algorithm: signature.algorithm, progress: progress)
        guard publicKey.isValidSignature(signature.signature, for: message) else {
            throw SignetCoreError.signatureInvalid(detail: "Signature verification failed")
        }
        guard publicKey.isValidSignature(signature.globalSignature, for: signature.globalMessage) else {
            throw SignetCoreError.signatureInvalid(detail: "Comment signature verification failed (the trusted comment was altered)")
        }
        return signature
    }

    /// What the file signature covers: the file's BLAKE2b-512 digest, or (legacy) the file.
    static func message(path: String, algorithm: MinisignSignature.Algorithm, progress: FileDigester.Progress?) throws -> [UInt8] {
        let input = try FileInput(path: path)
        switch algorithm {
        case .prehashed:
            return try BLAKE2b.hash(input: input, progress: progress)
        case .legacy:
            do {
                let bytes = try input.readAll(limit: maximumLegacyMessageSize)
                progress?(bytes.count)
                return bytes
            } catch SignetCoreError.tooLarge {
                throw SignetCoreError.tooLarge(
                    source: "\(input.displayName) (a legacy \"Ed\" minisign signature covers the whole file, held in memory; the default prehashed signatures stream files of any size)",
                    limit: maximumLegacyMessageSize)
            }
        }
    }
}
