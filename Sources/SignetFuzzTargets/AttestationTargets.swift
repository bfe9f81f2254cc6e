import Foundation
import SignetAttestation
import SignetCore

/// CBOR, COSE keys and authenticator data (SignetCore), and App Attest attestation objects and
/// assertions (SignetAttestation).
///
/// A refusal must be the module's own error: `SignetCoreError` (malformed, unsupported, weak
/// key, too large) from the SignetCore readers, `AttestationError` from the App Attest ones.
enum AttestationTargets {
    static let all: TargetList = [
        ("cbor", { AttestationTargets.cbor($0) }),
        ("cose-key", { AttestationTargets.coseKey($0) }),
        ("authenticator-data", { AttestationTargets.authenticatorData($0) }),
        ("app-attest-object", { AttestationTargets.appAttestObject($0) }),
        ("app-attest-assertion", { AttestationTargets.appAttestAssertion($0) }),
        ("android-key-description", { AttestationTargets.androidKeyDescription($0) }),
        ("android-chain", { AttestationTargets.androidChain($0) }),
    ]

    // MARK: Android

    /// The key description reader: a refusal is whatever the DER reader says; what it reads
    /// has a challenge no longer than the input.
    static func androidKeyDescription(_ bytes: [UInt8]) {
        guard let parsed = try? AttestationFuzzing.keyDescription(bytes) else { return }
        Fuzz.require(parsed.challenge.count <= bytes.count, "android-key-description", "a challenge longer than the input")
    }

    /// A chain file (PEM or concatenated DER) read and verified against Google's roots with a
    /// fixed challenge: a refusal must be an `AttestationError`.
    static func androidChain(_ bytes: [UInt8]) {
        do {
            let chain = try AndroidAttestationVerifier.readChain(bytes, source: "fuzz input")
            _ = try AndroidAttestationVerifier(policy: AndroidAttestationPolicy(challenge: Array("challenge".utf8), requiresVerifiedBoot: false, requiresLockedBootloader: false))
                .verify(chain: chain, at: Date(timeIntervalSince1970: 1_727_000_000), source: "fuzz input")
        } catch is AttestationError {
        } catch {
            Fuzz.require(false, "android-chain", "refused with \(type(of: error)), not an AttestationError: \(error)")
        }
    }

    /// How a re-encoded value is read back: as strictly as CTAP2's canonical form asks (every
    /// head in its shortest form), with no bound on the bytes (a half-precision float grows to
    /// a single-precision one when written again).
    static let canonicalLimits = CBOR.Limits(maximumBytes: .max, requiresShortestForm: true)

    // MARK: CBOR

    /// `CBOR.decode` with the default limits, with indefinite lengths allowed, and with
    /// shortest forms required; `CBOR.decodePrefix` with bytes after the item. Invariants: a
    /// refusal is `malformed` or `tooLarge`; requiring shortest forms only refuses more; a value
    /// that decodes is written by `encoded` in bytes that decode, shortest forms required, to
    /// the same value (floats by their bits, any NaN matching any NaN) and that are written
    /// again unchanged; `decodePrefix` stops where the item ends.
    static func cbor(_ bytes: [UInt8]) {
        let strict = decodeChecked(bytes, CBOR.Limits(requiresShortestForm: true))
        let plain = decodeChecked(bytes, CBOR.Limits())
        let lenient = decodeChecked(bytes, CBOR.Limits(allowsIndefiniteLengths: true))
        if let strict {
            Fuzz.require(plain.map { sameValue($0, strict) } ?? false, "cbor", "shortest forms required accept what the default refuses")
        }
        if let plain {
            Fuzz.require(lenient.map { sameValue($0, plain) } ?? false, "cbor", "allowing indefinite lengths refuses what the default accepts")
            checkEncoding(plain)
            let prefixed = try? CBOR.decodePrefix([0x5A] + bytes + [0x00, 0xFF], at: 1, source: "fuzz input", limits: CBOR.Limits(maximumBytes: .max))
            Fuzz.require(
                prefixed?.end == bytes.count + 1 && prefixed.map { sameValue($0.value, plain) } ?? false, "cbor",
                "decodePrefix does not read the same item to its end")
        }
        if let lenient { checkEncoding(lenient) }
    }

    /// `CBOR.decode(bytes)` under `limits`; nil when it is refused, as it may be, with
    /// `malformed` or `tooLarge`.
    static func decodeChecked(_ bytes: [UInt8], _ limits: CBOR.Limits) -> CBORValue? {
        do {
            return try CBOR.decode(bytes, source: "fuzz input", limits: limits)
        } catch let error as SignetCoreError {
            Fuzz.require(["malformed", "tooLarge"].contains(error.code.name), "cbor", "refused with \(error.codeName): \(error)")
        } catch {
            Fuzz.require(false, "cbor", "refused with \(type(of: error)), not a SignetCoreError: \(error)")
        }
        return nil
    }

