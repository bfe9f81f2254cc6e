/// Signing and verifying files: hash-then-sign streamed in constant memory, or (Ed25519)
/// the whole file as the message, as `openssl pkeyutl -sign -rawin` does.
public enum FileSignature {
    /// The largest file Ed25519 signs or verifies: it must be held in memory whole.
    public static let maximumEd25519MessageSize = 128 << 20

    /// Signs the file at `path` (`-` for standard input).
    public static func sign(
        path: String, with signer: any Signer, progress: FileDigester.Progress? = nil
    ) async throws -> [UInt8] {
        if let digestAlgorithm = signer.algorithm.digest {
            let digest = try FileDigester.digest(path: path, algorithm: digestAlgorithm, progress: progress)
            return try await signer.sign(digest: digest)
        }
        return try await signer.sign(message: try readMessage(path: path, progress: progress))
    }

    /// Verifies `signature` over the file at `path`; throws
    /// ``SignetCoreError/signatureInvalid(detail:)`` when it does not verify.
    public static func verify(
        signature: [UInt8], path: String, with verifier: any Verifier, progress: FileDigester.Progress? = nil
    ) throws {
        if let digestAlgorithm = verifier.algorithm.digest {
            let digest = try FileDigester.digest(path: path, algorithm: digestAlgorithm, progress: progress)
            try verifier.verify(signature: signature, digest: digest)
        } else {
            try verifier.verify(signature: signature, message: try readMessage(path: path, progress: progress))
        }
    }

    private static func readMessage(path: String, progress: FileDigester.Progress?) throws -> [UInt8] {
        let input = try FileInput(path: path)
        do {
            let bytes = try input.readAll(limit: maximumEd25519MessageSize)
            progress?(bytes.count)
            return bytes
        } catch SignetCoreError.tooLarge {
            throw SignetCoreError.tooLarge(source: "\(input.displayName) (Ed25519 signs the whole message in memory; hash-then-sign algorithms such as ecdsa-p256-sha256 stream files of any size)", limit: maximumEd25519MessageSize)
        }
    }
}
