/// Every coverage-guided fuzz target: a name and a function that feeds one input to a parser
/// that reads untrusted bytes.
///
/// A target ignores the errors the parser throws (refusing input is the right outcome) and,
/// where it is cheap, checks an invariant with `precondition` (a key that decodes re-encodes
/// to itself, a parsed line re-serialises to something that parses equal …). A crash, a
/// sanitizer report or a failed precondition is a finding.
///
/// `signet-fuzz` runs them under libFuzzer (`Scripts/fuzz`) and replays files through them;
/// `SignetFuzzTests` replays `Fuzz/corpus/<name>/` and `Fuzz/regressions/<name>/` on every
/// test run. `Fuzz/README.md` explains the workflow.
public enum FuzzTargets {
    /// What a target does with one input.
    public typealias Run = @Sendable ([UInt8]) -> Void

    /// Every target, in a stable order; names are short and kebab-case.
    public static let all: [(name: String, run: Run)] =
        KeyTargets.all + CoreTargets.all + BundleTargets.all + HTTPTargets.all + VaultTargets.all + X509Targets.all + AgeTargets.all
        + PKCS11Targets.all + ServerTargets.all + AttestationTargets.all + WebAuthnTargets.all

    /// The target called `name`, or nil.
    public static func named(_ name: String) -> Run? {
        all.first { $0.name == name }?.run
    }

    /// The names of every target.
    public static var names: [String] { all.map(\.name) }
}
