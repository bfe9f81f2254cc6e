// swift-tools-version: 6.1
// Signet's benchmarks: their own package (the shape swift-nio and hummingbird use), so the
// root `swift build` builds no benchmark code.
//
//   swift package --package-path Benchmarks benchmark                       # in-process figures
//   swift package --package-path Benchmarks benchmark thresholds check --path Benchmarks/Thresholds/6.3  # fail on a p90 regression
//   swift build -c release --package-path Benchmarks --product signet-bench # the driver Scripts/bench runs
import PackageDescription

let package = Package(
    name: "SignetBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Signet", path: ".."),
        // MallocInterposer only: package-benchmark's default RuntimeInterposer trait needs a
        // package this machine's mirror does not have.
        .package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    ],
    targets: [
        // The system's SQLite, for the vault's plain-SQLite baseline.
        .systemLibrary(name: "CSQLiteBench", path: "Sources/CSQLiteBench"),
        // Scripts/bench's driver (`signet-bench run`: every section, its peer commands and the
        // targets of Targets/<Swift version>.json; Driver/) and its in-process helpers: sign/verify
        // ops/s (vs `openssl speed`), vault vs plain SQLite, the Hummingbird server that wrk loads,
        // TLS handshakes and chain validation.
        .executableTarget(
            name: "signet-bench",
            dependencies: [
                "CSQLiteBench",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SignetCore", package: "Signet"),
                .product(name: "SignetVault", package: "Signet"),
                .product(name: "SignetHTTP", package: "Signet"),
                .product(name: "SignetHummingbird", package: "Signet"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdAuth", package: "hummingbird-auth"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "SignetX509", package: "Signet"),
                .product(name: "SignetTLS", package: "Signet"),
                .product(name: "SignetPKCS11", package: "Signet"),
                .product(name: "SignetServer", package: "Signet"),
                .product(name: "SignetAPI", package: "Signet"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            path: "Sources/signet-bench"
        ),
        // In-process measurements with p90 thresholds (Thresholds/<Swift version>/, as swift-nio
        // keeps them), checked by `swift package benchmark thresholds check --path …`.
        .executableTarget(
            name: "SignetBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "SignetCore", package: "Signet"),
                .product(name: "SignetBundle", package: "Signet"),
                .product(name: "SignetHTTP", package: "Signet"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "Benchmarks/SignetBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
