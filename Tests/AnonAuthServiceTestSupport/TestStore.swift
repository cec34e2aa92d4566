import AnonAuthCrypto
import AnonAuthService
import AnonAuthStore
import AnonAuthTestSupport
import Foundation

/// What every in-process harness of the service layer opens first: a store of the
/// daemon's schema in a temporary directory, and the two CPU pools the service runs on
/// (signing, password hashing). The harnesses wire their own environment on it.
public struct TestStore: Sendable {
  public let directory: TemporaryDirectory
  public let store: Store
  public let pool: CPUPool
  public let passwordPool: CPUPool

  /// Opens them, runs `body`, then closes the store, shuts the pools down and removes the
  /// directory, whatever happened.
  /// - Parameters:
  ///   - name: names the directory and the signing pool's threads.
  ///   - passwordPool: the password pool (2 threads, 64 queued by default); a test that
  ///     fills it names a smaller one.
  public static func with<T>(
    _ name: String, signingThreads: Int = 2,
    passwordPool makePasswordPool: @Sendable () -> CPUPool = {
      CPUPool(threads: 2, name: "anonauth-test-scrypt", maxQueued: 64)
    },
    _ body: (TestStore) async throws -> T
  ) async throws -> T {
    let directory = try TemporaryDirectory(prefix: "anonauth-\(name)")
    defer { directory.remove() }
    // NORMAL: no fsync per commit; the store is closed before its files are removed.
    let store = try Store.open(
      options: StoreOptions(path: directory.file("anonauth.db"), synchronous: .normal),
      migrations: AnonAuthSchema.migrations)
    let opened = TestStore(
      directory: directory, store: store,
      pool: CPUPool(threads: signingThreads, name: "anonauth-\(name)-cpu"),
      passwordPool: makePasswordPool())
    return try await withAsyncCleanup({ try await body(opened) }, cleanup: { await opened.close() })
  }

  /// What every test environment is built on besides the store: a master key of its
  /// own, the project directory and a started token minter, all on `clock`.
  public func core(clock: ManualClock, issuerPrefix: String) async throws -> (
    masterKey: [UInt8], directory: ProjectDirectory, minter: TokenMinter
  ) {
    let masterKey = try SecureRandom.bytes(32)
    let directory = try await ProjectDirectory(store: store, clock: clock)
    let minter = TokenMinter(
      store: store, clock: clock, masterKey: masterKey, issuerPrefix: issuerPrefix, pool: pool)
    try await minter.start()
    return (masterKey, directory, minter)
  }

  private func close() async {
    await store.close()
    pool.shutdown()
    passwordPool.shutdown()
  }
}
