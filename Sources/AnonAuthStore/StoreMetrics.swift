import Synchronization

/// A snapshot of the writer's counters, for `/metrics`: batching is what makes durable
/// writes cheap, so its effect should be visible in production.
public struct StoreMetrics: Sendable, Hashable {
  /// Transactions the writer committed.
  public var transactions: UInt64
  /// Write jobs acknowledged after a successful COMMIT.
  public var writesCommitted: UInt64
  /// Write jobs that got an error (their own, or their batch's).
  public var writesFailed: UInt64
  /// Jobs in the most recent batch.
  public var lastBatchSize: Int
  /// Time spent in COMMIT (the fsync, with `synchronous=FULL`), summed over transactions.
  public var commitNanoseconds: UInt64
  /// Times the writer held a small batch back for more writes to join it (the commit
  /// delay): a share of commits that measures how much of the batching it makes.
  public var heldBatches: UInt64 = 0
  /// Write jobs dropped, never run, because their task (a call past its deadline or
  /// whose connection closed) was cancelled before the writer took them.
  public var writesDropped: UInt64 = 0
  /// Times the writer's connection waited for the replicated store's leader, since the
  /// store opened (0 on the single file): divided by `writesCommitted`, round trips per job.
  public var writerRoundTrips: UInt64 = 0
  /// Requests the writer's connection sent to the leader, pipelined or not: what its round
  /// trips would be if each request waited for its answer.
  public var writerRequests: UInt64 = 0
  /// Writes waiting for the writer right now: a queue that keeps growing means the disk
  /// cannot keep up.
  public var queuedWrites: Int = 0
  /// WAL checkpoints run by the background checkpointer; by the writer finishing what a
  /// background pass left (a few pages each); and by the writer because the WAL outgrew
  /// its limit (a count that keeps rising means the background ones cannot keep up).
  public var checkpoints: Int = 0
  public var writerCheckpoints: Int = 0
  public var limitCheckpoints: Int = 0
  /// Jobs per committed transaction: how much group commit saves.
  public var batchSizes = HistogramSnapshot(bounds: StoreCounters.batchSizeBounds)
  /// Seconds spent in COMMIT (the fsync with `synchronous=FULL`), per transaction.
  public var commitSeconds = HistogramSnapshot(bounds: StoreCounters.secondsBounds)
  /// Seconds from a write's submission to its acknowledgement (queueing, the batch's
  /// other jobs and the commit), per committed write: what a caller waits.
  public var writeSeconds = HistogramSnapshot(bounds: StoreCounters.secondsBounds)

  /// Committed writes per transaction: 1 means no batching happened.
  public var averageBatchSize: Double {
    transactions == 0 ? 0 : Double(writesCommitted) / Double(transactions)
  }
}

/// The live counters behind `StoreMetrics`, written by the writer thread and read from
/// any task without a lock.
final class StoreCounters: Sendable {
  private let transactions = Atomic<UInt64>(0)
  private let writesCommitted = Atomic<UInt64>(0)
  private let writesFailed = Atomic<UInt64>(0)
  private let lastBatchSize = Atomic<Int>(0)
  private let commitNanoseconds = Atomic<UInt64>(0)
  private let heldBatches = Atomic<UInt64>(0)
  private let writesDropped = Atomic<UInt64>(0)
  private let writerRoundTrips = Atomic<UInt64>(0)
  private let writerRequests = Atomic<UInt64>(0)
  private let batchSizes = LockedHistogram(bounds: StoreCounters.batchSizeBounds)
  private let commitSeconds = LockedHistogram(bounds: StoreCounters.secondsBounds)
  private let writeSeconds = LockedHistogram(bounds: StoreCounters.secondsBounds)
  /// False from a transaction that could not begin or commit until the next that could.
  let writable = Atomic<Bool>(true)
  /// Set when `verifyIntegrity` found damage: writes are refused from then on.
  let failedIntegrity = Atomic<Bool>(false)
  /// When the last writability probe started (monotonic nanoseconds): one a second at most.
  let lastProbeNanos = Atomic<UInt64>(0)

  /// Powers of two up to the writer's largest batch (256 by default).
  static let batchSizeBounds: [Double] = [1, 2, 4, 8, 16, 32, 64, 128, 256]
  /// From half a millisecond (a commit on a fast SSD) to ten seconds (a stalled disk).
  static let secondsBounds: [Double] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10,
  ]

  /// - Parameter waitedNanoseconds: each committed job's time from submission to now.
  func recordCommit(batchSize: Int, committed: Int, nanoseconds: UInt64, waitedNanoseconds: [UInt64] = []) {
    transactions.wrappingAdd(1, ordering: .relaxed)
    writesCommitted.wrappingAdd(UInt64(committed), ordering: .relaxed)
    lastBatchSize.store(batchSize, ordering: .relaxed)
    commitNanoseconds.wrappingAdd(nanoseconds, ordering: .relaxed)
    writable.store(true, ordering: .relaxed)
    batchSizes.observe(Double(batchSize))
    commitSeconds.observe(Double(nanoseconds) / 1e9)
    writeSeconds.observe(waitedNanoseconds.map { Double($0) / 1e9 })
  }

  func recordDropped(_ count: Int = 1) {
    writesDropped.wrappingAdd(UInt64(count), ordering: .relaxed)
  }

  func recordHeldBatch() {
    heldBatches.wrappingAdd(1, ordering: .relaxed)
  }

  /// A transaction could not begin or commit (disk full, I/O error, read-only file).
  func recordTransactionFailure() {
    writable.store(false, ordering: .relaxed)
  }

  /// The writer connection's running total (it counts; this publishes it).
  func recordRoundTrips(_ total: Int, requests: Int) {
    writerRoundTrips.store(UInt64(max(0, total)), ordering: .relaxed)
    writerRequests.store(UInt64(max(0, requests)), ordering: .relaxed)
  }

  func recordFailures(_ count: Int) {
    writesFailed.wrappingAdd(UInt64(count), ordering: .relaxed)
  }

  func snapshot() -> StoreMetrics {
    StoreMetrics(
      transactions: transactions.load(ordering: .relaxed),
      writesCommitted: writesCommitted.load(ordering: .relaxed),
      writesFailed: writesFailed.load(ordering: .relaxed),
      lastBatchSize: lastBatchSize.load(ordering: .relaxed),
      commitNanoseconds: commitNanoseconds.load(ordering: .relaxed),
      heldBatches: heldBatches.load(ordering: .relaxed),
      writesDropped: writesDropped.load(ordering: .relaxed),
      writerRoundTrips: writerRoundTrips.load(ordering: .relaxed),
      writerRequests: writerRequests.load(ordering: .relaxed),
      batchSizes: batchSizes.snapshot(), commitSeconds: commitSeconds.snapshot(),
      writeSeconds: writeSeconds.snapshot())
  }
}
