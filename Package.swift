// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Signet",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "SignetCore", targets: ["SignetCore"]),
        .library(name: "SignetVault", targets: ["SignetVault"]),
        .library(name: "SignetBundle", targets: ["SignetBundle"]),
        .executable(name: "signet", targets: ["signet"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", exact: "4.5.2"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
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
        // The system's libsqlite3 (Debian: libsqlite3-dev), wrapped thinly by SignetVault.
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
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .executableTarget(
            name: "signet",
            dependencies: [
                "SignetCore",
                "SignetVault",
                "SignetBundle",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // In-process measurements for Scripts/bench: sign/verify ops/s, vault vs plain SQLite (not a product).
        .executableTarget(
            name: "signet-bench",
            dependencies: ["SignetCore", "SignetVault", "CSQLite"],
            path: "Benchmarks/SignetBench"
        ),
        .testTarget(
            name: "SignetCoreTests",
            dependencies: ["SignetCore"],
            resources: [.copy("Vectors")]
        ),
        .testTarget(
            name: "SignetVaultTests",
            dependencies: ["SignetVault"]
        ),
        .testTarget(
            name: "SignetBundleTests",
            dependencies: ["SignetBundle", "SignetCore"]
        ),
        // Drives the built `signet` binary against real openssl, ssh-keygen, sqlite3 and python3;
        // opens vaults the CLI wrote with the library to check them.
        .testTarget(
            name: "SignetCLITests",
            dependencies: ["signet", "SignetCore", "SignetVault", "SignetBundle"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
