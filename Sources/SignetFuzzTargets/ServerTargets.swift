import Foundation
import SignetBundle
import SignetServer

/// The server's request bodies and the rules for what users type, as every endpoint reads them.
enum ServerTargets {
    static let all: TargetList = [
        ("server-body", { ServerTargets.body($0) }),
        ("tar", { ServerTargets.tar($0) }),
        ("replay-snapshot", { ServerTargets.replaySnapshot($0) }),
    ]

    /// `ReplaySnapshot(decoding:)`, the file a cleanly stopped server leaves for the next start.
    /// Invariant: what it accepts encodes back to the same bytes.
    static func replaySnapshot(_ bytes: [UInt8]) {
        guard let snapshot = ReplaySnapshot(decoding: bytes) else { return }
        Fuzz.require(snapshot.encoded() == bytes, "replay-snapshot", "a snapshot does not encode back to its bytes")
    }

    /// `ServerRequestBody.decode` for each body type, then the field rules. Invariants: a
    /// normalised e-mail address normalises to itself, and a refusal is always a 4xx.
    static func body(_ bytes: [UInt8]) {
        let data = Data(bytes)
        func refusedWith4xx(_ error: ServerError) {
            Fuzz.require((400..<500).contains(error.status.code), "server-body", "a body was refused with \(error.status.code)")
        }
        do {
            let registration = try ServerRequestBody.decode(UserAPI.Registration.self, bytes: data)
            do {
                let email = try UserInput.normalizedEmail(registration.email)
                Fuzz.require((try? UserInput.normalizedEmail(email)) == email, "server-body", "normalising an e-mail address twice changes it")
            } catch { refusedWith4xx(error) }
        } catch { refusedWith4xx(error) }
        do {
            let enrolment = try ServerRequestBody.decode(AdminAPI.Enrolment.self, bytes: data)
            do { try AdminAPI.checkName(enrolment.name) } catch { refusedWith4xx(error) }
            if let key = enrolment.publicKey {
                do { _ = try AdminAPI.publicKey(key) } catch { refusedWith4xx(error) }
            }
        } catch { refusedWith4xx(error) }
    }

    /// `TarReader` on an archive in memory, each file's data read 7 bytes at a time.
    /// Invariants: a refusal is a 4xx; each `data` call gives exactly the bytes asked for up to
    /// the entry's end; the entries returned are the files handed over, and each of their paths
    /// passes `BundlePath.validate` and the set passes `BundlePath.checkCollisions`.
    static func tar(_ bytes: [UInt8]) {
        let limits = BundleLimits()
        var handed: [String] = []
        do throws(ServerError) {
            let entries = try TarReader(limits: limits).read(TarBytes(bytes)) { (entry, data) throws(ServerError) in
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
            Fuzz.require((400..<500).contains(error.status.code), "tar", "an archive was refused with \(error.status.code): \(error)")
        }
    }
}
