// swift-tools-version: 6.0
// AnonAuth: self-hosted anonymous-first authentication. No Swift package dependencies:
// Foundation, the toolchain's own modules and four Debian system libraries.
import PackageDescription

let swiftSettings: [SwiftSetting] = [
  .swiftLanguageMode(.v6),
  .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
  name: "AnonAuth",
  platforms: [.macOS(.v15), .iOS(.v16)],
  products: [
    .executable(name: "anonauthd", targets: ["anonauthd"]),
    .executable(name: "anonauth", targets: ["anonauth"]),
    .library(name: "AnonAuthClient", targets: ["AnonAuthClient"]),
  ],
  targets: [
    // System libraries (Debian -dev packages) and the C shim for macros and variadics.
    .systemLibrary(
      name: "COpenSSL", pkgConfig: "openssl",
      providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]),
    .systemLibrary(
      name: "CSQLite", pkgConfig: "sqlite3",
      providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),
    .systemLibrary(
      name: "CProtobufC", pkgConfig: "libprotobuf-c",
      providers: [.apt(["libprotobuf-c-dev"]), .brew(["protobuf-c"])]),
    // libxcrypt, for bcrypt hashes imported from Firebase (its library is in every Debian).
    .systemLibrary(
      name: "CCrypt", pkgConfig: "libxcrypt",
      providers: [.apt(["libcrypt-dev"]), .brew(["libxcrypt"])]),
    // dqlite, the replicated store's engine (with libraft and libuv, its dependencies).
    .systemLibrary(
      name: "CDqlite", pkgConfig: "dqlite",
      providers: [.apt(["libdqlite-dev"])]),
    // nghttp2, the HTTP/2 framing and HPACK engine under the gRPC transport; driven by
    // our event loop through its memory API (no threads, no sockets of its own).
    .systemLibrary(
      name: "CNghttp2", pkgConfig: "libnghttp2",
      providers: [.apt(["libnghttp2-dev"]), .brew(["nghttp2"])]),
    .target(name: "CShims", dependencies: ["COpenSSL"]),
    // `--version`'s release, commit and build date (the last two written by `make build`).
    .target(name: "CBuildInfo"),

    // The protobuf-c code generated from Protos/ by `make proto` (committed).
    .target(name: "AnonAuthProto", dependencies: ["CProtobufC"]),

    // Frames, messages, status: what travels on the wire.
    .target(
      name: "AnonAuthWire", dependencies: ["AnonAuthProto", "CProtobufC"],
      swiftSettings: swiftSettings),
    // Keys, certificates, tokens, random ids.
    .target(
      name: "AnonAuthCrypto", dependencies: ["COpenSSL", "CShims", "CCrypt"],
      swiftSettings: swiftSettings),
    // The epoll event loop and TLS connections, shared by server and client: bytes and
    // TLS, nothing of what the bytes mean (the frame codec is AnonAuthWire's).
    .target(
      name: "AnonAuthNet", dependencies: ["COpenSSL", "CShims"],
      swiftSettings: swiftSettings),
    // dqlite: the embedded node and a client of its wire protocol, for the replicated store;
    // the mutual TLS that carries both between machines (blocking OpenSSL, own threads).
    .target(
      name: "AnonAuthDqlite", dependencies: ["CDqlite", "COpenSSL", "CShims"],
      swiftSettings: swiftSettings),
    // SQLite: connections, migrations, the group-committing writer, readers, backup.
    // Knows SQL, not protobuf or accounts.
    .target(
      name: "AnonAuthStore", dependencies: ["CSQLite", "CShims", "AnonAuthDqlite"],
      swiftSettings: swiftSettings),
    // The service layer: handlers and workers. Knows accounts, not sockets.
    .target(
      name: "AnonAuthService", dependencies: ["AnonAuthWire", "AnonAuthCrypto", "AnonAuthStore", "CShims"],
      swiftSettings: swiftSettings),
    // The RPC server: listener, connections, router, ops HTTP, shutdown.
    .target(
      name: "AnonAuthServer",
      dependencies: [
        "AnonAuthNet", "AnonAuthService", "AnonAuthWire", "AnonAuthCrypto", "AnonAuthStore", "AnonAuthDqlite",
        "CShims", "CNghttp2",
      ],
      swiftSettings: swiftSettings),
    // The native client (anonauth/1 over the epoll loop and OpenSSL) and the gRPC one (h2
    // through libnghttp2's client session on the same loop): the CLI, its bench and the
    // integration tests use them. Linux only, like the daemon.
    .target(
      name: "AnonAuthRPCClient", dependencies: ["AnonAuthNet", "AnonAuthWire", "CNghttp2"],
      swiftSettings: swiftSettings),
    // The app library: Foundation (URLSession, Codable) over Firebase's JSON API and
    // nothing else, so it builds for iOS, macOS and Linux. `make check-client-graph`
    // proves it depends on no C target.
    .target(
      name: "AnonAuthClient",
      swiftSettings: swiftSettings),

    .executableTarget(
      name: "anonauthd", dependencies: ["AnonAuthServer", "AnonAuthCrypto", "CBuildInfo"],
      swiftSettings: swiftSettings),
    .executableTarget(
      name: "anonauth",
      dependencies: [
        "AnonAuthRPCClient", "AnonAuthWire", "AnonAuthCrypto", "AnonAuthNet", "CBuildInfo",
        // `anonauth bench admission-tables` drives the daemon's Admission in process, and
        // `admission-calls` the daemon's serving stack (`InProcessDaemon`).
        "AnonAuthService", "AnonAuthServer",
      ],
      swiftSettings: swiftSettings),

    // libFuzzer targets for every parser hostile bytes reach (`make fuzz`), and the
    // replay of their corpus in `make test`.
    .target(
      name: "AnonAuthFuzz",
      dependencies: [
        "AnonAuthWire", "AnonAuthCrypto", "AnonAuthNet", "AnonAuthService", "AnonAuthServer",
        "AnonAuthDqlite",
      ],
      swiftSettings: swiftSettings),
    .executableTarget(
      name: "anonauth-fuzz", dependencies: ["AnonAuthFuzz"],
      swiftSettings: swiftSettings),

    // What several test bundles share: the child-process launcher, the built binaries' paths,
    // the off-pool runner and the raw HTTP/1.1 test clients (plain, ops) with their framing.
    .target(
      name: "AnonAuthTestSupport", dependencies: ["CShims"], path: "Tests/AnonAuthTestSupport",
      swiftSettings: swiftSettings),
    // What the in-process harnesses of the service and server tests share: a store of the
    // daemon's schema in a temporary directory with the service's CPU pools.
    .target(
      name: "AnonAuthServiceTestSupport",
      dependencies: [
        "AnonAuthService", "AnonAuthStore", "AnonAuthCrypto", "AnonAuthWire", "AnonAuthTestSupport",
      ],
      path: "Tests/AnonAuthServiceTestSupport", swiftSettings: swiftSettings),
    .testTarget(
      name: "AnonAuthWireTests", dependencies: ["AnonAuthWire", "AnonAuthTestSupport"],
      swiftSettings: swiftSettings),
    .testTarget(
      name: "AnonAuthCryptoTests", dependencies: ["AnonAuthCrypto", "AnonAuthTestSupport"],
      swiftSettings: swiftSettings),
    .testTarget(
      name: "AnonAuthNetTests", dependencies: ["AnonAuthNet"],
      swiftSettings: swiftSettings),
    .testTarget(
      name: "AnonAuthDqliteTests", dependencies: ["AnonAuthDqlite", "AnonAuthCrypto", "CSQLite"],
      swiftSettings: swiftSettings),
    .testTarget(
      name: "AnonAuthStoreTests", dependencies: ["AnonAuthStore", "AnonAuthDqlite", "AnonAuthTestSupport"],
      swiftSettings: swiftSettings),
    .testTarget(
      name: "AnonAuthServiceTests",
      dependencies: [
        "AnonAuthService", "AnonAuthStore", "AnonAuthCrypto", "AnonAuthWire", "AnonAuthTestSupport",
        "AnonAuthServiceTestSupport",
      ],
      swiftSettings: swiftSettings),
    .testTarget(
      name: "AnonAuthServerTests",
      dependencies: [
        "AnonAuthServer", "AnonAuthNet", "AnonAuthService", "AnonAuthWire", "AnonAuthTestSupport",
        "AnonAuthServiceTestSupport", "AnonAuthStore", "AnonAuthCrypto",
      ],
      swiftSettings: swiftSettings),
    // The seed's flow with AnonAuthClient against a real daemon over HTTPS, run by
    // Tests/Interop/test_swift_client.py.
    .executableTarget(
      name: "anonauth-seed-flow", dependencies: ["AnonAuthClient"], path: "Tests/SeedFlow",
      swiftSettings: swiftSettings),
    // App code written to FirebaseAuth 12's public API, built against AnonAuthClient with
    // only its import changed (Swift 6 mode, no other setting, as an app's target), and
    // the program that runs it against a real daemon for Tests/Interop/test_firebase_app_code.py.
    .target(
      name: "FirebaseAppCode", dependencies: ["AnonAuthClient"], path: "Tests/FirebaseAppCode",
      swiftSettings: [.swiftLanguageMode(.v6)]),
    .executableTarget(
      name: "anonauth-firebase-app", dependencies: ["FirebaseAppCode", "AnonAuthClient"],
      path: "Tests/FirebaseAppRunner", swiftSettings: swiftSettings),
    // The Foundation-only client against a URLProtocol stub: no daemon, no C.
    .testTarget(
      name: "AnonAuthClientTests", dependencies: ["AnonAuthClient"],
      swiftSettings: swiftSettings),
    // The CLI's argument rules and outputs, without a daemon (`@testable import anonauth`).
    .testTarget(
      name: "AnonAuthCLITests", dependencies: ["anonauth", "AnonAuthWire", "AnonAuthRPCClient"],
      swiftSettings: swiftSettings),
    .testTarget(
      name: "AnonAuthFuzzTests", dependencies: ["AnonAuthFuzz"],
      swiftSettings: swiftSettings),
    .testTarget(
      name: "AnonAuthIntegrationTests",
      dependencies: [
        "AnonAuthRPCClient", "AnonAuthWire", "AnonAuthNet", "AnonAuthCrypto", "AnonAuthTestSupport",
      ],
      swiftSettings: swiftSettings),
  ]
)
