import Foundation
import SignetCore
import SignetTestSupport
import SignetWebAuthn
import Testing

/// RFC 6238's published vectors, loaded from `Vectors/rfc6238.json`.
struct RFC6238Vectors: Decodable {
    struct Vector: Decodable {
        let time: Int64
        let step: String
        let totp: String
        let mode: String
    }
    let seeds: [String: String]
    let vectors: [Vector]

    static func load() throws -> RFC6238Vectors { try TestVectors.decode(RFC6238Vectors.self, "rfc6238.json", in: .module) }
}

@Suite("TOTP (RFC 6238)")
struct TOTPTests {
    static func totp(_ mode: String, digits: Int = 8, vectors: RFC6238Vectors) throws -> TOTP {
        let algorithm = try #require(TOTP.Algorithm(rawValue: mode))
        return try TOTP(secret: SecretBytes(Array(try #require(vectors.seeds[mode]).utf8)), algorithm: algorithm, digits: digits)
    }

    @Test("every vector of RFC 6238 appendix B: its step and its code, for SHA-1, SHA-256 and SHA-512")
    func appendixB() throws {
        let vectors = try RFC6238Vectors.load()
        #expect(vectors.vectors.count == 18)
        for vector in vectors.vectors {
            let totp = try Self.totp(vector.mode, vectors: vectors)
            let time = Date(timeIntervalSince1970: TimeInterval(vector.time))
            #expect(totp.step(at: time) == Int64(vector.step, radix: 16), "\(vector.time)")
            #expect(totp.code(at: time) == vector.totp, "\(vector.mode) at \(vector.time)")
            #expect(try totp.verify(vector.totp, at: time, skew: 0) == Int64(vector.step, radix: 16))
        }
        // Six digits are the low six of the eight.
        let six = try Self.totp("SHA1", digits: 6, vectors: vectors)
        #expect(six.code(at: Date(timeIntervalSince1970: 59)) == "287082")
    }

    @Test("a code is accepted one step either side, not two; each step once; a wrong or malformed code is refused")
    func verification() throws {
        let totp = try TOTP(secret: TOTP.makeSecret())
        let now = Date(timeIntervalSince1970: 1_765_152_000)
        let step = totp.step(at: now)
        #expect(try totp.verify(totp.code(step: step - 1), at: now) == step - 1)
        #expect(try totp.verify(totp.code(step: step + 1), at: now) == step + 1)
        #expect(throws: WebAuthnError.codeMismatch(skew: 1)) { try totp.verify(totp.code(step: step - 2), at: now) }
        #expect(throws: WebAuthnError.codeMismatch(skew: 1)) { try totp.verify(totp.code(step: step + 2), at: now) }
        // Replay: the step just accepted, or an earlier one, is refused.
        let accepted = try totp.verify(totp.code(step: step), at: now, after: step - 1)
        #expect(throws: WebAuthnError.codeReused(step: step)) { try totp.verify(totp.code(step: step), at: now, after: accepted) }
        #expect(throws: WebAuthnError.codeReused(step: step - 1)) { try totp.verify(totp.code(step: step - 1), at: now, after: accepted) }
        #expect(try totp.verify(totp.code(step: step + 1), at: now, after: accepted) == step + 1)
        for bad in ["", "12345", "1234567", "12345a", "１２３４５６", " 123456", "123 456"] {
            #expect(throws: WebAuthnError.malformed(source: "the one-time code", detail: "must be 6 digits")) { try totp.verify(bad, at: now) }
        }
    }

    @Test("secrets, digits and periods TOTP does not take are refused with the reason")
    func arguments() throws {
        #expect(throws: WebAuthnError.self) { try TOTP(secret: SecretBytes([UInt8](repeating: 1, count: 15))) }
        #expect(throws: WebAuthnError.self) { try TOTP(secret: SecretBytes([UInt8](repeating: 1, count: 129))) }
        for digits in [0, 5, 7, 9, 10] {
            #expect(throws: WebAuthnError.invalidArgument(detail: "a TOTP code has 6 or 8 digits, not \(digits)")) {
                try TOTP(secret: TOTP.makeSecret(), digits: digits)
            }
        }
        for period in [Duration.zero, .seconds(-30), .seconds(3601), .milliseconds(1500)] {
            #expect(throws: WebAuthnError.self) { try TOTP(secret: TOTP.makeSecret(), period: period) }
        }
        #expect(TOTP.makeSecret().count == 20)
        #expect(TOTP.makeSecret().bytes != TOTP.makeSecret().bytes)
    }

    @Test("the error codes are stable, in the webauthn domain")
    func codes() {
        expectStableCodes(
            [(WebAuthnError.malformed(source: "s", detail: "d"), "malformed"), (.codeMismatch(skew: 1), "codeMismatch"), (.codeReused(step: 1), "codeReused"),
             (.invalidArgument(detail: "d"), "invalidArgument")],
            domain: "webauthn")
    }
}

@Suite("recovery codes")
struct RecoveryCodeTests {
    @Test("ten codes of 16 Crockford characters in groups of four, all different, each normalising to itself without dashes")
    func generation() throws {
        let codes = RecoveryCodes.generate()
        #expect(codes.count == 10 && Set(codes).count == 10)
        for code in codes {
            #expect(code.count == 19 && code.split(separator: "-").map(\.count) == [4, 4, 4, 4], "\(code)")
            #expect(!code.contains { "ilou".contains($0) }, "\(code)")
            #expect(RecoveryCodes.normalise(code) == code.replacingOccurrences(of: "-", with: ""))
        }
        #expect(RecoveryCodes.generate(count: 0).isEmpty)
    }

    @Test("typed forms read as one: case, spaces, dashes, I/L for 1 and O for 0; anything else refused")
    func normalisation() {
        #expect(RecoveryCodes.normalise("7K2M Q9XD-3HFA-OV5C") == "7k2mq9xd3hfa0v5c")
        #expect(RecoveryCodes.normalise("ikL1-0000-oooo-abcd") == "1k110000" + "0000abcd")
        for bad in ["", "7k2m-q9xd-3hfa-0v5", "7k2m-q9xd-3hfa-0v5cc", "7k2m-q9xd-3hfa-0v5u", "7k2m_q9xd_3hfa_0v5c", "７k2m-q9xd-3hfa-0v5c",
                    String(repeating: "a", count: 10_000)] {
            #expect(RecoveryCodes.normalise(bad) == nil, "\(bad.prefix(30))")
        }
    }

    @Test("the stored hash is keyed and bound to the user")
    func hashing() {
        let key = SecretBytes(RandomBytes.make(32))
        let code = "7k2mq9xd3hfa0v5c"
        let stored = RecoveryCodes.hash(code, userID: "u1", key: key)
        #expect(stored.count == 64 && stored == RecoveryCodes.hash(code, userID: "u1", key: key))
        #expect(stored != RecoveryCodes.hash(code, userID: "u2", key: key))
        #expect(stored != RecoveryCodes.hash(code, userID: "u1", key: SecretBytes(RandomBytes.make(32))))
        // The zero byte separates: ("u1", "x…") and ("u1x", "…") differ.
        #expect(RecoveryCodes.hash("a" + code.dropFirst(), userID: "u1", key: key) != RecoveryCodes.hash(String(code.dropFirst()), userID: "u1a", key: key))
    }
}
