import Foundation
import SignetCore
import SignetX509
import X509

/// A CA with an intermediate and leaves, made with Signet, for verification tests.
public struct TestPKI: Sendable {
    public let root: Certificate
    public let rootSigner: SoftwareSigner
    public let intermediate: Certificate
    public let intermediateSigner: SoftwareSigner

    /// A root (P-256, ten years) and an intermediate (P-384, five years), valid from a day before `now`.
    public static func make(now: Date = Date()) async throws -> TestPKI {
        let rootSigner = try SoftwareSigner(key: try PrivateKey.generate(.p256))
        let root = try await CertificateFactory.selfSigned(
            signer: rootSigner, subject: try SubjectParsing.distinguishedName("CN=Test Root,O=Signet Tests"),
            days: 3650, profile: .ca, now: now.addingTimeInterval(-86_400))
        let intermediateSigner = try SoftwareSigner(key: try PrivateKey.generate(.p384))
        let csr = try await CertificateFactory.csr(
            signer: intermediateSigner, subject: try SubjectParsing.distinguishedName("CN=Test Intermediate,O=Signet Tests"))
        let intermediate = try await CertificateFactory.issue(
            csr: csr, csrSource: "intermediate", caCertificate: root, caSigner: rootSigner, profile: .ca, days: 1825, now: now)
        return TestPKI(root: root, rootSigner: rootSigner, intermediate: intermediate, intermediateSigner: intermediateSigner)
    }

    /// A server leaf for `names` issued by the intermediate.
    public func leaf(_ names: String = "DNS:localhost,IP:127.0.0.1", days: Int = 30, now: Date = Date(), key: KeyGenerationType = .p256)
        async throws -> (Certificate, SoftwareSigner)
    {
        let signer = try SoftwareSigner(key: try PrivateKey.generate(key), algorithm: nil)
        let keySigner = try SoftwareSigner(key: signer.key, algorithm: SignerPrivateKey.preferredAlgorithm(for: signer.key.kind))
        let csr = try await CertificateFactory.csr(
            signer: keySigner, subject: try SubjectParsing.distinguishedName("CN=localhost"),
            alternativeNames: try SubjectParsing.alternativeNames(names))
        let certificate = try await CertificateFactory.issue(
            csr: csr, csrSource: "leaf", caCertificate: intermediate, caSigner: intermediateSigner, profile: .server, days: days, now: now)
        return (certificate, keySigner)
    }
}
