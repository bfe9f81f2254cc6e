import SignetCore
import SignetPKCS11
import SignetTestSupport
import Testing

/// `pkcs11:` URIs (RFC 7512): the RFC's own examples, percent-encoding both ways, binary ids,
/// canonical form, and every malformed shape refused with its code.
@Suite("PKCS#11 URIs")
struct PKCS11URITests {
    /// RFC 7512 §3.4's examples (the last one with its vendor attributes renamed `x-…`, as
    /// Signet only ignores vendor attributes spelt that way).
    static let rfcExamples = [
        "pkcs11:",
        "pkcs11:object=my-pubkey;type=public",
        "pkcs11:object=my-key;type=private?pin-source=file:/etc/token",
        "pkcs11:token=The%20Software%20PKCS%2311%20Softtoken;manufacturer=Snake%20Oil,%20Inc.;model=1.0;object=my-certificate;type=cert;id=%69%95%3E%5C%F4%BD%EC%91;serial=?pin-source=file:/etc/token_pin",
        "pkcs11:object=my-sign-key;type=private?module-name=mypkcs11",
        "pkcs11:object=my-sign-key;type=private?module-path=/mnt/libmypkcs11.so.1",
        "pkcs11:token=Software%20PKCS%2311%20softtoken;manufacturer=Snake%20Oil,%20Inc.?pin-value=the-pin",
        "pkcs11:slot-description=Sun%20Metaslot",
        "pkcs11:library-manufacturer=Snake%20Oil,%20Inc.;library-description=Soft%20Token%20Library;library-version=1.23",
        "pkcs11:token=My%20token%25%20created%20by%20Joe;library-version=3;id=%01%02%03%Ba%dd%Ca%fe%04%05%06",
        "pkcs11:token=A%20name%20with%20a%20substring%20%25%3B;object=my-certificate;type=cert",
        "pkcs11:token=Name%20with%20a%20small%20A%20with%20acute:%20%C3%A1;object=my-certificate;type=cert",
        "pkcs11:token=my-token;object=my-certificate;type=cert;x-vendor-aaa=value-a?pin-source=file:/etc/token_pin&x-vendor-bbb=value-b",
    ]

    @Test("RFC 7512's examples parse, and their canonical form parses back to the same URI", arguments: rfcExamples)
    func rfcExample(_ text: String) throws {
        let uri = try PKCS11URI(parsing: text)
        var expected = uri
        expected.pinValue = nil  // never written
        #expect(try PKCS11URI(parsing: uri.description) == expected, "\(uri.description)")
        #expect(!uri.description.contains("the-pin"))
    }

    @Test("the attributes of the RFC's examples decode to what they say")
    func rfcValues() throws {
        let full = try PKCS11URI(parsing: Self.rfcExamples[3])
        #expect(full.token == "The Software PKCS#11 Softtoken")
        #expect(full.manufacturer == "Snake Oil, Inc.")
        #expect(full.model == "1.0")
        #expect(full.serial == "")
        #expect(full.object == "my-certificate")
        #expect(full.type == .certificate)
        #expect(full.id == [0x69, 0x95, 0x3E, 0x5C, 0xF4, 0xBD, 0xEC, 0x91])
        #expect(full.pinSource == "file:/etc/token_pin")
        #expect(
            full.description
                == "pkcs11:token=The%20Software%20PKCS%2311%20Softtoken;manufacturer=Snake%20Oil,%20Inc.;model=1.0;serial=;object=my-certificate;id=%69%95%3E%5C%F4%BD%EC%91;type=cert?pin-source=file:/etc/token_pin"
        )

        let library = try PKCS11URI(parsing: Self.rfcExamples[8])
        #expect(library.libraryManufacturer == "Snake Oil, Inc.")
        #expect(library.libraryDescription == "Soft Token Library")
        #expect(library.libraryVersion == PKCS11Version(major: 1, minor: 23))

