import Foundation
import HTTPTypes
import SignetCore
@testable import SignetHTTP
import SignetTestSupport
import Testing

/// A key store whose backend fails.
struct FailingKeyStore: HTTPSignatureKeyStore {
    func verificationKey(for keyID: String) async throws -> HTTPVerificationKey? {
        throw VectorError(description: "the key database is down")
    }
}

/// A Signature-Input / Signature pair that must be refused as malformed, naming `field`.
struct MalformedSignatureCase: Sendable, CustomTestStringConvertible {
    let name: String
    let signatureInput: [String]
    let signature: [String]
    let field: String

    var testDescription: String { name }

    static let params = ";created=1700000000;keyid=\"client-1\""
    static let inputField = "Signature-Input (sig1)"

    static func badInput(_ name: String, _ value: String, field: String = inputField) -> MalformedSignatureCase {
        MalformedSignatureCase(name: name, signatureInput: [value], signature: ["sig1=:AAAA:"], field: field)
    }

    static func badSignature(_ name: String, _ value: String, field: String = "Signature") -> MalformedSignatureCase {
        MalformedSignatureCase(name: name, signatureInput: ["sig1=(\"@method\" \"@target-uri\")" + params], signature: [value], field: field)
    }

    static let all: [MalformedSignatureCase] = [
        badInput("Signature-Input not a dictionary", "sig1=(\"@method\"", field: "Signature-Input"),
        badInput("a label that is not a key", "Sig1=(\"@method\")" + params, field: "Signature-Input"),
        badInput("an item instead of an inner list", "sig1=\"@method\"" + params),
        badInput("a component that is a token", "sig1=(method)" + params),
        badInput("a component that is an integer", "sig1=(1)" + params),
        badInput("an empty component", "sig1=(\"\")" + params),
        badInput("an upper-case derived component", "sig1=(\"@Method\")" + params),
        badInput("an upper-case field name", "sig1=(\"Content-Type\")" + params),
        badInput("a field name with a space", "sig1=(\"content type\")" + params),
        badInput("an unknown derived component", "sig1=(\"@fragment\")" + params),
        badInput("@query-param without name", "sig1=(\"@query-param\")" + params),
        badInput("name on a field", "sig1=(\"content-type\";name=\"a\")" + params),
        badInput("sf on a derived component", "sig1=(\"@method\";sf)" + params),
        badInput("bs together with key", "sig1=(\"example-dict\";bs;key=\"a\")" + params),
        badInput("an unsupported component parameter (tr)", "sig1=(\"date\";tr)" + params),
        badInput("a duplicate component", "sig1=(\"@method\" \"@method\")" + params),
        badInput("created as a string", "sig1=(\"@method\");created=\"1700000000\";keyid=\"client-1\""),
        badInput("expires as a decimal", "sig1=(\"@method\")" + params + ";expires=1.5"),
        badInput("keyid as a token", "sig1=(\"@method\");created=1700000000;keyid=client"),
        badInput("alg as a byte sequence", "sig1=(\"@method\")" + params + ";alg=:AAAA:"),
        badInput("a label twice in one line", "sig1=(\"@method\" \"@target-uri\")" + params + ", sig1=(\"@method\")" + params, field: "Signature-Input"),
        MalformedSignatureCase(
            name: "a label twice across two lines",
            signatureInput: ["sig1=(\"@method\" \"@target-uri\")" + params, "sig1=(\"@method\")" + params],
            signature: ["sig1=:AAAA:"], field: "Signature-Input"),
        badSignature("Signature not a dictionary", ":AAAA:"),
        badSignature("a string, not a byte sequence", "sig1=\"AAAA\""),
        badSignature("an empty byte sequence", "sig1=::"),
        badSignature("base64 of the wrong length", "sig1=:AAA:"),
        badSignature("an inner list", "sig1=(:AAAA:)"),
        badSignature("a label twice in Signature", "sig1=:AAAA:, sig1=:BBBB:"),
        badSignature("a Signature-Input label without a Signature", "sig2=:AAAA:"),
        badSignature("a Signature label without a Signature-Input", "sig1=:AAAA:, sig2=:AAAA:", field: "Signature-Input"),
    ]
}