    /// `value.encoded` decodes, shortest forms required, to the same value and is a fixed point.
    static func checkEncoding(_ value: CBORValue) {
        let encoded = value.encoded
        guard let again = try? CBOR.decode(encoded, source: "re-encoded", limits: canonicalLimits) else {
            return Fuzz.require(false, "cbor", "the deterministic encoding of a decoded value does not decode")
        }
        Fuzz.require(sameValue(again, value), "cbor", "the deterministic encoding decodes to another value")
        Fuzz.require(again.encoded == encoded, "cbor", "the deterministic encoding is not a fixed point")
    }

    /// Whether `a` and `b` are the same CBOR value: floats by their bits (−0.0 is not 0.0), any
    /// NaN matching any NaN (the encoder writes every NaN as the single-precision quiet NaN).
    static func sameValue(_ a: CBORValue, _ b: CBORValue) -> Bool {
        switch (a, b) {
        case (.float(let x), .float(let y)): return x.bitPattern == y.bitPattern || (x.isNaN && y.isNaN)
        case (.array(let xs), .array(let ys)): return xs.count == ys.count && zip(xs, ys).allSatisfy { sameValue($0, $1) }
        case (.map(let xs), .map(let ys)):
            return xs.count == ys.count && zip(xs, ys).allSatisfy { sameValue($0.key, $1.key) && sameValue($0.value, $1.value) }
        case (.tagged(let t, let x), .tagged(let u, let y)): return t == u && sameValue(x, y)
        default: return a == b
        }
    }

    // MARK: COSE keys and authenticator data

    /// `CBOR.decode`, then `COSEKey(_:source:)`. Invariants: a refusal is `malformed`,
    /// `unsupported` or `weakKey`; an algorithm fits its key; a key read is written by
    /// `COSEKey.encode` as a map that reads back as the same key and algorithm.
    static func coseKey(_ bytes: [UInt8]) {
        guard let value = try? CBOR.decode(bytes, source: "fuzz input") else { return }
        let key: COSEKey
        do {
            key = try COSEKey(value, source: "fuzz input")
        } catch let error as SignetCoreError {
            return Fuzz.require(["malformed", "unsupported", "weakKey"].contains(error.code.name), "cose-key", "refused with \(error.codeName): \(error)")
        } catch {
            return Fuzz.require(false, "cose-key", "refused with \(type(of: error)), not a SignetCoreError: \(error)")
        }
        if let algorithm = key.algorithm {
            Fuzz.require(algorithm.signatureAlgorithm.fits(key.key.kind), "cose-key", "algorithm \(algorithm.rawValue) on \(key.key.kind)")
        }
        guard let written = try? COSEKey.encode(key.key, algorithm: key.algorithm) else {
            return Fuzz.require(false, "cose-key", "a \(key.key.kind) read from a COSE key cannot be written as one")
        }
        let again = try? COSEKey(CBOR.decode(written.encoded, source: "re-encoded", limits: canonicalLimits), source: "re-encoded")
        Fuzz.require(again?.key == key.key && again?.algorithm == key.algorithm, "cose-key", "a written COSE key reads back as another key")
    }

    /// `AuthenticatorData(_:source:maximumTrailingBytes:)` with up to 1024 trailing bytes (as
    /// App Attest's default policy). Invariants: a refusal is a SignetCoreError; the flags say
    /// exactly which parts are present; the parts have their sizes; the credential key's map
    /// reads as the credential key again.
    static func authenticatorData(_ bytes: [UInt8]) {
        let data: AuthenticatorData
        do {
            data = try AuthenticatorData(bytes, source: "fuzz input", maximumTrailingBytes: 1024)
        } catch let error as SignetCoreError {
            return Fuzz.require(
                ["malformed", "unsupported", "weakKey", "tooLarge"].contains(error.code.name), "authenticator-data", "refused with \(error.codeName): \(error)")
        } catch {
            return Fuzz.require(false, "authenticator-data", "refused with \(type(of: error)), not a SignetCoreError: \(error)")
        }
        Fuzz.require(data.bytes == bytes && data.rpIDHash == Array(bytes.prefix(32)), "authenticator-data", "the bytes or the RP id hash differ from the input")
        Fuzz.require(data.flags.rawValue == bytes[32], "authenticator-data", "the flags are not byte 32")
        Fuzz.require(
            data.flags.contains(.attestedCredentialData) == (data.attestedCredential != nil)
                && data.flags.contains(.extensionData) == (data.extensions != nil), "authenticator-data", "the parts present differ from the flags")
        Fuzz.require((0...1024).contains(data.trailingByteCount), "authenticator-data", "\(data.trailingByteCount) trailing bytes accepted")
        if let credential = data.attestedCredential {
            Fuzz.require(
                credential.aaguid.count == 16 && credential.credentialID.count <= AuthenticatorData.maximumCredentialIDLength, "authenticator-data",
                "an AAGUID of \(credential.aaguid.count) bytes or a credential id of \(credential.credentialID.count)")
            let again = try? COSEKey(credential.publicKeyCBOR, source: "again")
            Fuzz.require(again?.key == credential.publicKey.key, "authenticator-data", "the credential key's map reads as another key")
        }
        if let extensions = data.extensions {
            Fuzz.require(extensions.mapValue != nil, "authenticator-data", "the extensions are \(extensions.kind)")
        }
    }

