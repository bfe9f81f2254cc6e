import Foundation
import SignetCore
import SignetTestSupport
import Testing

/// Genuine responses from Chromium's virtual authenticator (`Vectors/chromium`, README there)
/// read with SignetCore's shared readers — the strict CBOR reader, COSE keys and authenticator
/// data that App Attest already uses and passkeys will: the registration's credential key
/// verifies the authentication's signature, and nothing else does.
@Suite("genuine WebAuthn responses from Chromium, read with the shared readers")
struct ChromiumResponseTests {
    struct Response: Decodable {
        struct Body: Decodable {
            let clientDataJSON: String
            let attestationObject: String?
            let authenticatorData: String?
            let signature: String?
            let userHandle: String?
        }
        let id: String
        let rawId: String
        let type: String
        let response: Body
    }

    static func load(_ name: String) throws -> Response {
        try TestVectors.decode(Response.self, "chromium/" + name, in: .module)
    }

    static func bytes(_ text: String?) throws -> [UInt8] {
        try #require(text.flatMap { Base64.decodeURL($0) }, "not base64url: \(text ?? "nil")")
    }

    static func clientData(_ response: Response) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(try bytes(response.response.clientDataJSON))) as? [String: Any])
    }

    /// The registration's attested credential, read from its attestation object.
    static func credential() throws -> (AuthenticatorData, AuthenticatorData.AttestedCredential) {
        let registration = try load("registration-es256-packed.json")
        let object = try CBOR.decode(try bytes(registration.response.attestationObject), source: "the attestation object")
        let entries = try #require(object.mapValue)
        func field(_ name: String) -> CBORValue? { entries.first { $0.key.textValue == name }?.value }
        #expect(field("fmt")?.textValue == "packed")
        let statement = try #require(field("attStmt")?.mapValue)
        #expect(statement.first { $0.key.textValue == "alg" }?.value.int64Value == -7)
        #expect(statement.first { $0.key.textValue == "x5c" }?.value.arrayValue?.count == 1)
        let authData = try AuthenticatorData(try #require(field("authData")?.bytesValue), source: "authData")
        return (authData, try #require(authData.attestedCredential))
    }

    @Test("the registration: packed, ES256, for rp id localhost, user present and verified, its credential id the response's")
    func registration() throws {
        let (authData, credential) = try Self.credential()
        #expect(authData.rpIDHash == DigestAlgorithm.sha256.hash(Array("localhost".utf8)).bytes)
        #expect(authData.flags.isSuperset(of: [.userPresent, .userVerified, .attestedCredentialData]))
        let registration = try Self.load("registration-es256-packed.json")
        #expect(credential.credentialID == (try Self.bytes(registration.rawId)) && registration.id == registration.rawId)
        #expect(credential.publicKey.algorithm == .es256 && credential.publicKey.key.kind == .p256)
        let client = try Self.clientData(registration)
        #expect(client["type"] as? String == "webauthn.create")
        #expect(client["challenge"] as? String == Base64.encodeURL([UInt8](repeating: 7, count: 32)))
        #expect((client["origin"] as? String)?.hasPrefix("http://localhost:") == true)
    }

    @Test("the authentication verifies under the registered key; altered, it does not")
    func authentication() throws {
        let (registered, credential) = try Self.credential()
        let authentication = try Self.load("authentication-es256.json")
        #expect(authentication.rawId == (try Self.load("registration-es256-packed.json")).rawId)
        let authData = try AuthenticatorData(try Self.bytes(authentication.response.authenticatorData), source: "authenticatorData")
        #expect(authData.rpIDHash == registered.rpIDHash && authData.attestedCredential == nil)
        #expect(authData.flags.isSuperset(of: [.userPresent, .userVerified]))
        #expect(authData.signCount > registered.signCount, "the virtual authenticator counts")
        #expect(try Self.bytes(authentication.response.userHandle) == [1, 2, 3])
        let client = try Self.clientData(authentication)
        #expect(client["type"] as? String == "webauthn.get")
        #expect(client["challenge"] as? String == Base64.encodeURL([UInt8](repeating: 9, count: 32)))
        let clientHash = DigestAlgorithm.sha256.hash(try Self.bytes(authentication.response.clientDataJSON)).bytes
        let signature = try Self.bytes(authentication.response.signature)
        let verifier = try PublicKeyVerifier(key: credential.publicKey.key, algorithm: .ecdsaP256SHA256)
        try verifier.verify(signature: signature, message: authData.bytes + clientHash)
        var altered = authData.bytes
        altered[32] ^= 0x04  // the UV flag
        #expect(throws: (any Error).self) { try verifier.verify(signature: signature, message: altered + clientHash) }
        #expect(throws: (any Error).self) { try verifier.verify(signature: signature, message: authData.bytes + registered.rpIDHash) }
    }
}
