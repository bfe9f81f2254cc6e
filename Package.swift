// swift-tools-version: 6.1
import PackageDescription

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
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        ),
        // The system's libsqlite3 (Debian: libsqlite3-dev), the one SQLite in the binary: wrapped
        // thinly by SignetVault (SQLiteConnection), which the server's SQLite driver runs on too.
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite"),
        .target(
            name: "SignetVault",
            dependencies: [
                "SignetCore",
                "CSQLite",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // The system's zlib (Debian: zlib1g-dev) for CRC-32, and extended attributes.
        .systemLibrary(name: "CBundleSystem", path: "Sources/CBundleSystem"),
        .target(
            name: "SignetBundle",
            dependencies: [
                "SignetCore",
                "CBundleSystem",
            ]
        ),
        // RFC 9421 message signatures and RFC 9530 digests over swift-http-types: no server, no NIO.
        .target(
            name: "SignetHTTP",
            dependencies: [
                "SignetCore",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "RawStructuredFieldValues", package: "swift-http-structured-headers"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // The Hummingbird 2 authenticator middleware (hummingbird-auth's shape).
        .target(
            name: "SignetHummingbird",
            dependencies: [
                "SignetHTTP",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdAuth", package: "hummingbird-auth"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        // Signing requests sent with AsyncHTTPClient.
        .target(
            name: "SignetHTTPClient",
            dependencies: [
                "SignetHTTP",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
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
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
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
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
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
                "SignetCore",
                "CPKCS11",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // TLS over SwiftNIO SSL that enforces chain, hostname and pins, and a small HTTPS
        // client on it (AsyncHTTPClient has no hook for a verification callback).
        .target(
            name: "SignetTLS",
            dependencies: [
                "SignetX509",
                "SignetCore",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        // Device attestation: App Attest attestations and assertions, Android key attestation
        // chains; offline, with Apple's and Google's roots as data.
        .target(
            name: "SignetAttestation",
            dependencies: [
                "SignetCore",
                "SignetX509",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // The wire contract server and clients share: bodies, problem codes, operations.
        .target(
            name: "SignetAPI",
            dependencies: [.product(name: "HTTPTypes", package: "swift-http-types")]
        ),
        // The backend: apps allow-list, signed-request API, users and sessions, admin API, on
        // Hummingbird 2 with SQLite (embedded; the system's, through a small sql-kit driver of
        // ours over SignetVault's SQLiteConnection) or PostgreSQL (many nodes) through sql-kit.
        .target(
            name: "SignetServer",
            dependencies: [
                "SignetAPI", "SignetCore", "SignetBundle", "SignetHTTP", "SignetHummingbird", "SignetVault", "SignetX509", "SignetAttestation",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdAuth", package: "hummingbird-auth"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncKit", package: "async-kit"),
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "PostgresKit", package: "postgres-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // What an app links: pinned TLS, signed requests, verified responses, the session in
        // the vault, the sign-in state as a stream. Knows the API, not the server's internals.
        .target(
            name: "SignetClient",
            dependencies: [
                "SignetAPI", "SignetCore", "SignetBundle", "SignetHTTP", "SignetTLS", "SignetX509", "SignetVault",
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .executableTarget(
            name: "signet",
            dependencies: [
                "SignetAPI", "SignetServer", "SignetClient",
                "SignetX509",
                "SignetTLS",
                "SignetCore",
                "SignetVault",
                "SignetBundle",
                "SignetHTTP",
                "SignetHTTPClient",
                "SignetAge",
                "SignetPKCS11",
                "SignetAttestation",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "X509", package: "swift-certificates"),
            ]
        ),
        // Coverage-guided fuzz targets (libFuzzer) for every parser of untrusted bytes; not a
        // product. `signet-fuzz` runs them (Scripts/fuzz builds it with -DSIGNET_FUZZING and
        // --sanitize=fuzzer) or replays files through them; Fuzz/README.md has the workflow.
        .target(
            name: "SignetFuzzTargets",
            dependencies: [
                "SignetCore", "SignetBundle", "SignetHTTP", "SignetVault", "SignetX509", "SignetAge", "SignetPKCS11", "SignetServer",
                "SignetAttestation",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "X509", package: "swift-certificates"),
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
            dependencies: ["SignetHTTP", "SignetCore", "SignetTestSupport", .product(name: "HTTPTypes", package: "swift-http-types"), .product(name: "RawStructuredFieldValues", package: "swift-http-structured-headers")],
            resources: [.copy("Vectors")]
        ),
        // A real Hummingbird server on loopback, spoken to with AsyncHTTPClient and the CLI.
        .testTarget(
            name: "SignetHummingbirdTests",
            dependencies: [
                "signet", "SignetHummingbird", "SignetHTTPClient", "SignetHTTP", "SignetCore", "SignetTestSupport",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdAuth", package: "hummingbird-auth"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
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
                "SignetAge", "SignetCore", "SignetTestSupport", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            resources: [.copy("Vectors")]
        ),
        // A test CA made with SignetX509, for the X.509, TLS and CLI tests.
        .target(
            name: "SignetX509TestSupport",
            dependencies: ["SignetX509", "SignetCore", "SignetTestSupport", .product(name: "X509", package: "swift-certificates")],
            path: "Tests/SignetX509TestSupport"
        ),
        .testTarget(
            name: "SignetX509Tests",
            dependencies: [
                "SignetX509", "SignetCore", "SignetTestSupport", "SignetX509TestSupport",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            resources: [.copy("Vectors")]
        ),
        // Synthetic attestations and assertions over a test root, for the attestation and server tests.
        .target(
            name: "SignetAttestationTestSupport",
            dependencies: [
                "SignetAttestation", "SignetCore", "SignetTestSupport", .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"), .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Tests/SignetAttestationTestSupport"
        ),
        .testTarget(
            name: "SignetAttestationTests",
            dependencies: [
                "SignetAttestation", "SignetAttestationTestSupport", "SignetCore", "SignetX509", "SignetTestSupport",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            resources: [.copy("Vectors")]
        ),
        // Real TLS servers on loopback (SwiftNIO SSL in-process, `openssl s_server`) and the
        // pin-enforcing client and CLI against them.
        .testTarget(
            name: "SignetTLSTests",
            dependencies: [
                "signet", "SignetTLS", "SignetX509", "SignetCore", "SignetTestSupport", "SignetX509TestSupport",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // The server in-process and as `signet serve` processes, over TLS with a pinned client; on
        // SQLite and on a real PostgreSQL; attacks, hostile bodies, crashes, the python client.
        .testTarget(
            name: "SignetServerTests",
            dependencies: [
                "signet", "SignetAPI", "SignetServer", "SignetClient", "SignetBundle", "SignetVault", "SignetTLS", "SignetX509", "SignetHTTP", "SignetCore",
                "SignetTestSupport", "SignetAttestation", "SignetAttestationTestSupport",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                // The loopback TLS proxy of the attack tests (TLSProxy.swift).
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"), .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
                // The SQLite driver's tests (ServerSQLiteDriverTests.swift) speak sql-kit.
                .product(name: "SQLKit", package: "sql-kit"),
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
