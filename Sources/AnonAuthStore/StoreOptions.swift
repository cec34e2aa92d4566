/// How to open a store. The defaults are the durable ones; anything weaker is opt-in.
public struct StoreOptions: Sendable, Hashable {
  /// SQLite's `synchronous` setting for the writer.
  public enum Synchronous: String, Sendable, Hashable {
    /// fsync on every commit: an acknowledged write survives power loss.
    case full = "FULL"
    /// fsync at checkpoints only: a crash loses no data, power loss may lose the last
    /// commits. Faster, for tests and for deployments that accept that risk.
    case normal = "NORMAL"
  }

  /// The database file; its `-wal` and `-shm` companions live next to it.
  public var path: String
  public var synchronous: Synchronous
  /// Read-only connections; reads on more of them run in parallel.
  public var readerCount: Int
  /// How long a statement waits for a lock before failing with `.busy`.
  public var busyTimeoutMs: Int32
  /// `busyTimeoutMs` unless one is given: here and for the copy into a new cluster.
  public static let defaultBusyTimeoutMs: Int32 = 5_000
  /// At most this many writes share one transaction: bounds the latency one batch adds.
  public var maxBatch: Int
  /// The writer connection's SQLite page cache, in KiB (readers keep
  /// `defaultCacheKiB`). Every write searches the B-trees it changes from the root, so
  /// their interior pages are read on every write: once they outgrow the cache (a store
  /// of some million accounts has tens of MiB of them), each write reads them again from
  /// the OS. SQLite allocates the cache as pages are read, so a small store never uses it all.
  public var writerCacheKiB: Int
  /// The page cache of connections that are not told otherwise (16 MiB).
  public static let defaultCacheKiB = 16_384
  /// The writer's page cache unless one is given: what a store of 5,000,000 accounts
  /// needs for every interior page of its accounts and sessions B-trees, with room for
  /// the leaves that a clean-up pass or a burst of sign-ups passes through.
  public static let defaultWriterCacheKiB = 131_072
  /// The range `validate` accepts: from SQLite's own default (2 MiB) to 16 GiB.
  public static let writerCacheKiBRange = 2_048...16_777_216
  /// While writes arrive faster than two per this many microseconds, a batch smaller
  /// than `maxBatch` waits until its oldest write has waited this long, so that more
  /// writes share its commit (its fsync and its pages); 0 (the default here) never
  /// waits. No write waits longer than this for the others.
  public var commitDelayMicroseconds: Int
  /// `PRAGMA quick_check` before `open` returns: a damaged file is refused at once, but
  /// the check reads every page (seconds for a store of millions of accounts). Off, the
  /// owner runs `verifyIntegrity()` once it serves.
  public var checkIntegrityAtOpen: Bool
  /// The replicated engine: set, the store lives on the dqlite cluster and `path` only
  /// names where its node keeps data (for the free-space check); nil, the single file.
  public var cluster: ClusterStoreOptions?

  public init(
    path: String, synchronous: Synchronous = .full, readerCount: Int = 2,
    busyTimeoutMs: Int32 = StoreOptions.defaultBusyTimeoutMs, maxBatch: Int = 256,
    commitDelayMicroseconds: Int = 0, writerCacheKiB: Int = StoreOptions.defaultWriterCacheKiB,
    checkIntegrityAtOpen: Bool = true, cluster: ClusterStoreOptions? = nil
  ) {
    self.commitDelayMicroseconds = commitDelayMicroseconds
    self.cluster = cluster
    self.path = path
    self.synchronous = synchronous
    self.readerCount = readerCount
    self.busyTimeoutMs = busyTimeoutMs
    self.maxBatch = maxBatch
    self.writerCacheKiB = writerCacheKiB
    self.checkIntegrityAtOpen = checkIntegrityAtOpen
  }

  /// Rejects values that would leave the store unable to work, before any file is touched.
  func validate() throws(StoreError) {
    func invalid(_ message: String) -> StoreError { StoreError(kind: .invalidArgument, message: message) }
    if let cluster, cluster.seeds.isEmpty || cluster.databaseName.isEmpty {
      throw invalid("the replicated store needs at least one node address and a database name")
    }
    if cluster == nil, path.isEmpty || path == ":memory:" || path.hasPrefix("file:") {
      throw invalid("the store needs a file path (readers open the same file): \"\(path)\"")
    }
    if readerCount < 1 { throw invalid("readerCount must be at least 1, not \(readerCount)") }
    if busyTimeoutMs < 0 { throw invalid("busyTimeoutMs must not be negative") }
    if maxBatch < 1 { throw invalid("maxBatch must be at least 1, not \(maxBatch)") }
    if !Self.writerCacheKiBRange.contains(writerCacheKiB) {
      throw invalid(
        "writerCacheKiB must be \(Self.writerCacheKiBRange.lowerBound) to \(Self.writerCacheKiBRange.upperBound), "
          + "not \(writerCacheKiB)")
    }
    if !(0...60_000_000).contains(commitDelayMicroseconds) {
      throw invalid("commitDelayMicroseconds must be 0 to 60,000,000, not \(commitDelayMicroseconds)")
    }
  }
}
