import SignetAPI

/// A user's profile as the server sends it (SignetAPI's `UserAPI.Profile`).
public typealias UserProfile = UserAPI.Profile

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
