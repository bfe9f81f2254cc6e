// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Signet",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "SignetCore", targets: ["SignetCore"]),
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
        .executableTarget(
            name: "signet",
            dependencies: [
                "SignetCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // In-process sign/verify operations per second, for Scripts/bench (not a product).
        .executableTarget(
            name: "signet-bench",
            dependencies: ["SignetCore"],
            path: "Benchmarks/SignetBench"
        ),
        .testTarget(
            name: "SignetCoreTests",
            dependencies: ["SignetCore"],
            resources: [.copy("Vectors")]
        ),
        // Drives the built `signet` binary against real openssl and ssh-keygen.
        .testTarget(
            name: "SignetCLITests",
            dependencies: ["signet"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
