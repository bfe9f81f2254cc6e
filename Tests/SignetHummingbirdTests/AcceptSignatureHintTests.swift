import HummingbirdAuth
import SignetHTTP
import SignetHummingbird
import Testing

@Suite("Accept-Signature hint")
struct AcceptSignatureHintTests {
    typealias Context = BasicAuthRequestContext<VerifiedHTTPSignature>

    @Test("the hint names what the policy demands, nonce only with a replay cache")
    func hint() {
        let keys = StaticHTTPSignatureKeys([:])
        let plain = HTTPSignatureAuthenticator<Context>(verifier: HTTPMessageVerifier(keys: keys))
        #expect(plain.acceptSignature == #"sig1=("@method" "@target-uri" "content-digest");created;keyid"#)
        var policy = HTTPSignaturePolicy.default
        policy.requiredTag = "app-1"
        let replay = HTTPSignatureAuthenticator<Context>(verifier: HTTPMessageVerifier(keys: keys, policy: policy, nonceCache: InMemoryNonceCache()))
        #expect(replay.acceptSignature == #"sig1=("@method" "@target-uri" "content-digest");created;keyid;nonce;tag="app-1""#)
    }
}
