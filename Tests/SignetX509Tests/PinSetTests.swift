import Foundation
import SignetCore
import SignetTestSupport
import SignetX509
import Testing

/// The pin file: loading, every refusal with its code and reason, writing, and the backup rule.
@Suite("Pin sets")
struct PinSetTests {
    @Test("a pin file loads with its hosts normalised and optional members defaulted")
    func loadsFile() throws {
        let a = try PinFixtures.newPin(), b = try PinFixtures.newPin(), c = try PinFixtures.newPin()
        let folder = try TemporaryFolder()
        let path = try folder.write(
            "pins.json",
            """
            {
              "version": 1,
              "hosts": [
                {
                  "host": "API.Example.com.",
                  "pins": ["\(a)", "\(b)"],
                  "includeSubdomains": false,
                  "expires": "2027-06-01T00:00:00Z",
                  "reportOnly": true,
                  "reportURIs": ["https://reports.example.com/pins"]
                },
                {"host": "example.org", "pins": ["\(b)", "\(c)"], "includeSubdomains": true, "expires": null}
              ]
            }
            """)
        let set = try PinSet.load(path: path)
        #expect(set.hosts.count == 2)
        #expect(
            set.hosts.first
                == HostPins(
                    host: "api.example.com", pins: [a, b], includeSubdomains: false, expires: PinFixtures.june2027, reportOnly: true,
                    reportURIs: ["https://reports.example.com/pins"]))
        #expect(set.hosts.last == HostPins(host: "example.org", pins: [b, c], includeSubdomains: true))
        #expect(set.hosts.first?.isEnforced == false)
        #expect(set.hosts.last?.isEnforced == true)
    }

    @Test("an empty host list is a valid pin set that pins nothing")
    func emptyHosts() throws {
        let set = try PinSet.decode(Array(#"{"hosts": [], "version": 1}"#.utf8), source: "empty.json")
        #expect(set.hosts.isEmpty)
        #expect(set.policy(for: "example.com") == nil)
    }

    static let refusals: [(String, String, SignetErrorCode<X509Error>, [String])] = [
        ("one pin", PinFixtures.file(#"{"host": "api.example.com", "pins": ["{A}"]}"#), "pinSetInvalid",
         ["api.example.com: only one pin", "at least two are needed", "backup"]),
        ("no pins", PinFixtures.file(#"{"host": "api.example.com", "pins": []}"#), "pinSetInvalid", ["api.example.com: no pins"]),
        ("two identical pins", PinFixtures.file(#"{"host": "api.example.com", "pins": ["{A}", "{A}"]}"#), "pinSetInvalid",
         ["api.example.com: the pin {A} is listed twice"]),
        ("a malformed pin", PinFixtures.file(#"{"host": "api.example.com", "pins": ["sha256/abc", "{B}"]}"#), "pinSetInvalid",
         [#"hosts[0] (api.example.com): "sha256/abc" is not a pin"#, "44 characters"]),
        ("a pin of another hash", PinFixtures.file(#"{"host": "api.example.com", "pins": ["sha1/AAAAAAAAAAAAAAAAAAAAAAAAAAA=", "{B}"]}"#),
         "pinSetInvalid", [#""sha1/AAAAAAAAAAAAAAAAAAAAAAAAAAA=" is not a pin"#]),
        ("a bare base64 pin", PinFixtures.file(#"{"host": "api.example.com", "pins": ["{A64}", "{B}"]}"#), "pinSetInvalid",
         ["is not a pin", "bare base64", "kTSKPublicKeyHashes", "write it as {A}"]),
        ("a pin that is not a string", PinFixtures.file(#"{"host": "api.example.com", "pins": ["{A}", 7]}"#), "pinSetInvalid",
         [#""pins" must be an array of strings, not a number"#]),
        ("an unknown member in a host", PinFixtures.file(PinFixtures.host(adding: #""enforcePinning": true"#)), "pinSetInvalid",
         [#"hosts[0] has an unknown member "enforcePinning""#, "reportOnly"]),
        ("an unknown member at the top", #"{"version": 1, "hosts": [], "kTSKPinnedDomains": {}}"#, "pinSetInvalid",
         [#"the pin set has an unknown member "kTSKPinnedDomains""#]),
        ("a member twice", PinFixtures.file(PinFixtures.host(adding: #""pins": ["{A}", "{C}"]"#)), "pinSetInvalid",
         [#"the member "pins" appears twice in one object"#]),
        ("the version twice", #"{"version": 1, "version": 1, "hosts": []}"#, "pinSetInvalid", [#"the member "version" appears twice"#]),
        ("a host twice", PinFixtures.file(PinFixtures.validHost, #"{"host": "API.example.com.", "pins": ["{A}", "{C}"]}"#), "pinSetInvalid",
         ["api.example.com is listed twice"]),
        ("a host without a name", PinFixtures.file(#"{"pins": ["{A}", "{B}"]}"#), "pinSetInvalid", [#"hosts[0] has no "host""#]),
        ("a date without a time", PinFixtures.file(PinFixtures.host(adding: #""expires": "2027-06-01""#)), "pinSetInvalid",
         [#"hosts[0] (api.example.com): expires "2027-06-01" is not a date like 2027-06-01T00:00:00Z"#]),
        ("a date with an offset", PinFixtures.file(PinFixtures.host(adding: #""expires": "2027-06-01T00:00:00+01:00""#)), "pinSetInvalid",
         [#"expires "2027-06-01T00:00:00+01:00" is not a date"#]),
        ("a date with a fraction", PinFixtures.file(PinFixtures.host(adding: #""expires": "2027-06-01T00:00:00.5Z""#)), "pinSetInvalid",
         ["is not a date"]),
        ("February 30", PinFixtures.file(PinFixtures.host(adding: #""expires": "2027-02-30T00:00:00Z""#)), "pinSetInvalid",
         [#"expires "2027-02-30T00:00:00Z" is not a date"#]),
        ("a date as a number", PinFixtures.file(PinFixtures.host(adding: #""expires": 1811808000"#)), "pinSetInvalid",
         [#""expires" must be a string or null, not a number"#]),
        ("a flag as a string", PinFixtures.file(PinFixtures.host(adding: #""includeSubdomains": "yes""#)), "pinSetInvalid",
         [#""includeSubdomains" must be true or false, not a string"#]),
        ("not JSON", "pins: [A, B]", "malformed", ["not valid JSON"]),
        ("an empty file", "", "malformed", ["not valid JSON", "unexpected end of text"]),
        ("text after the JSON", PinFixtures.file(PinFixtures.validHost) + " {}", "malformed", ["not valid JSON", "unexpected text after the value"]),
        ("version 2", #"{"version": 2, "hosts": []}"#, "unsupported", ["pin set version 2", "reads version 1"]),
        ("the version as a string", #"{"version": "1", "hosts": []}"#, "pinSetInvalid", [#""version" must be the integer 1, not a string"#]),
        ("version 1.0", #"{"version": 1.0, "hosts": []}"#, "pinSetInvalid", [#""version" must be the integer 1"#]),
        ("no version", #"{"hosts": []}"#, "pinSetInvalid", [#"the pin set has no "version""#]),
        ("hosts not an array", #"{"version": 1, "hosts": {}}"#, "pinSetInvalid", [#""hosts" must be an array, not an object"#]),
        ("not an object", "[]", "pinSetInvalid", ["the pin set must be a JSON object, not an array"]),
        ("a wildcard host", PinFixtures.file(#"{"host": "*.example.com", "pins": ["{A}", "{B}"]}"#), "pinSetInvalid",
         [#""*.example.com" is not a valid host name"#, "includeSubdomains"]),
        ("a host with a space", PinFixtures.file(#"{"host": "exa mple.com", "pins": ["{A}", "{B}"]}"#), "pinSetInvalid",
         [#""exa mple.com" is not a valid host name"#]),
        ("a Unicode host", PinFixtures.file(#"{"host": "bücher.example", "pins": ["{A}", "{B}"]}"#), "pinSetInvalid",
         ["is not a valid host name", "A-label"]),
        ("a top-level name with its subdomains", PinFixtures.file(#"{"host": "com", "pins": ["{A}", "{B}"], "includeSubdomains": true}"#),
         "pinSetInvalid", ["com: includeSubdomains on a top-level name"]),
        ("a report URI that is not HTTP", PinFixtures.file(PinFixtures.host(adding: #""reportURIs": ["mailto:pins@example.com"]"#)),
         "pinSetInvalid", [#"the report URI "mailto:pins@example.com" is not an https:// or http:// URL"#]),
    ]

    @Test("pin files that are refused, each with its code and a message naming the file and why", arguments: PinSetTests.refusals)
    func refused(label: String, text: String, code: SignetErrorCode<X509Error>, fragments: [String]) throws {
        let error = try thrown(X509Error.self) { try PinSet.decode(Array(PinFixtures.substitute(text).utf8), source: "pins.json") }
        expectError(error, is: code, mentioning: ["pins.json"] + fragments.map(PinFixtures.substitute))
        #expect(error.category == .malformedInput, "\(label): \(error)")
        #expect(!error.description.contains("--"), "\(label): a message names a flag: \(error)")
    }

    @Test("a file over 1 MiB is refused before it is parsed; a missing file is an I/O error")
    func oversizedAndMissing() throws {
        let big = [UInt8](repeating: 0x20, count: PinSet.maximumFileSize + 1)
        expectError(try thrown(X509Error.self) { try PinSet.decode(big, source: "big.json") }, is: "malformed", mentioning: ["big.json", "larger than 1 MiB"])
        let folder = try TemporaryFolder()
        let path = try folder.write("big.json", big)
        expectError(try thrown(X509Error.self) { try PinSet.load(path: path) }, is: "malformed", mentioning: [path, "larger than 1 MiB"])

        var exact = Array(#"{"version": 1, "hosts": []}"#.utf8)
        exact += [UInt8](repeating: 0x20, count: PinSet.maximumFileSize - exact.count)
        #expect(try PinSet.decode(exact, source: "exact.json").hosts.isEmpty)

        let missing = folder.file("absent.json")
        let error = try thrown(X509Error.self) { try PinSet.load(path: missing) }
        expectError(error, is: "io", mentioning: [missing, "no such file"])
    }

    @Test("a pin set made in code is checked like a file, naming its source")
    func checkedInCode() throws {
        let a = try PinFixtures.newPin(), b = try PinFixtures.newPin()
        let one = try thrown(X509Error.self) { try PinSet(hosts: [HostPins(host: "api.example.com", pins: [a])]) }
        expectError(one, is: "pinSetInvalid", mentioning: ["the pin set", "api.example.com: only one pin"])
        let twice = try thrown(X509Error.self) {
            try PinSet(hosts: [HostPins(host: "a.example", pins: [a, b]), HostPins(host: "A.example.", pins: [b, a])], source: "config")
        }
        expectError(twice, is: "pinSetInvalid", mentioning: ["config", "a.example is listed twice"])
        let farFuture = try thrown(X509Error.self) {
            try PinSet(hosts: [HostPins(host: "a.example", pins: [a, b], expires: Date(timeIntervalSince1970: 1e15))])
        }
        expectError(farFuture, is: "pinSetInvalid", mentioning: ["a.example: expires lies outside the years 1 to 9999"])
        let ip = try thrown(X509Error.self) { try PinSet(hosts: [HostPins(host: "10.0.0.1", pins: [a, b], includeSubdomains: true)]) }
        expectError(ip, is: "pinSetInvalid", mentioning: ["includeSubdomains on an IP address"])
        #expect(try PinSet(hosts: [HostPins(host: "10.0.0.1", pins: [a, b])]).policy(for: "10.0.0.1") != nil)
    }

    @Test("encoded() writes the documented layout, and decoding it gives the same pin set and bytes")
    func roundTrip() throws {
        let pins = try (0..<5).map { _ in try PinFixtures.newPin() }
        let set = try PinSet(hosts: [
            HostPins(
                host: "API.example.com", pins: [pins[0], pins[1]], expires: PinFixtures.june2027.addingTimeInterval(0.75), reportOnly: true,
                reportURIs: ["https://reports.example.com/a", "http://reports.example.com/b?q=\\"]),
            HostPins(host: "example.org", pins: [pins[2], pins[3], pins[4]], includeSubdomains: true),
        ])
        #expect(set.hosts[0].host == "api.example.com")
        #expect(set.hosts[0].expires == PinFixtures.june2027, "expiry dates are kept to the second")

        let bytes = set.encoded()
        let decoded = try PinSet.decode(bytes, source: "round-trip.json")
        #expect(decoded == set)
        #expect(decoded.encoded() == bytes)

        let text = String(decoding: bytes, as: UTF8.self)
        let expectedStart = """
            {
              "version": 1,
              "hosts": [
                {
                  "host": "api.example.com",
                  "pins": [
                    "\(pins[0])",
                    "\(pins[1])"
                  ],
                  "includeSubdomains": false,
                  "expires": "2027-06-01T00:00:00Z",
                  "reportOnly": true,
                  "reportURIs": [
                    "https://reports.example.com/a",
                    "http://reports.example.com/b?q=\\\\"
                  ]
                },
            """
        #expect(text.hasPrefix(expectedStart), "\(text)")
        #expect(text.hasSuffix("  ]\n}\n"))
        #expect(!text.contains(#""expires": null"#), "no expiry is written by leaving the member out")
        // Another JSON parser reads it too.
        let object = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        #expect((object["hosts"] as? [Any])?.count == 2)

        let empty = try PinSet(hosts: [])
        #expect(String(decoding: empty.encoded(), as: UTF8.self) == "{\n  \"version\": 1,\n  \"hosts\": []\n}\n")
        #expect(try PinSet.decode(empty.encoded(), source: "empty.json") == empty)
    }

    @Test("a pin set whose every pin for a host is in the current chain has no backup pin and is refused")
    func backupPins() throws {
        let leaf = try PinFixtures.newPin(), intermediate = try PinFixtures.newPin()
        let root = try PinFixtures.newPin(), backup = try PinFixtures.newPin()
        let noBackup = try PinSet(hosts: [HostPins(host: "example.com", pins: [leaf, intermediate], includeSubdomains: true)])
        let error = try thrown(X509Error.self) {
            try noBackup.requireBackupPins(host: "api.example.com", chain: [leaf, intermediate, root], source: "pins.json")
        }
        expectError(error, is: "pinSetInvalid", mentioning: ["pins.json", "example.com", "no backup pin", leaf.description, intermediate.description])
        #expect(!error.description.contains("--"))

        let withBackup = try PinSet(hosts: [HostPins(host: "example.com", pins: [intermediate, backup])])
        try withBackup.requireBackupPins(host: "example.com", chain: [leaf, intermediate, root])
        try noBackup.requireBackupPins(host: "example.org", chain: [leaf, intermediate])
        try noBackup.requireBackupPins(host: "example.com", chain: [leaf])
    }
}
