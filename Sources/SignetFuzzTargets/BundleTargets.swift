import Foundation
import SignetBundle
import SignetCore

/// The bundle format: the zip reader, whole bundles against a fixed trust root, canonical
/// JSON, manifests, signature lists and trust roots.
enum BundleTargets {
    static let all: TargetList = [
        ("zip", { BundleTargets.zip($0) }),
        ("bundle", { BundleTargets.bundle($0) }),
        ("json", { BundleTargets.json($0) }),
        ("manifest", { BundleTargets.manifest($0) }),
        ("signatures", { BundleTargets.signatures($0) }),
        ("trust-root", { BundleTargets.trustRoot($0) }),
        ("tar", { BundleTargets.tar($0) }),
    ]

    static let manifestEntry = ".signet/manifest.json"
    static let signaturesEntry = ".signet/signatures.json"

    // MARK: The zip

    /// `ZipReader(path:limits:)` and a read of every entry (through a scratch file: the reader
    /// uses `pread`), then the entry-name rules and `BundleContents(path:)`. Invariants: every
    /// entry's bytes lie inside the file, are the file's bytes at that place, and no two
    /// entries share bytes.
    static func zip(_ bytes: [UInt8]) {
        ScratchFile.with("zip", contents: bytes) { path in
            guard let entries = try? BundleFuzzing.zipEntries(path: path) else { return }
            var end: UInt64 = 0
            for entry in entries.sorted(by: { $0.dataOffset < $1.dataOffset }) {
                let stop = entry.dataOffset.addingReportingOverflow(entry.size)
                Fuzz.require(!stop.overflow && stop.partialValue <= UInt64(bytes.count), "zip", "entry \(entry.name.debugDescription) runs past the end of the file")
                Fuzz.require(entry.dataOffset >= end, "zip", "entry \(entry.name.debugDescription) overlaps the entry before it")
                Fuzz.require(
                    entry.content.count == Int(entry.size) && entry.content[...] == bytes[Int(entry.dataOffset)..<Int(stop.partialValue)], "zip",
                    "entry \(entry.name.debugDescription) reads other bytes than the file holds at its offset")
                end = stop.partialValue
            }
            let names = entries.map(\.name)
            for name in names where name != manifestEntry && name != signaturesEntry {
                _ = try? BundlePath.validate(name, source: "fuzz input", limits: BundleLimits())
            }
            _ = try? BundlePath.checkCollisions(names, source: "fuzz input")
            _ = try? BundleContents(path: path)
        }
    }

    // MARK: Whole bundles

    /// The key every seed bundle of `Fuzz/corpus/bundle` is signed with (Ed25519; its private
    /// key is derived in `Fuzz/make-seeds.py` and protects nothing).
    static let trustedKeySPKI = "MCowBQYDK2VwAyEAvIK4H9XKD2PINPscFHXtzIB9QYLwAyY9LDuTXrWD2Ck="
    /// The moment expiry is judged at: fixed, so that a run replays the same way.
    static let now = Date(timeIntervalSince1970: 1_798_761_600)  // 2027-01-01T00:00:00Z

    static let trustedKey: PublicKey = {
        guard let der = Base64.decode(trustedKeySPKI),
            case .publicKey(let key)? = try? KeyDecoder.decode(der, source: "the fuzz trust key")
        else { preconditionFailure("the fuzz trust key does not decode") }
        return key
    }()

    static let trust: TrustRoot = {
        guard let key = try? TrustedKey(publicKey: trustedKey, algorithm: .ed25519), let root = try? TrustRoot(threshold: 1, keys: [key])
        else { preconditionFailure("the fuzz trust root cannot be made") }
        return root
    }()

    /// `BundleVerifier.verify(path:)` against a trust root of one fixed key, and
    /// `BundleContents(path:)`. Invariant: a bundle that verifies holds exactly the listed
    /// files with their sizes and SHA-256, its manifest entry is the manifest's canonical
    /// bytes, and a signature by the trusted key over them verifies.
    static func bundle(_ bytes: [UInt8]) {
        ScratchFile.with("bundle", contents: bytes) { path in
            _ = try? BundleContents(path: path)
            let verifier = BundleVerifier(trust: trust, now: now)
            guard case .success(let verified) = Blocking.run({ try await verifier.verify(path: path) }) else { return }
            guard let entries = try? BundleFuzzing.zipEntries(path: path) else {
                Fuzz.require(false, "bundle", "a verified bundle's zip does not open")
                return
            }
            let manifest = verified.manifest
            Fuzz.require(entries.count == manifest.files.count + 2, "bundle", "a verified bundle holds entries its manifest does not list")
            for file in manifest.files {
                let matching = entries.filter { $0.name == file.path }
                Fuzz.require(matching.count == 1, "bundle", "\(file.path.debugDescription) is listed but not held once")
                guard let entry = matching.first else { return }
                Fuzz.require(Int64(entry.size) == file.size, "bundle", "\(file.path.debugDescription) has another size than listed")
                Fuzz.require(
                    DigestAlgorithm.sha256.hash(entry.content).bytes == file.sha256, "bundle",
                    "\(file.path.debugDescription) has another SHA-256 than listed")
            }
            guard let manifestBytes = entries.first(where: { $0.name == manifestEntry })?.content,
                let signatureBytes = entries.first(where: { $0.name == signaturesEntry })?.content
            else {
                Fuzz.require(false, "bundle", "a verified bundle lacks its manifest or signatures entry")
                return
            }
            Fuzz.require(manifestBytes == manifest.canonicalBytes, "bundle", "the manifest entry is not the verified manifest's canonical form")
            Fuzz.require(
                DigestAlgorithm.sha256.hash(manifestBytes).bytes == verified.manifestDigest, "bundle", "the manifest digest is not the entry's")
            let signatures = (try? BundleFuzzing.signatureList(signatureBytes)) ?? []
            let signed = signatures.contains { signature in
                guard signature.keyID == trustedKey.fingerprint, signature.algorithm == .ed25519,
                    let verifier = try? PublicKeyVerifier(key: trustedKey, algorithm: .ed25519)
                else { return false }
                return (try? verifier.verify(signature: signature.signature, message: manifestBytes)) != nil
            }
            Fuzz.require(signed, "bundle", "a bundle verified without a valid signature by the trusted key")
        }
    }