    // MARK: App Attest

    /// `AttestationFuzzing.attestationObject` (the parser `verifyAttestation` starts with) and
    /// the leaf's nonce. Invariants: a refusal is an AttestationError; `x5c` holds 1 to 4
    /// certificates; the authenticator data accepted at most 1024 trailing bytes.
    static func appAttestObject(_ bytes: [UInt8]) {
        let parsed: AttestationFuzzing.ParsedAttestationObject
        do {
            parsed = try AttestationFuzzing.attestationObject(bytes)
        } catch is AttestationError {
            return
        } catch {
            return Fuzz.require(false, "app-attest-object", "refused with \(type(of: error)), not an AttestationError: \(error)")
        }
        Fuzz.require(
            (1...AttestationFuzzing.maximumCertificates).contains(parsed.certificateCount), "app-attest-object",
            "\(parsed.certificateCount) certificates read")
        Fuzz.require(parsed.authenticatorData.trailingByteCount <= 1024, "app-attest-object", "too many trailing bytes accepted")
        if case .failure(let error) = parsed.certifiedNonce {
            Fuzz.require(error is AttestationError, "app-attest-object", "the nonce is refused with \(type(of: error)), not an AttestationError")
        }
    }

    /// The App ID of the genuine assertion `veehaitch-ios-14.2-assertion1`
    /// (Tests/SignetAttestationTests/Vectors/apple): its seed verifies, so the replay reaches
    /// the checks after the signature; mutations exercise the parser and the refusals.
    static let assertionAppID = "6MURL8TA57.de.vincent-haupert.apple-appattest-poc"
    /// The attested key of that assertion (X9.63, from the attestation `veehaitch-ios-14.2`).
    static let assertionKeyHex =
        "04ba8afbdff8503d19c262b02ad9d1b4542356b9933eff14a5b6f2e8d2059b55ff8e6ee69ec388fce4e07ee81e300b3712149bd04ad35632d4646c579f9a400d0b"
    /// The client data hash that assertion signs: SHA-256 of `wurzelpfropf`.
    static let assertionClientDataHashHex = "8be65cca515ad097c953967d18d635d86dd78a142ed3d077526bed11c6bec67b"

    /// The verifier of the assertion target: development and production, Apple's root.
    static let assertionVerifier: AppAttestVerifier = {
        do {
            return try AppAttestVerifier(policy: AppAttestPolicy(appID: AttestationTargets.assertionAppID, environments: [.development, .production]))
        } catch {
            preconditionFailure("app-attest-assertion: the fixed App ID is refused: \(error)")
        }
    }()

    /// The attested key of the assertion target.
    static let assertionKey: PublicKey = {
        do {
            return try PublicKey(ecPoint: Hex.decode(AttestationTargets.assertionKeyHex) ?? [], kind: .p256, source: "the fuzz assertion key")
        } catch {
            preconditionFailure("app-attest-assertion: the fixed key does not load: \(error)")
        }
    }()

    /// `AppAttestVerifier.verifyAssertion` with the fixed key, App ID and client data hash, and
    /// a stored counter of 0. Invariants: a refusal is an AttestationError; an assertion that
    /// verifies has the App ID's hash and a counter above 0, its authenticator data's.
    static func appAttestAssertion(_ bytes: [UInt8]) {
        let clientDataHash = Hex.decode(assertionClientDataHashHex) ?? []
        do {
            let assertion = try assertionVerifier.verifyAssertion(bytes, clientDataHash: clientDataHash, publicKey: assertionKey, previousCounter: 0)
            Fuzz.require(
                assertion.counter > 0 && assertion.counter == assertion.authenticatorData.signCount, "app-attest-assertion",
                "an assertion verified with the counter \(assertion.counter)")
            Fuzz.require(
                assertion.authenticatorData.rpIDHash == assertionVerifier.policy.appIDHash, "app-attest-assertion",
                "an assertion for another App ID verified")
        } catch is AttestationError {
        } catch {
            Fuzz.require(false, "app-attest-assertion", "refused with \(type(of: error)), not an AttestationError: \(error)")
        }
    }
}
