import SignetCore
import SwiftASN1
import X509

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Finds the paths from a leaf through the offered intermediates to a trust anchor, within
/// ``PathBuildingLimits``: swift-certificates' `Verifier` searches depth first without a bound,
/// signature-checks every certificate that bears the issuer's name and cannot be told to stop
/// (docs/dependencies.md), so a few cross-signed CAs under one name make it run for minutes.
/// Here every signature check is counted against one budget, each certificate gets a bounded
/// number of candidate issuers (those its authority key identifier rules out are never
/// checked), paths have a bounded depth, and cancellation is honoured between checks. The
/// paths found are then validated one by one, each alone, by the `Verifier` and Signet's
/// policies.
struct PathBuilder {
    let anchors: [Certificate]
    let intermediates: [Certificate]
    let limits: PathBuildingLimits
    let validationTime: Date

    /// What the search found.
    struct Outcome {
        /// Complete paths, leaf first, anchor last, in the order found.
        var paths: [[Certificate]] = []
        /// The search stopped because the budget was spent (not because it was done).
        var budgetSpent = false
        /// A certificate bearing an issuer's name had not signed the one below it.
        var sawBadSignature = false
        /// Signature checks made.
        var signatureChecks = 0
    }

    init(anchors: [Certificate], intermediates: [Certificate], limits: PathBuildingLimits, validationTime: Date) {
        self.anchors = anchors
        // An intermediate that is also an anchor is the anchor.
        let anchorSet = Set(anchors)
        var seen = Set<Certificate>()
        self.intermediates = intermediates.filter { !anchorSet.contains($0) && seen.insert($0).inserted }
        self.limits = limits
        self.validationTime = validationTime
    }

    /// The paths from `leaf` to an anchor. Throws ``X509Error/verificationCancelled(subject:)``
    /// when the task is cancelled.
    func paths(from leaf: Certificate) throws -> Outcome {
        var outcome = Outcome()
        if anchors.contains(leaf) {
            outcome.paths.append([leaf])
            return outcome
        }
        try extend([leaf], into: &outcome)
        return outcome
    }

    private func extend(_ path: [Certificate], into outcome: inout Outcome) throws {
        let tip = path[path.count - 1]
        for (candidate, isAnchor) in candidates(for: tip, in: path) {
            if outcome.paths.count >= limits.maximumCandidatePaths { return }
            // An intermediate needs room after it for at least an anchor.
            if !isAnchor, path.count + 2 > limits.maximumDepth { continue }
            if isAnchor, path.count + 1 > limits.maximumDepth { continue }
            guard outcome.signatureChecks < limits.maximumSignatureChecks else {
                outcome.budgetSpent = true
                return
            }
            if Task.isCancelled { throw X509Error.verificationCancelled(subject: PrintableText.escaped(path[0].subject.description)) }
            outcome.signatureChecks += 1
            guard candidate.publicKey.isValidSignature(tip.signature, for: tip) else {
                outcome.sawBadSignature = true
                continue
            }
            if isAnchor {
                outcome.paths.append(path + [candidate])
            } else {
                try extend(path + [candidate], into: &outcome)
                if outcome.budgetSpent { return }
            }
        }
    }

    /// The certificates that may have issued `tip`, anchors first, at most
    /// ``PathBuildingLimits/maximumIssuerCandidates``: those bearing its issuer's name, not
    /// already on the path (same subject and key), and not ruled out by its authority key
    /// identifier (as OpenSSL's `X509_check_akid`); those whose key identifier matches and
    /// that are valid at the validation time come first.
    private func candidates(for tip: Certificate, in path: [Certificate]) -> [(Certificate, Bool)] {
        let wantedKey = (try? tip.extensions.authorityKeyIdentifier)?.keyIdentifier.map(Array.init)
        func keyMatch(_ certificate: Certificate) -> Bool? {
            guard let wantedKey, let ski = try? certificate.extensions.subjectKeyIdentifier else { return nil }
            return Array(ski.keyIdentifier) == wantedKey
        }
        func admissible(_ certificate: Certificate) -> Bool {
            certificate.subject == tip.issuer && keyMatch(certificate) != false
                && !path.contains { $0.subject == certificate.subject && $0.publicKey == certificate.publicKey }
        }
        func rank(_ certificate: Certificate) -> Int {
            (keyMatch(certificate) == true ? 0 : 2)
                + (certificate.notValidBefore <= validationTime && validationTime <= certificate.notValidAfter ? 0 : 1)
        }
        let found = anchors.filter(admissible).map { ($0, true) } + intermediates.filter(admissible).map { ($0, false) }
        let ordered = found.enumerated().sorted { left, right in
            let (l, r) = (rank(left.element.0), rank(right.element.0))
            if left.element.1 != right.element.1 { return left.element.1 }  // anchors first
            return l != r ? l < r : left.offset < right.offset
        }
        return Array(ordered.prefix(limits.maximumIssuerCandidates).map(\.element))
    }
}

/// The system's trust anchors as certificates (the first CA bundle found where Linux
/// distributions keep it), read once.
enum SystemTrustRoots {
    static let searchPaths = ["/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/cert.pem"]

    static let certificates: [Certificate] = {
        for path in searchPaths {
            guard let data = FileManager.default.contents(atPath: path),
                let documents = try? PEMDocument.parseMultiple(pemString: String(decoding: data, as: UTF8.self))
            else { continue }
            return documents.compactMap { try? Certificate(pemDocument: $0) }
        }
        return []
    }()
}
