import Foundation
import SignetCore
import SignetTestSupport
import SignetX509
import SignetX509TestSupport
import Testing

@Suite("Chain validation: a certificate outside its validity is named in one line")
struct ChainValidityMessageTests {
    @Test("an expired leaf and a leaf not valid yet: the subject, its validity and the time, without the certificate's dump")
    func outsideValidity() async throws {
        let pki = try await TestPKI.make()
        let (leaf, _) = try await pki.leaf(days: 30)
        for (time, state) in [(leaf.notValidAfter.addingTimeInterval(86_400), "has expired"), (leaf.notValidBefore.addingTimeInterval(-86_400), "is not valid yet")] {
            let error = try await thrownAsync(X509Error.self) {
                try await ChainVerifier(anchors: .certificates([pki.root]), validationTime: time)
                    .verify(leaf: leaf, intermediates: [pki.intermediate], purpose: .any)
            }
            #expect(error.code == "chainInvalid")
            #expect(error.description.contains("CN=localhost \(state): it is valid from \(leaf.notValidBefore.formatted(.iso8601))"), "\(error)")
            #expect(error.description.contains("not at \(time.formatted(.iso8601))"), "\(error)")
            #expect(!error.description.contains("Certificate("), "\(error)")
        }
    }

    @Test("a validation time outside the years 0001 to 9999 is an argument error, not a trap in swift-certificates (attack round)")
    func unrepresentableTime() async throws {
        let pki = try await TestPKI.make()
        let (leaf, _) = try await pki.leaf()
        for seconds in [253_402_300_800.0, -62_135_596_801.0] {
            let error = try await thrownAsync(X509Error.self) {
                try await ChainVerifier(anchors: .certificates([pki.root]), validationTime: Date(timeIntervalSince1970: seconds))
                    .verify(leaf: leaf, intermediates: [pki.intermediate])
            }
            #expect(error.code == "invalidArgument")
        }
    }
}
