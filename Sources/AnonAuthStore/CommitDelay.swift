/// When the writer should hold a small batch back for a moment so that more writes share
/// its commit (group commit's "commit delay", as in PostgreSQL's `commit_delay` with
/// `commit_siblings`, or MySQL's `binlog_group_commit_sync_delay`).
///
/// A commit costs about the same whatever it carries: its fsync, the WAL frames of the
/// pages every write touches (counters, index edges), waking the writer thread and the
/// checkpointer. When sign-ups come from the signing pool one at a time, each one paid
/// all of that alone. Holding the batch until its oldest write has waited `delay` shares
/// those costs, at the price of at most `delay` added to any one write:
///
/// - only while writes arrive faster than two per `delay` (a moving average of the gap
///   between submissions): a lone write after a quiet spell is never held;
/// - never beyond `delay` from the oldest write's submission: writes that queued during
///   a slow commit have waited already, so a saturated writer is never slowed;
/// - never once the batch is full.
///
/// Value type, used only under the writer's lock: the writer feeds it each submission and
/// asks it, before each batch, how long to wait.
struct CommitDelay: Sendable {
  /// Zero: never hold a batch (every batch commits as soon as the writer is free).
  let delayNanoseconds: UInt64
  /// The most writes one transaction takes (`StoreOptions.maxBatch`): the writer's one
  /// copy of it. A batch this full is never held.
  let fullBatch: Int
  /// Moving average of the gap between two submissions (weight 1/8 for the newest).
  private(set) var averageGapNanoseconds: UInt64
  private var lastSubmissionAt: UInt64?

  init(delayNanoseconds: UInt64, fullBatch: Int) {
    self.delayNanoseconds = delayNanoseconds
    self.fullBatch = fullBatch
    // Until submissions show otherwise, the store is quiet.
    self.averageGapNanoseconds = Self.longestGap(delayNanoseconds)
  }

  /// A gap counts at most this much, so that one quiet spell does not take dozens of fast
  /// submissions to forget.
  private static func longestGap(_ delay: UInt64) -> UInt64 { max(delay, 1) &* 8 }

  mutating func submitted(at now: UInt64) {
    guard delayNanoseconds > 0 else { return }
    if let last = lastSubmissionAt {
      let gap = min(now &- min(now, last), Self.longestGap(delayNanoseconds))
      // avg += (gap - avg) / 8, in unsigned arithmetic.
      averageGapNanoseconds = averageGapNanoseconds - averageGapNanoseconds / 8 + gap / 8
    }
    lastSubmissionAt = now
  }

  /// The moment (on the submissions' clock) until which the writer should wait before
  /// taking a batch of `queued` writes, the oldest submitted at `oldestSubmittedAt`; nil
  /// to take it now.
  func holdUntil(queued: Int, oldestSubmittedAt: UInt64, now: UInt64) -> UInt64? {
    guard delayNanoseconds > 0, queued > 0, queued < fullBatch,
      averageGapNanoseconds &* 2 <= delayNanoseconds
    else { return nil }
    let deadline = oldestSubmittedAt &+ delayNanoseconds
    return deadline > now ? deadline : nil
  }
}
