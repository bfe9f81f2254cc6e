import ArgumentParser
import SignetCore

/// Option values that ArgumentParser parses itself, case-insensitively, from the library's
/// enums: the lists in help and in error messages come from the enums, written once.
protocol CaseInsensitiveArgument: ExpressibleByArgument, CaseIterable, RawRepresentable where RawValue == String {}

extension CaseInsensitiveArgument {
    public init?(argument: String) { self.init(rawValue: argument.lowercased()) }
}

extension KeyGenerationType: CaseInsensitiveArgument {}
extension PrivateKeyFormat: CaseInsensitiveArgument {}
extension PublicKeyFormat: CaseInsensitiveArgument {}
extension DigestAlgorithm: CaseInsensitiveArgument {}
extension MessageAuthenticator.Algorithm: CaseInsensitiveArgument {}
extension SignatureAlgorithm: CaseInsensitiveArgument {}
