import Foundation
import SignetCore
import SignetTestSupport
import Testing

/// Files made by the real minisign 0.11, from `Vectors/minisign.json`.
struct MinisignFixture: Decodable, Sendable {
    var message: String
    var passphrase: String
    var publicKey: String
    var secretKey: String
    var encryptedPublicKey: String
    var encryptedSecretKey: String
    var prehashedSignature: String
    var trustedComment: String
    var legacySignature: String
    var encryptedKeySignature: String

    static func load() throws -> MinisignFixture { try TestVectors.decode(MinisignFixture.self, "minisign.json", in: .module) }
}

/// Cheap scrypt limits for tests (N = 2^10): libsodium's opslimit floor and a small memlimit.
let cheapKDF = MinisignKDFParameters(opsLimit: 32768, memLimit: 1 << 20)

extension Array where Element == UInt8 {
    /// The bytes of `text`.
    init(text: String) { self = Array(text.utf8) }
}

/// Checks that `body` throws a `SignetCoreError` whose category is `category` and whose
/// message contains every one of `fragments`.
func expectMinisignError(
    _ category: FailureCategory, _ fragments: String..., sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> Void
) {
    do {
        try body()
        Issue.record("no error thrown; expected one mentioning \(fragments)", sourceLocation: sourceLocation)
    } catch let error as SignetCoreError {
        #expect(error.category == category, "\(error)", sourceLocation: sourceLocation)
        for fragment in fragments {
            #expect(error.description.contains(fragment), "\(error.description) lacks \(fragment)", sourceLocation: sourceLocation)
        }
    } catch {
        Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
    }
}