        let binary = try PKCS11URI(parsing: Self.rfcExamples[9])
        #expect(binary.token == "My token% created by Joe")
        #expect(binary.libraryVersion == PKCS11Version(major: 3))
        #expect(binary.id == [0x01, 0x02, 0x03, 0xBA, 0xDD, 0xCA, 0xFE, 0x04, 0x05, 0x06])
        #expect(binary.description == "pkcs11:token=My%20token%25%20created%20by%20Joe;library-version=3;id=%01%02%03%BA%DD%CA%FE%04%05%06")

        #expect(try PKCS11URI(parsing: Self.rfcExamples[10]).token == "A name with a substring %;")
        #expect(try PKCS11URI(parsing: Self.rfcExamples[11]).token == "Name with a small A with acute: á")
        #expect(try PKCS11URI(parsing: Self.rfcExamples[5]).modulePath == "/mnt/libmypkcs11.so.1")
        #expect(try PKCS11URI(parsing: Self.rfcExamples[4]).moduleName == "mypkcs11")
        #expect(try PKCS11URI(parsing: Self.rfcExamples[7]).slotDescription == "Sun Metaslot")
        #expect(try PKCS11URI(parsing: Self.rfcExamples[0]) == PKCS11URI())

        let withPIN = try PKCS11URI(parsing: Self.rfcExamples[6])
        #expect(withPIN.pinValue == "the-pin")
        #expect(withPIN.description == "pkcs11:token=Software%20PKCS%2311%20softtoken;manufacturer=Snake%20Oil,%20Inc.")

