/// A user's profile as the server sends it.
public struct UserProfile: Codable, Sendable, Equatable {
    public var id: String
    public var email: String
    public var displayName: String
    public var gravatarURL: String
    public var createdAt: Int64
    public var disabled: Bool
}

/// Whether a user is signed in on this client: what ``SignetClient/authStates()`` reports.
public enum AuthState: Sendable, Equatable {
    /// Signed in as this address.
    case signedIn(email: String)
    /// Nobody is signed in; why it changed.
    case signedOut(reason: SignOutReason)

    /// Why a session ended.
    public enum SignOutReason: Sendable, Equatable {
        /// There was none (a fresh client, or nothing saved).
        case none
        /// The user signed out on this client.
        case signedOut
        /// The server no longer knows the session: signed out elsewhere, revoked by the user
        /// or an admin, expired, or the account disabled.
        case sessionEnded
    }
}

struct SessionReply: Decodable {
    var token: String
    var expiresAt: Int64
    var user: UserProfile
}

struct ProblemReply: Decodable {
    var code: String
    var detail: String
}
