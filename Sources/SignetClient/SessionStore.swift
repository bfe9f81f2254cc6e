import SignetCore
import SignetVault

/// Where the client keeps the signed-in user's session token between launches.
public protocol SessionStore: Sendable {
    /// The saved session for `server`, or nil.
    func load(server: String) async throws -> SavedSession?
    /// Saves (replacing) the session for `server`.
    func save(_ session: SavedSession, server: String) async throws
    /// Forgets the session for `server`.
    func delete(server: String) async throws
}

/// A session token and whose it is.
public struct SavedSession: Sendable, Equatable {
    public var email: String
    public var token: String
    public init(email: String, token: String) {
        self.email = email
        self.token = token
    }
}

/// Sessions in a ``Vault`` (the keychain of Linux): item `service` =
/// `signet-session/HOST:PORT`, `account` = the user's e-mail address, the token its secret —
/// never a plain file. The service is namespaced so the store never reads or deletes the
/// user's own items for that host.
public struct VaultSessionStore: SessionStore {
    let vault: Vault

    /// The prefix of the services sessions are kept under.
    public static let servicePrefix = "signet-session/"

    /// A store in `vault`, which must be unlocked.
    public init(vault: Vault) {
        self.vault = vault
    }

    /// The vault service of `server`'s session.
    public static func service(for server: String) -> String { servicePrefix + server }

    public func load(server: String) async throws -> SavedSession? {
        let service = Self.service(for: server)
        do {
            guard let item = try await vault.accounts(service: service).first(where: { $0.kind == .password }) else { return nil }
            let token = try await vault.password(service: service, account: item.account)
            return SavedSession(email: item.account, token: token)
        } catch {
            throw ClientError.sessionStore(detail: "\(error)")
        }
    }

    public func save(_ session: SavedSession, server: String) async throws {
        do {
            try await delete(server: server)
            try await vault.set(SecretBytes(Array(session.token.utf8)), service: Self.service(for: server), account: session.email)
        } catch let error as ClientError {
            throw error
        } catch {
            throw ClientError.sessionStore(detail: "\(error)")
        }
    }

    public func delete(server: String) async throws {
        let service = Self.service(for: server)
        do {
            for item in try await vault.accounts(service: service) where item.kind == .password {
                try await vault.delete(service: service, account: item.account)
            }
        } catch {
            throw ClientError.sessionStore(detail: "\(error)")
        }
    }
}

/// Sessions in memory only (tests, or an app that signs in every launch).
public actor InMemorySessionStore: SessionStore {
    private var sessions: [String: SavedSession] = [:]

    public init() {}

    public func load(server: String) async throws -> SavedSession? { sessions[server] }
    public func save(_ session: SavedSession, server: String) async throws { sessions[server] = session }
    public func delete(server: String) async throws { sessions[server] = nil }
}
