import AnonAuthService
import AnonAuthStore

/// The slices of the configuration that the store and the services receive. The
/// transport's is `rpc` (an `RPCServerConfig`), fair admission's is `admission`.
extension DaemonConfig {
  /// How the daemon opens its single-file store at `path`. The integrity check reads
  /// every page: the daemon runs it once it serves, so a store of millions of accounts
  /// opens in milliseconds.
  func storeOptions(path: String) -> StoreOptions {
    StoreOptions(
      path: path, commitDelayMicroseconds: commitDelayMicroseconds, writerCacheKiB: writerCacheKiB,
      checkIntegrityAtOpen: false)
  }

  /// The clean-up worker with the configured interval, batch and job budget.
  func cleanupWorker(
    environment: ServiceEnvironment, runsScheduledPasses: @escaping @Sendable () -> Bool
  ) -> CleanupWorker {
    CleanupWorker(
      environment: environment, intervalMs: cleanupIntervalMs, batchSize: cleanupBatchSize,
      jobBudgetMicroseconds: cleanupJobBudgetMicroseconds, runsScheduledPasses: runsScheduledPasses)
  }
}