    // MARK: JSON

    /// The canonical-JSON parser (`CanonicalJSON.parse`). Invariant: the canonical form of
    /// what parses is a fixed point (it parses, and its canonical form is itself).
    static func json(_ bytes: [UInt8]) {
        guard let canonical = BundleFuzzing.canonicalJSON(bytes) else { return }
        Fuzz.require(BundleFuzzing.canonicalJSON(canonical) == canonical, "json", "the canonical form is not a fixed point")
        if bytes == canonical {
            _ = try? BundleManifest(bytes: bytes, source: "fuzz input")
        }
    }

    /// `BundleManifest(bytes:source:limits:)`. Invariants: what parses is canonical (its
    /// `canonicalBytes` are the input) and parses back equal.
    static func manifest(_ bytes: [UInt8]) {
        guard let manifest = try? BundleManifest(bytes: bytes, source: "fuzz input") else { return }
        Fuzz.require(manifest.canonicalBytes == bytes, "manifest", "a manifest was accepted that is not in canonical form")
        let again = try? BundleManifest(bytes: manifest.canonicalBytes, source: "re-encoded")
        Fuzz.require(again == manifest, "manifest", "the canonical bytes do not parse back to the manifest")
    }

    /// The `.signet/signatures.json` parser. Invariant: the list written again parses equal.
    static func signatures(_ bytes: [UInt8]) {
        guard let signatures = try? BundleFuzzing.signatureList(bytes) else { return }
        let again = try? BundleFuzzing.signatureList(BundleFuzzing.signatureListBytes(signatures))
        Fuzz.require(again == signatures, "signatures", "the signature list written again parses to another list")
    }

    /// `TrustRoot(bytes:source:limits:)`. Invariants: `fileBytes` parse back equal, and the
    /// signed bytes are canonical JSON.
    static func trustRoot(_ bytes: [UInt8]) {
        guard let root = try? TrustRoot(bytes: bytes, source: "fuzz input") else { return }
        let again = try? TrustRoot(bytes: root.fileBytes, source: "re-encoded")
        Fuzz.require(again == root, "trust-root", "the trust file written again parses to another root")
        Fuzz.require(BundleFuzzing.canonicalJSON(root.signedBytes) == root.signedBytes, "trust-root", "the signed bytes are not canonical JSON")
        _ = try? trust.accepts(root, source: "fuzz input")
    }

    /// `TarReader` on an archive in memory, each file's data read 7 bytes at a time.
    /// Invariants: a refusal is `BundleError.malformed`; each `data` call gives exactly the bytes asked for up to
    /// the entry's end; the entries returned are the files handed over, and each of their paths
    /// passes `BundlePath.validate` and the set passes `BundlePath.checkCollisions`.
    static func tar(_ bytes: [UInt8]) {
        let limits = BundleLimits()
        var handed: [String] = []
        do {
            let entries = try TarReader(limits: limits).read(TarBytes(bytes)) { (entry, data) throws in
                Fuzz.require(entry.size >= 0, "tar", "an entry of \(entry.size) bytes")
                var read: Int64 = 0
                while read < entry.size {
                    let chunk = try data(7)
                    Fuzz.require(Int64(chunk.count) == min(7, entry.size - read), "tar", "data(7) gave \(chunk.count) bytes")
                    read += Int64(chunk.count)
                }
                let after = try data(7)
                Fuzz.require(after.isEmpty, "tar", "data went on past the entry's size")
                handed.append(entry.path)
            }
            Fuzz.require(entries.map(\.path) == handed, "tar", "the entries returned are not the files handed over")
            for entry in entries {
                do {
                    try BundlePath.validate(entry.path, source: "tar", limits: limits)
                } catch {
                    Fuzz.require(false, "tar", "an entry's path is unsafe: \(error)")
                }
            }
            do {
                try BundlePath.checkCollisions(entries.map(\.path), source: "tar")
            } catch {
                Fuzz.require(false, "tar", "the entries collide: \(error)")
            }
        } catch {
            guard let error = error as? BundleError, case .malformed = error else {
                Fuzz.require(false, "tar", "an archive was refused with something other than a malformed-input error: \(error)")
                return
            }
        }
    }
}
