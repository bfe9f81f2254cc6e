import Foundation
import SignetServer

/// The server's request bodies and the rules for what users type, as every endpoint reads them.
enum ServerTargets {
    static let all: TargetList = [
        ("server-body", { ServerTargets.body($0) }),
    ]

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
}
