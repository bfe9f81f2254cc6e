// swift-tools-version: 6.1
import PackageDescription

/// A product of another package, by its module's name.
func external(_ module: String) -> Target.Dependency {
    let packages = [
        "ArgumentParser": "swift-argument-parser",
        "AsyncHTTPClient": "async-http-client",
        "AsyncKit": "async-kit",
        "CoreMetrics": "swift-metrics",
        "Crypto": "swift-crypto",
        "CryptoExtras": "swift-crypto",
        "HTTPTypes": "swift-http-types",
        "Hummingbird": "hummingbird",
        "HummingbirdAuth": "hummingbird-auth",
        "HummingbirdCore": "hummingbird",
        "HummingbirdTLS": "hummingbird",
        "Logging": "swift-log",
        "NIOCore": "swift-nio",
        "NIOEmbedded": "swift-nio",
        "NIOHTTP1": "swift-nio",
        "NIOHTTPTypes": "swift-nio-extras",
        "NIOPosix": "swift-nio",
        "NIOSSL": "swift-nio-ssl",
        "PostgresKit": "postgres-kit",
        "Prometheus": "swift-prometheus",
        "RawStructuredFieldValues": "swift-http-structured-headers",
        "SQLKit": "sql-kit",
        "ServiceLifecycle": "swift-service-lifecycle",
        "SwiftASN1": "swift-asn1",
        "X509": "swift-certificates",
    ]
    return .product(name: module, package: packages[module]!)
}

