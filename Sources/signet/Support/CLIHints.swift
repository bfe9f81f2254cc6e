import SignetCore

/// What the CLI adds to a library error when it reports it: the flag that changes the outcome.
/// Library messages name no flag (a library user has none); the command line does.
enum CLIHints {
    /// A hint to append to `error`'s message, or "" for none.
    static func hint(for error: any SignetError) -> String {
        switch error {
        case SignetCoreError.legacySignatureNotAllowed:
            return " (pass --legacy to accept legacy signatures from a publisher known to make them)"
        default:
            return ""
        }
    }
}
