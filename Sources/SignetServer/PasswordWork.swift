import NIOPosix
import SignetCore
import Synchronization

/// Password hashing off the event loops, bounded: scrypt takes a core and up to 128 MiB for a
/// few hundred milliseconds, so at most ``ServerLimits/passwordWorkers`` run at once, at most
/// ``ServerLimits/passwordQueue`` more wait, and past that a request is refused at once with
/// ``ServerError/overloaded(retryAfter:)`` (503, `Retry-After`) rather than queued without end.
struct PasswordWork: Sendable {
    let hasher: PasswordHasher
    /// A hash of a random password, verified against when the e-mail is unknown so that
    /// an unknown address costs the same time as a wrong password.
    let decoy: String
    let gate: PasswordGate

    init(hasher: PasswordHasher, workers: Int, queue: Int) throws {
        self.hasher = hasher
        gate = PasswordGate(workers: workers, queue: queue)
        do {
            decoy = try hasher.hash(SecretBytes(RandomBytes.make(16)))
        } catch {
            throw ServerError.configuration(detail: "the password hasher cannot hash: \(error)")
        }
    }

    func hash(_ password: String) async throws -> String {
        let hasher = self.hasher
        return try await run("password hashing") { try hasher.hash(SecretBytes(Array(password.utf8))) }
    }

    /// Whether `password` matches `stored` (or, with no stored hash, the decoy: always false).
    func verify(_ password: String, against stored: String?) async throws -> Bool {
        let hasher = self.hasher
        let target = stored ?? decoy
        let matches = try await run("password verification") { try hasher.verify(SecretBytes(Array(password.utf8)), against: target) }
        return matches && stored != nil
    }

    private func run<T: Sendable>(_ what: String, _ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await gate.enter()
        defer { gate.leave() }
        do {
            return try await NIOThreadPool.singleton.runIfActive(work)
        } catch {
            throw ServerError.unavailable(detail: "\(what): \(error)")
        }
    }
}

/// Admission for password work: `workers` places, `queue` waiting places, then refusal.
final class PasswordGate: Sendable {
    let workers: Int
    let queue: Int

    private struct State {
        var running = 0
        var waiting: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())

    init(workers: Int, queue: Int) {
        self.workers = max(1, workers)
        self.queue = max(0, queue)
    }

    /// The jobs hashing now and those waiting for a worker (for the metrics).
    var load: (running: Int, waiting: Int) { state.withLock { ($0.running, $0.waiting.count) } }

    /// The seconds a refused client is asked to wait: about one round of the queue.
    var retryAfter: Int { max(1, (queue + workers) / workers) }

    /// Takes a worker's place, waiting for one when all are busy; throws when the queue is full.
    func enter() async throws {
        enum Admission { case now, wait, refuse }
        let admission: Admission = state.withLock { state in
            if state.running < workers {
                state.running += 1
                return .now
            }
            return state.waiting.count < queue ? .wait : .refuse
        }
        switch admission {
        case .now: return
        case .refuse: throw ServerError.overloaded(retryAfter: retryAfter)
        case .wait:
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let admitted: Bool = state.withLock { state in
                    // A place may have come free since the first look.
                    if state.running < workers {
                        state.running += 1
                        return true
                    }
                    state.waiting.append(continuation)
                    return false
                }
                if admitted { continuation.resume() }
            }
        }
    }

    /// Gives the place to the first waiter, or frees it.
    func leave() {
        let next: CheckedContinuation<Void, Never>? = state.withLock { state in
            if state.waiting.isEmpty {
                state.running -= 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
