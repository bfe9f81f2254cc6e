import SwiftASN1
import X509

/// What a validated certificate is to be used for, with the rules `openssl verify -purpose`
/// applies (OpenSSL 3.0's `sslserver`, `sslclient` and `any`):
///
/// - ``server``: the leaf's extended key usage, if it has one, includes TLS server
///   authentication (`anyExtendedKeyUsage` alone is not enough); its key usage, if it has one,
///   allows digital signatures, key encipherment or key agreement; every CA of the chain, the
///   trust anchor included, whose extended key usage is stated includes server authentication.
/// - ``client``: the same with TLS client authentication, the leaf's key usage allowing digital
///   signatures or key agreement.
/// - ``any``: no usage is required.
///
/// Signet does not honour the legacy Netscape and Microsoft "server gated crypto" usages that
/// OpenSSL still accepts for servers.
public enum CertificatePurpose: String, CaseIterable, Sendable {
    /// A TLS server (the default: what a TLS client checks).
    case server
    /// A TLS client.
    case client
    /// Any use.
    case any

    /// The extended key usage the purpose needs, nil for ``any``.
    var usage: ExtendedKeyUsage.Usage? {
        switch self {
        case .server: return .serverAuth
        case .client: return .clientAuth
        case .any: return nil
        }
    }

    /// The purpose in words, for messages.
    var phrase: String {
        switch self {
        case .server: return "TLS server authentication"
        case .client: return "TLS client authentication"
        case .any: return "any use"
        }
    }
}

/// How much work a chain validation may do looking for a path from the leaf to a trust anchor
/// before it gives up with ``X509Error/pathBuildingLimit(subject:detail:)``: enough for any
/// real PKI (cross-signed roots, a few intermediates), far too little for a certificate set
/// built to make the search explode.
public struct PathBuildingLimits: Sendable, Equatable {
    /// The most certificates in a path, leaf and anchor included.
    public var maximumDepth = 10
    /// The most issuers tried for one certificate (those named as its issuer and not excluded
    /// by its authority key identifier).
    public var maximumIssuerCandidates = 16
    /// The most signature checks in one validation (the number Go's crypto/x509 uses).
    public var maximumSignatureChecks = 100
    /// The most complete paths to an anchor whose policies are evaluated.
    public var maximumCandidatePaths = 8

    /// The defaults.
    public init() {}

    /// The defaults.
    public static let `default` = PathBuildingLimits()
}
