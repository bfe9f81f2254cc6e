import Foundation
import SignetCore
@_spi(Benchmarking) import SignetPKCS11

/// `signet-bench pkcs11 MODULE URI PINFILE SECONDS`: signatures per second of the key URI names
/// through ``PKCS11Signer`` (`sign(digest:)`, what every Signet command does) against the raw
/// loop (`C_SignInit` and one `C_Sign`, on one session) over the same token and key, each for
/// SECONDS in all, in alternating rounds. Prints `signer OPS raw OPS`.
func pkcs11Bench(module path: String, uri: String, pinFile: String, seconds: Double) async throws {
    let pinText = try String(contentsOfFile: pinFile, encoding: .utf8).split(separator: "\n").first.map(String.init) ?? ""
    let pins = PKCS11FixedPIN(pinText)
    let module = try PKCS11Module.load(path: path)
    let key = try module.uniqueKey(matching: try PKCS11URI(parsing: uri), pin: pins)
    let signer = try PKCS11Signer(module: module, key: key, pin: pins)
    guard let digestAlgorithm = signer.algorithm.digest else {
        throw SignetCoreError.invalidArgument(detail: "pkcs11 bench: a key that signs digests (ECDSA or RSA), not \(signer.algorithm.rawValue)")
    }
    let digest = digestAlgorithm.hash(Array("signet benchmark message".utf8))
    // The raw loop hands the token exactly what the signer does.
    guard let (mechanism, rawInput) = signer.tokenInput(for: digest) else {
        throw SignetCoreError.invalidArgument(detail: "pkcs11 bench: no digest input for \(signer.algorithm.rawValue)")
    }
    _ = try await signer.sign(digest: digest)
    _ = try module.rawSignLoop(rawInput, with: key, mechanism: mechanism, pin: pins, count: 1)

    // Alternating rounds, so that neither loop gets the warmer or the quieter half of the run.
    let clock = ContinuousClock()
    let rounds = 6
    let limit = Duration.milliseconds(Int64(seconds * 1000 / Double(rounds)))
    var signed = 0
    var signerTime = Duration.zero
    var raw = 0
    var rawTime = Duration.zero
    for _ in 0..<rounds {
        var start = clock.now
        while clock.now - start < limit {
            _ = try await signer.sign(digest: digest)
            signed += 1
        }
        signerTime += clock.now - start
        start = clock.now
        while clock.now - start < limit {
            _ = try module.rawSignLoop(rawInput, with: key, mechanism: mechanism, pin: pins, count: 10)
            raw += 10
        }
        rawTime += clock.now - start
    }
    let signerRate = Double(signed) / elapsedSeconds(signerTime)
    let rawRate = Double(raw) / elapsedSeconds(rawTime)
    print(String(format: "signer %.1f raw %.1f", signerRate, rawRate))
}

private func elapsedSeconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}
