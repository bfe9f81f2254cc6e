import Foundation
import SignetServer

/// The server's request bodies and replay snapshots.
enum ServerTargets {
    static let all: TargetList = [
        ("server-body", { ServerTargets.body($0) }),
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
        func refusedWith4xx(_ error: any Error) {
            guard let error = error as? ServerError else {
                return Fuzz.require(false, "server-body", "a body was refused with \(type(of: error)), not a ServerError: \(error)")
            }
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
            if let settings = enrolment.attestation { attestationSettings(settings) }
        } catch { refusedWith4xx(error) }
        do {
            attestationSettings(try ServerRequestBody.decode(AdminAPI.AttestationSettings.self, bytes: data))
        } catch { refusedWith4xx(error) }
        do {
            // A device enrolment's fields, checked and decoded before any attestation work.
            let enrolment = try ServerRequestBody.decode(DeviceAPI.Enrolment.self, bytes: data)
            let settings = AdminAPI.AttestationSettings(
                appleAppId: "ABCDE12345.com.example.app", androidPackage: "com.example.app", androidSigners: [String(repeating: "11", count: 32)])
            do { _ = try DeviceEnroller.evidence(enrolment, settings: settings, app: "fuzz") } catch { refusedWith4xx(error) }
        } catch { refusedWith4xx(error) }
    }

    /// The settings' rules. Invariant: what they accept normalises to itself.
    static func attestationSettings(_ settings: AdminAPI.AttestationSettings) {
        guard let normalized = try? settings.normalized() else { return }
        Fuzz.require((try? normalized.normalized()) == normalized, "server-body", "normalising attestation settings twice changes them")
    }
}