        // Vendor attributes spelt x-… are ignored.
        let vendor = try PKCS11URI(parsing: Self.rfcExamples[12])
        #expect(vendor.description == "pkcs11:token=my-token;object=my-certificate;type=cert?pin-source=file:/etc/token_pin")
    }

    @Test("any text and any id survive encoding and decoding")
    func roundTrips() throws {
        var uri = PKCS11URI()
        uri.token = "a;b?c&d=e/f%g h#i\u{00E9}\u{1F511}"
        uri.object = "key [1] (test), 'x' * y + z!$@:"
        uri.id = (0...255).map { UInt8($0) }
        uri.slotID = 18_446_744_073_709_551_615
        uri.slotManufacturer = "Ω"
        uri.modulePath = "/opt/my lib/p11 & co.so"
        uri.pinSource = "file:/run/pin?x|y"
        uri.type = .privateKey
        let text = uri.description
        #expect(try PKCS11URI(parsing: text) == uri)
        #expect(text.contains("token=a%3Bb%3Fc&d=e%2Ff%25g%20h%23i%C3%A9%F0%9F%94%91"))
        #expect(text.contains("object=key%20[1]%20(test),%20'x'%20*%20y%20+%20z!$@:"))
        #expect(text.contains("module-path=/opt/my%20lib/p11%20%26%20co.so"))
        #expect(text.contains("pin-source=file:/run/pin?x|y"))
        #expect(text.contains("id=%00%01%02"))
        // Lower-case escapes decode the same.
        #expect(try PKCS11URI(parsing: "pkcs11:id=%ab%CD").id == [0xAB, 0xCD])
    }

    @Test("the URI a key prints is pkcs11:token=…;object=…;id=…;type=private")
    func keyShape() throws {
        var uri = PKCS11URI()
        uri.token = "my token"
        uri.object = "signing key"
        uri.id = [0x01, 0xA0]
        uri.type = .privateKey
        #expect(uri.description == "pkcs11:token=my%20token;object=signing%20key;id=%01%A0;type=private")
        #expect(uri.namesObject && uri.namesToken)
    }

    /// Each malformed URI, and a fragment its message must show.
    static let invalid: [(String, String)] = [
        ("token=x", "pkcs11:"),
        ("PKCS11:token=x", "pkcs11:"),
        ("pkcs:token=x", "pkcs11:"),
        ("pkcs11:token=a%2", "%"),
        ("pkcs11:token=a%zz", "%"),
        ("pkcs11:token=a%", "%"),
        ("pkcs11:token=a;token=b", "token appears twice"),
        ("pkcs11:object=a?module-path=/x&module-path=/y", "module-path appears twice"),
        ("pkcs11:colour=blue", "unknown attribute colour"),
        ("pkcs11:token=my-token;vendor-aaa=value-a", "vendor-aaa"),
        ("pkcs11:?colour=blue", "colour"),
        ("pkcs11:token=my token", "%20"),
        ("pkcs11:token=a/b", "'/'"),
        ("pkcs11:token=a;;object=b", "empty attribute"),
        ("pkcs11:token", "'='"),
        ("pkcs11:=x", "name"),
        ("pkcs11:type=key", "type"),
        ("pkcs11:slot-id=x1", "slot-id"),
        ("pkcs11:slot-id=99999999999999999999999", "slot-id"),
        ("pkcs11:library-version=1.2.3", "library-version"),
        ("pkcs11:library-version=256", "library-version"),
        ("pkcs11:token=%FF%FE", "UTF-8"),
        ("pkcs11:token=x?pin-source=file:/p&pin-value=1234", "pin-source and pin-value"),
        ("pkcs11:token=x?module-path=a&b", "'='"),
        ("pkcs11:token=x?pin-value=12&3=4", "what follows pin-value is not an attribute"),
    ]

    @Test("malformed URIs are refused with invalidURI", arguments: invalid)
    func refused(_ text: String, _ fragment: String) throws {
        let error = try thrown(PKCS11Error.self) { try PKCS11URI(parsing: text) }
        expectError(error, is: "invalidURI", mentioning: [fragment])
        #expect(error.category == .usage)
    }

    @Test("a URI over 4 KiB is refused")
    func tooLong() throws {
        let text = "pkcs11:object=" + String(repeating: "a", count: 4096)
        let error = try thrown(PKCS11Error.self) { try PKCS11URI(parsing: text) }
        expectError(error, is: "invalidURI", mentioning: ["4096"])
        #expect(error.description.count < 200, "the message does not repeat the whole URI")
        #expect(try PKCS11URI(parsing: "pkcs11:object=" + String(repeating: "a", count: 4096 - 14)).object?.count == 4082)
    }

    @Test("a pin-value never appears in a message")
    func pinValueHidden() throws {
        let error = try thrown(PKCS11Error.self) { try PKCS11URI(parsing: "pkcs11:colour=blue?pin-value=s3cret&module-name=x") }
        #expect(!error.description.contains("s3cret"))
        #expect(error.description.contains("pin-value=***"))
        #expect(PKCS11URI.redacted("pkcs11:token=a?pin-value=1234") == "pkcs11:token=a?pin-value=***")
        // Misplaced in the path, in another case, or the first attribute: hidden all the same.
        #expect(PKCS11URI.redacted("pkcs11:token=x;pin-value=1234") == "pkcs11:token=x;pin-value=***")
        #expect(PKCS11URI.redacted("pkcs11:PIN-Value=1234;token=x") == "pkcs11:pin-value=***", "in the path, it hides up to the '?'")
        #expect(PKCS11URI.redacted("pkcs11:token=x?module-path=/m.so&Pin-Value=1234") == "pkcs11:token=x?module-path=/m.so&pin-value=***")
        for text in ["pkcs11:token=x;pin-value=1234", "pkcs11:token=x?pin-value=12#4"] {
            let error = try thrown(PKCS11Error.self) { try PKCS11URI(parsing: text) }
            #expect(!error.description.contains("1234") && !error.description.contains("12#4") && !error.description.contains("'#'"), "\(error)")
        }
        // Neither debugDescription nor dump shows it.
        let uri = try PKCS11URI(parsing: "pkcs11:token=x?pin-value=s3cret")
        var dumped = ""
        dump(uri, to: &dumped)
        #expect(!String(reflecting: uri).contains("s3cret") && !dumped.contains("s3cret"), "\(dumped)")
    }

    /// A URI holding a PIN, the parts of it that must never show (a bare "12" would be found in
    /// "RFC 7512"), and the URI as messages show it.
    struct SecretCase: Sendable, CustomTestStringConvertible {
        var text: String
        var secrets: [String]
        var shown: String
        var testDescription: String { text }
    }

    static let secretURIs: [SecretCase] = [
        SecretCase(text: "pkcs11:token=x?pin-value=1234;SECRETTAIL", secrets: ["1234", "SECRETTAIL"], shown: "pkcs11:token=x?pin-value=***"),
        SecretCase(text: "pkcs11:token=x?pin%2Dvalue=1234", secrets: ["1234"], shown: "pkcs11:token=x?pin-value=***"),
        SecretCase(text: "pkcs11:token=x?pin%2dVALUE=1234&module-name=m", secrets: ["1234"], shown: "pkcs11:token=x?pin-value=***&module-name=m"),
        SecretCase(text: "pkcs11:token=x?PIN-VALUE=1234", secrets: ["1234"], shown: "pkcs11:token=x?pin-value=***"),
        SecretCase(text: "pkcs11:token=x?pin-value=12&34", secrets: ["pin-value=12", "34"], shown: "pkcs11:token=x?pin-value=***&***"),
        SecretCase(
            text: "pkcs11:token=x?pin-value=12&34&module-name=m", secrets: ["pin-value=12", "34"], shown: "pkcs11:token=x?pin-value=***&***&module-name=m"),
        SecretCase(text: "pkcs11:token=x?pin-value=12&3=4&x-y=z", secrets: ["pin-value=12", "3=4"], shown: "pkcs11:token=x?pin-value=***&***&x-y=z"),
        SecretCase(text: "pkcs11:token=x?pin-value=12?34", secrets: ["pin-value=12", "34"], shown: "pkcs11:token=x?pin-value=***"),
        SecretCase(text: "pkcs11:token=x;pin-value=1234", secrets: ["1234"], shown: "pkcs11:token=x;pin-value=***"),
        SecretCase(
            text: "pkcs11:token=x;pin-value=12;34?module-name=m", secrets: ["pin-value=12", "34"], shown: "pkcs11:token=x;pin-value=***?module-name=m"),
        SecretCase(text: "pkcs11:token=x;pin-value=12?34", secrets: ["pin-value=12", "34"], shown: "pkcs11:token=x;pin-value=***?***"),
    ]

    @Test("a pin-value is hidden whole, whatever it runs into, however its name is written", arguments: secretURIs)
    func pinValueRedacted(_ test: SecretCase) {
        let redacted = PKCS11URI.redacted(test.text)
        #expect(redacted == test.shown)
        for secret in test.secrets { #expect(!redacted.contains(secret), "\(redacted) shows \(secret)") }
        #expect(redacted.contains("token=x"), "the rest of the URI still shows")
        // Parsed: refused with a message showing the redacted URI, or (a '?' is allowed in a
        // query value) accepted, with the PIN kept out of every description.
        do {
            let uri = try PKCS11URI(parsing: test.text)
            let descriptions = [uri.description, String(reflecting: uri)]
            for secret in test.secrets { #expect(!descriptions.contains(where: { $0.contains(secret) }), "\(descriptions)") }
        } catch {
            let message = "\(error)"
            #expect(message.contains(test.shown), "\(message)")
            for secret in test.secrets { #expect(!message.contains(secret), "\(message)") }
        }
    }

    @Test("a pkcs11: reference with no key source registered is named by its scheme alone")
    func unregisteredSchemeHidesReference() async throws {
        let reference = "pkcs11:token=x?pin-value=1234;SECRETTAIL"
        let resolver = KeySourceResolver()
        let signerError = try await thrownAsync(SignetCoreError.self) { try await resolver.signer(reference) }
        let publicError = try await thrownAsync(SignetCoreError.self) { try await resolver.publicKey(reference) }
        for error in [signerError, publicError] {
            #expect(error.code == "unsupported")
            #expect(error.description.hasPrefix("pkcs11:…"), "\(error)")
            for secret in ["1234", "SECRETTAIL", "token=x"] { #expect(!error.description.contains(secret), "\(error)") }
        }
    }

    @Test("attributes match tokens, slots and libraries; absent ones match anything")
    func matching() throws {
        let token = PKCS11TokenInfo(label: "My Token", manufacturer: "SoftHSM project", model: "SoftHSM v2", serial: "c3a8", flags: 0)
        let slot = PKCS11SlotInfo(id: 7, slotDescription: "SoftHSM slot ID 0x7", manufacturer: "SoftHSM project", flags: 1, token: token)
        let library = PKCS11LibraryInfo(
            manufacturer: "SoftHSM", libraryDescription: "Implementation of PKCS11", version: PKCS11Version(major: 2, minor: 6),
            cryptokiVersion: PKCS11Version(major: 2, minor: 40))
        #expect(try PKCS11URI(parsing: "pkcs11:").matches(slot: slot))
        #expect(try PKCS11URI(parsing: "pkcs11:token=My%20Token;serial=c3a8").matches(token: token))
        #expect(try !PKCS11URI(parsing: "pkcs11:token=My%20Token;serial=c3a9").matches(token: token))
        #expect(try !PKCS11URI(parsing: "pkcs11:token=my%20token").matches(token: token), "labels are compared exactly")
        #expect(try PKCS11URI(parsing: "pkcs11:slot-id=7;token=My%20Token").matches(slot: slot))
        #expect(try !PKCS11URI(parsing: "pkcs11:slot-id=8").matches(slot: slot))
        #expect(try !PKCS11URI(parsing: "pkcs11:token=Other").matches(slot: slot))
        #expect(try PKCS11URI(parsing: "pkcs11:library-manufacturer=SoftHSM;library-version=2.6").matches(library: library))
        #expect(try !PKCS11URI(parsing: "pkcs11:library-version=2").matches(library: library), "M alone is M.0")
        #expect(try !PKCS11URI(parsing: "pkcs11:library-description=Other").matches(library: library))
    }
}

/// `PKCS11Error`'s codes and messages.
@Suite("PKCS11Error codes")
struct PKCS11ErrorCodeTests {
    static let samples: [(PKCS11Error, String)] = [
        (.moduleNotLoadable(path: "p", detail: "d"), "moduleNotLoadable"), (.notAPKCS11Module(path: "p"), "notAPKCS11Module"),
        (.invalidURI(uri: "u", detail: "d"), "invalidURI"), (.noMatch(uri: "u", detail: "d"), "noMatch"),
        (.ambiguous(uri: "u", count: 2), "ambiguous"), (.pinRequired(token: "t"), "pinRequired"), (.wrongPIN(token: "t"), "wrongPIN"),
        (.pinLocked(token: "t"), "pinLocked"), (.unsupportedMechanism(token: "t", mechanism: "m"), "unsupportedMechanism"),
        (.unsupportedKey(uri: "u", detail: "d"), "unsupportedKey"), (.tokenFailure(function: "C_Sign", rv: "CKR_DEVICE_ERROR", detail: ""), "tokenFailure"),
        (.pinSourceUnreadable(path: "p", detail: "d"), "pinSourceUnreadable"),
    ]

    @Test("one code per case, named after it, in the pkcs11 domain; messages name no flag")
    func codes() {
        expectStableCodes(Self.samples, domain: "pkcs11")
    }

    @Test("categories: a wrong PIN fails a check, a bad URI is usage, a missing module the environment")
    func categories() {
        #expect(PKCS11Error.wrongPIN(token: "t").category == .checkFailed)
        #expect(PKCS11Error.invalidURI(uri: "u", detail: "d").category == .usage)
        #expect(PKCS11Error.ambiguous(uri: "u", count: 2).category == .usage)
        #expect(PKCS11Error.noMatch(uri: "u", detail: "d").category == .malformedInput)
        #expect(PKCS11Error.moduleNotLoadable(path: "p", detail: "d").category == .environment)
        #expect(PKCS11Error.tokenFailure(function: "f", rv: "r", detail: "").category == .environment)
    }

    @Test("return values are named, or shown in hex")
    func returnValueNames() {
        #expect(PKCS11Error.returnValueName(0x30) == "CKR_DEVICE_ERROR")
        #expect(PKCS11Error.returnValueName(0xA0) == "CKR_PIN_INCORRECT")
        #expect(PKCS11Error.returnValueName(0) == "CKR_OK")
        #expect(PKCS11Error.returnValueName(0x8000_0001) == "0x80000001")
    }

    @Test("the ambiguity message says how to name one object")
    func ambiguityHint() {
        let message = PKCS11Error.ambiguous(uri: "pkcs11:object=k", count: 2).description
        #expect(message.contains("id=") && message.contains("object="))
    }
}
