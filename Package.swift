// swift-tools-version: 6.2
// BirthdayQuest server. Dependencies point one way, down to the C shims (the full graph and
// why is in docs/architecture.md): Domain and JSON at the bottom, Views and Protocol on them;
// EventLog on SQLite on CSQLite3, UV on CLibUV and POSIXSupport, POSIXSupport on CGlibcMalloc
// alone; Server on all of those; Client on JSON, Protocol and POSIXSupport (beside Server, not
// on it); Benchmarks (`bq bench`) on Client and the wrappers; the bq executable on the layers
// above the C shims and SQLite (docs/architecture.md lists which).
// Linux only: the system wrappers (UV, SQLite's test VFS, POSIXSupport) use Glibc.
import PackageDescription

let strict: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny")]
// Every library and executable but the system wrappers (UV, SQLite, POSIXSupport) is compiled
// with strict memory safety: an unsafe pointer, an implicit pointer conversion or an unsafe API
// anywhere else is a warning, and the build has none. Unsafe code lives in the wrappers alone.
// (The test targets are not checked: they reach sockets and files through their own helpers.)
let safe: [SwiftSetting] = strict + [.strictMemorySafety()]

let package = Package(
    name: "BirthdayQuest",
    products: [
        .executable(name: "bq", targets: ["bq"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.0.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
    ],
    targets: [
        // C shims: the only way into libsqlite3 and libuv.
        .systemLibrary(name: "CSQLite3", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CLibUV", pkgConfig: "libuv", providers: [.apt(["libuv1-dev"])]),
        // glibc's malloc.h (`malloc_trim`), which the Glibc module leaves out.
        .systemLibrary(name: "CGlibcMalloc"),

        // Pure layers: no I/O, no clock, no randomness.
        .target(name: "JSON", swiftSettings: safe),
        .target(name: "Domain", swiftSettings: safe),
        .target(name: "Views", dependencies: ["Domain", "JSON"], swiftSettings: safe),
        // Protocol hashes views (`ViewDigest`) with swift-crypto's SHA-256: computation, no I/O.
        .target(name: "Protocol", dependencies: ["Domain", "JSON", .product(name: "Crypto", package: "swift-crypto")],
                swiftSettings: safe),

        // I/O wrappers.
        // The only code that calls `sqlite3_*`; the event log above it is memory-safe Swift.
        .target(name: "SQLite", dependencies: ["CSQLite3"], swiftSettings: strict),
        .target(name: "EventLog", dependencies: ["SQLite", "CSQLite3"], swiftSettings: safe),
        // Plain POSIX, no libuv: addresses and the resolver, the clients' blocking socket, the
        // terminal's raw input, signal masks, the open-file limit, files written for their owner.
        .target(name: "POSIXSupport", dependencies: ["CGlibcMalloc"], swiftSettings: strict),
        .target(name: "UV", dependencies: ["CLibUV", "POSIXSupport"], swiftSettings: strict),

        // The product.
        .target(name: "Server", dependencies: [
            "Domain", "JSON", "Views", "Protocol", "EventLog", "UV", "POSIXSupport",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Crypto", package: "swift-crypto"),
        ], swiftSettings: safe),
        .target(name: "Client", dependencies: ["JSON", "Protocol", "POSIXSupport"], swiftSettings: safe),
        // `bq bench`: load over real TCP, the baselines it is compared with, the log alone.
        .target(name: "Benchmarks", dependencies: [
            "Client", "EventLog", "UV", "POSIXSupport", "JSON", "Protocol",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Histogram", package: "hdrhistogram-swift"),
        ], swiftSettings: safe),
        .executableTarget(name: "bq", dependencies: [
            "Server", "Client", "Benchmarks", "EventLog", "UV", "POSIXSupport", "Views", "Domain", "JSON",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ], swiftSettings: safe),
        // Deterministic randomness for property tests and the crash child: a seed replays a history.
        .target(name: "SeededRandom", swiftSettings: safe),
        // A child process for the event log's crash tests: appends, acknowledges, gets killed.
        .executableTarget(name: "eventlog-crash-child", dependencies: ["EventLog", "SQLite", "SeededRandom"], swiftSettings: safe),

        .testTarget(name: "JSONTests", dependencies: ["JSON", "SeededRandom"], swiftSettings: strict),
        .testTarget(name: "DomainTests", dependencies: ["Domain", "Views", "JSON", "SeededRandom"], swiftSettings: strict),
        .testTarget(name: "ProtocolTests", dependencies: ["Protocol", "JSON", "Domain", "SeededRandom"], swiftSettings: strict),
        .testTarget(name: "EventLogTests", dependencies: ["EventLog", "SQLite", "SeededRandom"], swiftSettings: strict),
        .testTarget(name: "UVTests", dependencies: ["UV", "POSIXSupport"], swiftSettings: strict),
        .testTarget(name: "ServerTests", dependencies: ["Server", "Client", "Views", "Domain", "JSON", "Protocol", "EventLog", "SQLite", "UV", "POSIXSupport", "SeededRandom"], swiftSettings: strict),
        .testTarget(name: "CLITests", dependencies: ["Client", "EventLog", "JSON", "Protocol", "UV", "POSIXSupport"], swiftSettings: strict),
    ],
    swiftLanguageModes: [.v6]
)
