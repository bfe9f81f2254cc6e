import SignetAge
import SignetCore

/// age files (header, armor, payload) and age key and recipients files.
enum AgeTargets {
    /// The identity the seeds are encrypted to: SHA-256("signet fuzz age key"), protecting nothing.
    static let identity = try! X25519Identity("AGE-SECRET-KEY-18EDQL7UJRYSMN2F44J9ZFZ7TEKEM05T262Z6GESJAU4MV9K4Q9ASK3RQNJ")

    /// The spec's example post-quantum identity, so `mlkem768x25519` stanzas are parsed and opened.
    static let postQuantum = try! MLKEM768X25519Identity("AGE-SECRET-KEY-PQ-1XX76JRALNLXDMEW0CRK45QMCCH4X06SE84UN3VPM33W6HWDX0H3SK3ZQFR")
    /// SSH identities of keys made at start-up: their stanzas' shapes are checked before the
    /// tag is, so the parsing is fuzzed whatever the key; nothing found depends on the key.
    static let sshIdentities: [any AgeIdentity] = [
        try! SSHEd25519Identity(privateKey: try! PrivateKey.generate(.ed25519), source: "fuzz ed25519"),
        try! SSHRSAIdentity(privateKey: try! PrivateKey.generate(.rsa2048), source: "fuzz rsa"),
    ]

    static let all: TargetList = [
        ("age-file", { AgeTargets.file($0) }),
        ("age-keyfile", { AgeTargets.keyFile($0) }),
    ]

    /// `AgeDecryptor.decrypt` with the fixed X25519 and post-quantum identities, two SSH ones
    /// and a low-bound passphrase.
    /// Invariant: what decrypts re-encrypts to the same identity and decrypts to the same bytes.
    static func file(_ bytes: [UInt8]) {
        let decryptor = AgeDecryptor(
            identities: [identity, postQuantum] + sshIdentities
                + [ScryptIdentity(passphrase: SecretBytes(Array("signet-test".utf8)), maximumLogN: 12)])
        guard let plaintext = try? decryptor.decrypt(bytes, source: "fuzz input") else { return }
        let again = (try? AgeEncryptor(recipients: [identity.recipient]).encrypt(plaintext)).flatMap { try? decryptor.decrypt($0, source: "re-encrypted") }
        Fuzz.require(again == plaintext, "age-file", "a decrypted file does not round-trip")
    }

    /// `AgeKeyFile.identities` and `.recipients`. Invariant: each identity's key file reads back
    /// to the same identity.
    static func keyFile(_ bytes: [UInt8]) {
        if let identities = try? AgeKeyFile.identities(in: bytes, source: "fuzz input") {
            for case let identity as X25519Identity in identities {
                let file = Array(AgeKeyFile.keyFileContents(identity, created: .init(timeIntervalSince1970: 0)).utf8)
                let back = try? AgeKeyFile.identities(in: file, source: "re-encoded")
                Fuzz.require(back?.map(\.recipientString) == [identity.recipientString], "age-keyfile", "a key file does not read back")
            }
        }
        _ = try? AgeKeyFile.recipients(in: bytes, source: "fuzz input")
    }
}