let package = Package(
    name: "Signet",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "SignetCore", targets: ["SignetCore"]),
        .library(name: "SignetVault", targets: ["SignetVault"]),
        .library(name: "SignetBundle", targets: ["SignetBundle"]),
        .library(name: "SignetHTTP", targets: ["SignetHTTP"]),
        .library(name: "SignetHummingbird", targets: ["SignetHummingbird"]),
        .library(name: "SignetHTTPClient", targets: ["SignetHTTPClient"]),
        .library(name: "SignetX509", targets: ["SignetX509"]),
        .library(name: "SignetTLS", targets: ["SignetTLS"]),
        .library(name: "SignetAttestation", targets: ["SignetAttestation"]),
        .library(name: "SignetWebAuthn", targets: ["SignetWebAuthn"]),
        .library(name: "SignetAge", targets: ["SignetAge"]),
        .library(name: "SignetPKCS11", targets: ["SignetPKCS11"]),
        .library(name: "SignetAPI", targets: ["SignetAPI"]),
        .library(name: "SignetServer", targets: ["SignetServer"]),
        .library(name: "SignetClient", targets: ["SignetClient"]),
        .executable(name: "signet", targets: ["signet"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-http-structured-headers.git", from: "1.7.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/attaswift/BigInt.git", from: "6.0.1"),
        .package(url: "https://github.com/vapor/async-kit.git", from: "1.22.0"),
        .package(url: "https://github.com/vapor/sql-kit.git", from: "3.36.0"),
        .package(url: "https://github.com/vapor/postgres-kit.git", from: "2.17.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
    ],
    targets: [
        .target(
            name: "SignetCore",
            dependencies: [
                external("Crypto"), external("CryptoExtras"), external("SwiftASN1"),
            ]
        ),
        // The system's libsqlite3 (Debian: libsqlite3-dev), the one SQLite in the binary: wrapped
        // thinly by SignetVault (SQLiteConnection), which the server's SQLite driver runs on too.
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite"),
        .target(
            name: "SignetVault",
            dependencies: [
                "SignetCore", "CSQLite", external("Crypto"),
            ]
        ),
        // The system's zlib (Debian: zlib1g-dev) for CRC-32, and extended attributes.
        .systemLibrary(name: "CBundleSystem", path: "Sources/CBundleSystem"),
        .target(
            name: "SignetBundle",
            dependencies: [
                "SignetCore", "CBundleSystem",
            ]
        ),
        // RFC 9421 message signatures and RFC 9530 digests over swift-http-types: no server, no NIO.
        .target(
            name: "SignetHTTP",
            dependencies: [
                "SignetCore", external("HTTPTypes"), external("RawStructuredFieldValues"), external("Crypto"),
            ]
        ),
        // The Hummingbird 2 authenticator middleware (hummingbird-auth's shape).
        .target(
            name: "SignetHummingbird",
            dependencies: [
                "SignetHTTP", external("Hummingbird"), external("HummingbirdAuth"), external("HTTPTypes"),
                external("NIOCore"),
            ]
        ),
        // Signing requests sent with AsyncHTTPClient.
        .target(
            name: "SignetHTTPClient",
            dependencies: [
                "SignetHTTP", external("AsyncHTTPClient"), external("HTTPTypes"), external("NIOCore"),
                external("NIOHTTP1"),
            ]
        ),
        // The system's libcrypto (Debian: libssl-dev), for what swift-crypto does not have: the
        // two legacy PKCS#12 ciphers (3DES and RC2) and the raw RSA public operation under
        // age's labelled OAEP; Linux only (Apple: CommonCrypto and Security).
        .systemLibrary(name: "CSystemCrypto", path: "Sources/CSystemCrypto"),
        // Certificates, CSRs, a small CA, PKCS#12 and SPKI pin sets, on swift-certificates:
        // no networking.
        .target(
            name: "SignetX509",
            dependencies: [
                "SignetCore",
                .target(name: "CSystemCrypto", condition: .when(platforms: [.linux])),
                external("X509"), external("SwiftASN1"), external("Crypto"),
            ]
        ),
        // age v1 encryption (age-encryption.org/v1): streaming; X25519, scrypt, ssh-rsa and
        // ssh-ed25519 recipients; armor; the seed's legacy RSA scheme, read-only.
        .target(
            name: "SignetAge",
            dependencies: [
                "SignetCore",
                .target(name: "CSystemCrypto", condition: .when(platforms: [.linux])),
                .product(name: "BigInt", package: "BigInt"),
                external("Crypto"), external("CryptoExtras"),
            ]
        ),
        // The PKCS#11 header (Debian: libp11-kit-dev) and dlopen, for SignetPKCS11.
        .systemLibrary(
            name: "CPKCS11", path: "Sources/CPKCS11",
            providers: [.apt(["libp11-kit-dev"]), .brew(["p11-kit"])]),
        // Keys on PKCS#11 tokens (YubiKeys, TPMs, HSMs, SoftHSM2) as Signers, by RFC 7512 URIs;
        // the module is loaded at run time.
        .target(
            name: "SignetPKCS11",
            dependencies: [
                "SignetCore", "CPKCS11", external("Crypto"),
            ]
        ),
        // TLS over SwiftNIO SSL that enforces chain, hostname and pins, and a small HTTPS
        // client on it (AsyncHTTPClient has no hook for a verification callback).
        .target(
            name: "SignetTLS",
            dependencies: [
                "SignetX509", "SignetCore", external("X509"), external("NIOSSL"), external("NIOCore"),
                external("NIOPosix"), external("NIOHTTP1"), external("HTTPTypes"),
            ]
        ),
        // Device attestation: App Attest attestations and assertions, Android key attestation
        // chains; offline, with Apple's and Google's roots as data.
        .target(
            name: "SignetAttestation",
            dependencies: [
                "SignetCore", "SignetX509", external("X509"), external("SwiftASN1"), external("Crypto"),
            ]
        ),
        // Sign-in factors beyond the password: one-time codes (TOTP), passkeys (WebAuthn) as built.
        .target(name: "SignetWebAuthn", dependencies: ["SignetCore", external("Crypto")]),
        // The wire contract server and clients share: bodies, problem codes, operations.
        .target(
            name: "SignetAPI",
            dependencies: [external("HTTPTypes")]
        ),
        // The backend: apps allow-list, signed-request API, users and sessions, admin API, on
        // Hummingbird 2 with SQLite (embedded; the system's, through a small sql-kit driver of
        // ours over SignetVault's SQLiteConnection) or PostgreSQL (many nodes) through sql-kit.
        .target(
            name: "SignetServer",
            dependencies: [
                "SignetAPI", "SignetCore", "SignetBundle", "SignetHTTP", "SignetHummingbird", "SignetVault",
                "SignetX509", "SignetAttestation", external("CoreMetrics"), external("Prometheus"),
                external("Hummingbird"), external("HummingbirdTLS"), external("HummingbirdCore"),
                external("HummingbirdAuth"), external("HTTPTypes"), external("NIOCore"), external("NIOPosix"),
                external("NIOHTTP1"), external("NIOHTTPTypes"), external("NIOSSL"), external("X509"),
                external("ServiceLifecycle"), external("Logging"), external("AsyncKit"), external("SQLKit"),
                external("PostgresKit"), external("Crypto"),
            ]
        ),
        // What an app links: pinned TLS, signed requests, verified responses, the session in
        // the vault, the sign-in state as a stream. Knows the API, not the server's internals.
        .target(
            name: "SignetClient",
            dependencies: [
                "SignetAPI", "SignetCore", "SignetBundle", "SignetHTTP", "SignetTLS", "SignetX509", "SignetVault",
                external("HTTPTypes"),
            ]
        ),
        .executableTarget(
            name: "signet",
            dependencies: [
                "SignetAPI", "SignetServer", "SignetClient", "SignetX509", "SignetTLS", "SignetCore", "SignetVault",
                "SignetBundle", "SignetHTTP", "SignetHTTPClient", "SignetAge", "SignetPKCS11", "SignetAttestation",
                external("ArgumentParser"), external("Crypto"), external("AsyncHTTPClient"), external("HTTPTypes"),
                external("Logging"), external("NIOCore"), external("ServiceLifecycle"), external("X509"),
            ]
        ),
        // Coverage-guided fuzz targets (libFuzzer) for every parser of untrusted bytes; not a
        // product. `signet-fuzz` runs them (Scripts/fuzz builds it with -DSIGNET_FUZZING and
        // --sanitize=fuzzer) or replays files through them; Fuzz/README.md has the workflow.
        .target(
            name: "SignetFuzzTargets",
            dependencies: [
                "SignetCore", "SignetBundle", "SignetHTTP", "SignetVault", "SignetX509", "SignetAge", "SignetPKCS11",
                "SignetServer", "SignetAttestation", "SignetWebAuthn", external("HTTPTypes"), external("X509"),
            ]
        ),
        .executableTarget(
            name: "signet-fuzz",
            dependencies: ["SignetFuzzTargets"]
        ),
        // Test support shared by every test target: temporary folders, running processes, the
        // built `signet` binary and python3, requiring errors of a type, vector files, clocks.
        // Generic on purpose: of Signet it knows only SignetCore's error protocol.
        .target(
            name: "SignetTestSupport",
            dependencies: ["SignetCore"],
            path: "Tests/SignetTestSupport"
        ),
        .testTarget(
            name: "SignetCoreTests",
            dependencies: ["SignetCore", "SignetTestSupport"],
            resources: [.copy("Vectors")]
        ),
        // Against SoftHSM2 tokens made for the run (Debian: softhsm2, opensc for pkcs11-tool).
        .testTarget(
            name: "SignetPKCS11Tests",
            dependencies: ["SignetPKCS11", "SignetCore", "SignetTestSupport", "CPKCS11"]
        ),
        .testTarget(
            name: "SignetVaultTests",
            dependencies: ["SignetVault", "SignetCore", "SignetTestSupport"]
        ),
        .testTarget(
            name: "SignetBundleTests",
            dependencies: ["SignetBundle", "SignetCore", "SignetTestSupport"]
        ),
        .testTarget(
            name: "SignetHTTPTests",
            dependencies: ["SignetHTTP", "SignetCore", "SignetTestSupport", external("HTTPTypes"), external("RawStructuredFieldValues")],
            resources: [.copy("Vectors")]
        ),
        // A real Hummingbird server on loopback, spoken to with AsyncHTTPClient and the CLI.
        .testTarget(
            name: "SignetHummingbirdTests",
            dependencies: [
                "signet", "SignetHummingbird", "SignetHTTPClient", "SignetHTTP", "SignetCore", "SignetTestSupport",
                external("HTTPTypes"), external("Hummingbird"), external("HummingbirdAuth"),
                external("AsyncHTTPClient"), external("NIOCore"), external("NIOEmbedded"), external("NIOHTTP1"),
                external("ServiceLifecycle"), external("Logging"),
            ]
        ),
        // Drives the built `signet` binary against real openssl, ssh-keygen, sqlite3 and python3;
        // opens vaults the CLI wrote with the library to check them.
        .testTarget(
            name: "SignetCLITests",
            dependencies: ["signet", "SignetCore", "SignetVault", "SignetBundle", "SignetTestSupport"]
        ),
        // Against the age CLI and pyrage both ways, and hostile files.
        .testTarget(
            name: "SignetAgeTests",
            dependencies: [
                "SignetAge", "SignetCore", "SignetTestSupport", external("Crypto"), external("CryptoExtras"),
            ],
            resources: [.copy("Vectors")]
        ),
        // A test CA made with SignetX509, for the X.509, TLS and CLI tests.
        .target(
            name: "SignetX509TestSupport",
            dependencies: ["SignetX509", "SignetCore", "SignetTestSupport", external("X509")],
            path: "Tests/SignetX509TestSupport"
        ),
        .testTarget(
            name: "SignetX509Tests",
            dependencies: [
                "SignetX509", "SignetCore", "SignetTestSupport", "SignetX509TestSupport", external("X509"),
                external("SwiftASN1"), external("Crypto"),
            ],
            resources: [.copy("Vectors")]
        ),
        // Synthetic attestations and assertions over a test root, for the attestation and server tests.
        .target(
            name: "SignetAttestationTestSupport",
            dependencies: [
                "SignetAttestation", "SignetCore", "SignetTestSupport", external("X509"), external("SwiftASN1"),
                external("Crypto"),
            ],
            path: "Tests/SignetAttestationTestSupport"
        ),
        .testTarget(
            name: "SignetAttestationTests",
            dependencies: [
                "SignetAttestation", "SignetAttestationTestSupport", "SignetCore", "SignetX509", "SignetTestSupport",
                external("X509"), external("SwiftASN1"), external("Crypto"),
            ],
            resources: [.copy("Vectors")]
        ),
        // RFC 6238's vectors, pyotp both ways, otpauth:// URIs and base32.
        .testTarget(
            name: "SignetWebAuthnTests", dependencies: ["SignetWebAuthn", "SignetCore", "SignetTestSupport"], resources: [.copy("Vectors")]
        ),
        // Real TLS servers on loopback (SwiftNIO SSL in-process, `openssl s_server`) and the
        // pin-enforcing client and CLI against them.
        .testTarget(
            name: "SignetTLSTests",
            dependencies: [
                "signet", "SignetTLS", "SignetX509", "SignetCore", "SignetTestSupport", "SignetX509TestSupport",
                external("HTTPTypes"), external("X509"), external("NIOSSL"), external("NIOCore"),
                external("NIOPosix"), external("NIOHTTP1"),
            ]
        ),
        // The server in-process and as `signet serve` processes, over TLS with a pinned client; on
        // SQLite and on a real PostgreSQL; attacks, hostile bodies, crashes, the python client.
        .testTarget(
            name: "SignetServerTests",
            dependencies: [
                "signet", "SignetAPI", "SignetServer", "SignetClient", "SignetBundle", "SignetVault", "SignetTLS",
                "SignetX509", "SignetHTTP", "SignetCore", "SignetTestSupport", "SignetAttestation",
                "SignetAttestationTestSupport", external("HTTPTypes"), external("ServiceLifecycle"),
                external("Logging"),
                // The loopback TLS proxy of the attack tests (TLSProxy.swift).
                external("Hummingbird"), external("HummingbirdCore"), external("HummingbirdTLS"),
                external("NIOCore"), external("NIOEmbedded"), external("NIOSSL"), external("X509"),
                external("SwiftASN1"), external("Crypto"),
                // The SQLite driver's tests (ServerSQLiteDriverTests.swift) speak sql-kit.
                external("SQLKit"),
            ],
            exclude: ["Python"]
        ),
        // Replays Fuzz/corpus/<target>/ and Fuzz/regressions/<target>/ through every fuzz target.
        .testTarget(
            name: "SignetFuzzTests",
            dependencies: ["SignetFuzzTargets"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
