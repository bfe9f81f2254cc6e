import SignetCore

/// The rate limits of the password endpoints (docs/server.md "Sign-in attempts"), after the
/// OWASP Authentication Cheat Sheet: lock-outs are counted per account *and address*, so that
/// nobody can lock an owner out of their account by failing on purpose from elsewhere.
extension ServerRoutes {
    /// One sign-in attempt being counted: `failed()` or `succeeded()` settles it.
    struct SignInAttempt {
        let store: ServerStore
        let pairBucket: String
        let addressBucket: String
        let accountBucket: String
        let successBucket: String
        let window: Int64

        /// A wrong password: the account's failures from all addresses grow by one.
        func failed() async throws {
            _ = try await store.limits.countAttempt(bucket: accountBucket, limit: .max, window: window)
        }

        /// The password was never checked (the server was too busy to): the attempt is given back.
        func notTried() async throws {
            try await store.limits.forgiveAttempt(bucket: pairBucket)
            try await store.limits.forgiveAttempt(bucket: addressBucket)
        }

        /// The right password is not a failure: this address starts afresh at this account
        /// and gets its attempt back.
        func succeeded() async throws {
            try await store.limits.clearFailures(bucket: pairBucket)
            try await store.limits.forgiveAttempt(bucket: addressBucket)
            _ = try await store.limits.countAttempt(bucket: successBucket, limit: .max, window: window)
        }
    }

    /// Counts a sign-in before the slow password check (so parallel attempts cannot all slip
    /// under a limit) and refuses it with 429 when the client address has failed too often, at
    /// any account, or at this account. Once an account has failed
    /// ``ServerConfiguration/failedSignInsBeforeAccountAlarm`` times in the window from all
    /// addresses — a distributed guess — each address gets
    /// ``ServerConfiguration/failedSignInsPerAccountUnderAlarm`` failures at it (two: a typo and
    /// the right password) instead of ``ServerConfiguration/failedSignInsPerAccount``; an address
    /// that has not failed there, the owner's, still gets its attempts.
    func countSignIn(email: String, from address: String) async throws -> SignInAttempt {
        let address = ClientAddress.budgetKey(address)
        let window = configuration.rateLimitWindow.wholeSeconds
        let attempt = SignInAttempt(
            store: store, pairBucket: "pair:" + address + " " + email, addressBucket: "address:" + address,
            accountBucket: "account:" + email, successBucket: "signed-in:" + email, window: window)
        if let wait = try await store.limits.countAttempt(bucket: attempt.addressBucket, limit: configuration.failedSignInsPerAddress, window: window) {
            try await store.limits.forgiveAttempt(bucket: attempt.addressBucket)
            metrics.rateLimited("failed-sign-ins-per-address")
            throw ServerError.rateLimited(retryAfter: wait)
        }
        // An account signed into too often this window (someone with its password flooding the
        // password workers) waits; the successes are counted when they happen.
        if try await store.limits.attempts(bucket: attempt.successBucket, window: window) >= configuration.signInsPerAccount {
            try await store.limits.forgiveAttempt(bucket: attempt.addressBucket)
            metrics.rateLimited("sign-ins-per-account")
            throw ServerError.rateLimited(retryAfter: Int(window))
        }
        let accountFailures = try await store.limits.attempts(bucket: attempt.accountBucket, window: window)
        let pairLimit = accountFailures >= configuration.failedSignInsBeforeAccountAlarm
            ? min(configuration.failedSignInsPerAccountUnderAlarm, configuration.failedSignInsPerAccount) : configuration.failedSignInsPerAccount
        if let wait = try await store.limits.countAttempt(bucket: attempt.pairBucket, limit: pairLimit, window: window) {
            try await store.limits.forgiveAttempt(bucket: attempt.pairBucket)
            try await store.limits.forgiveAttempt(bucket: attempt.addressBucket)
            metrics.rateLimited(pairLimit < configuration.failedSignInsPerAccount ? "failed-sign-ins-under-alarm" : "failed-sign-ins-per-account")
            throw ServerError.rateLimited(retryAfter: wait)
        }
        return attempt
    }

    /// Gives back a registration counted by ``countRegistration(from:)`` that was never tried
    /// (the password pool was full), so that 503s do not use up the budgets.
    func forgiveRegistration(from address: String) async throws {
        try await store.limits.forgiveAttempt(bucket: "register:" + ClientAddress.budgetKey(address))
        try await store.limits.forgiveAttempt(bucket: "register:*")
    }

    /// Counts a registration from `address` and from everyone; 429 past either limit.
    func countRegistration(from address: String) async throws {
        try await countAttempt(
            (bucket: "register:" + ClientAddress.budgetKey(address), limit: configuration.registrationsPerAddress, label: "registrations-per-address"),
            then: (bucket: "register:*", limit: configuration.registrationsPerWindow, label: "registrations"))
    }

    /// Counts a device challenge from `address` for `app`; 429 past the address's budget. Once
    /// the app's challenges in this window pass ``ServerConfiguration/deviceChallengesPerApp`` —
    /// many addresses asking, as someone holding the app key could — each address gets only
    /// ``ServerConfiguration/deviceChallengesPerAddressUnderAlarm``: the many are slowed, and an
    /// install asking from a clean address is still answered (an app-wide refusal would let
    /// anyone with the app key stop every enrolment; attack round).
    func countDeviceChallenge(from address: String, app: String) async throws {
        let window = configuration.rateLimitWindow.wholeSeconds
        let appBucket = "device-challenge-app:" + app
        let underAlarm = try await store.limits.attempts(bucket: appBucket, window: window) >= configuration.deviceChallengesPerApp
        let perAddress = configuration.deviceChallengesPerAddress
        let limit = underAlarm ? min(configuration.deviceChallengesPerAddressUnderAlarm, perAddress) : perAddress
        let addressBucket = "device-challenge:" + ClientAddress.budgetKey(address)
        if let wait = try await store.limits.countAttempt(bucket: addressBucket, limit: limit, window: window) {
            try await store.limits.forgiveAttempt(bucket: addressBucket)
            metrics.rateLimited(underAlarm && limit < perAddress ? "device-challenges-under-alarm" : "device-challenges-per-address")
            throw ServerError.rateLimited(retryAfter: wait)
        }
        // Counted, never refused: the tally that raises the alarm.
        _ = try await store.limits.countAttempt(bucket: appBucket, limit: .max, window: window)
    }

    typealias Budget = (bucket: String, limit: Int, label: String)

    /// Counts an attempt against a narrow budget (one address's) and then a wide one (everyone's,
    /// an app's), in this window; past either, the attempt is given back to both — a refused
    /// attempt spends nothing — the metrics count the limit that answered, and 429.
    func countAttempt(_ narrow: Budget, then wide: Budget) async throws {
        let window = configuration.rateLimitWindow.wholeSeconds
        if let wait = try await store.limits.countAttempt(bucket: narrow.bucket, limit: narrow.limit, window: window) {
            try await store.limits.forgiveAttempt(bucket: narrow.bucket)
            metrics.rateLimited(narrow.label)
            throw ServerError.rateLimited(retryAfter: wait)
        }
        if let wait = try await store.limits.countAttempt(bucket: wide.bucket, limit: wide.limit, window: window) {
            try await store.limits.forgiveAttempt(bucket: wide.bucket)
            try await store.limits.forgiveAttempt(bucket: narrow.bucket)
            metrics.rateLimited(wide.label)
            throw ServerError.rateLimited(retryAfter: wait)
        }
    }
}
