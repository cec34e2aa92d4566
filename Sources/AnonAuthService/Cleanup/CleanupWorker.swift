import AnonAuthStore
import AnonAuthWire
import Synchronization

/// The clean-up worker (docs/protocol.md §5.5): in the background, at a set interval,
/// deletes anonymous accounts whose scheduled deletion has come, in small batches, each
/// its own write job, so sign-ups queued meanwhile are committed between two batches.
/// Deletions already scheduled are carried out whether clean-up is on or off.
public final class CleanupWorker: Sendable {
  private let env: ServiceEnvironment
  /// No end user asks for the worker's deletions and prunes: they run as named internal
  /// work, not admitted per source.
  private static let admitted = Admitted.internalWork(.cleanupWorker)
  public let intervalMs: Int64
  public let batchSize: Int
  private let nextRun = Mutex<Int64>(0)
  /// Whether this daemon runs the scheduled passes now: on a replicated store only the
  /// daemon whose node leads does, so the passes of several daemons never race.
  private let runsScheduledPasses: @Sendable () -> Bool

  /// The defaults, which are also the daemon's (`--cleanup-interval-ms`,
  /// `--cleanup-batch-size`, `--cleanup-job-budget-us`): declared here once.
  public static let defaultIntervalMs: Int64 = 60_000
  public static let defaultBatchSize = 500
  public static let defaultJobBudgetMicroseconds = 500

  public init(
    environment: ServiceEnvironment, intervalMs: Int64 = CleanupWorker.defaultIntervalMs,
    batchSize: Int = CleanupWorker.defaultBatchSize,
    jobBudgetMicroseconds: Int = CleanupWorker.defaultJobBudgetMicroseconds,
    runsScheduledPasses: @escaping @Sendable () -> Bool = { true }
  ) {
    self.env = environment
    self.jobBudgetNanoseconds = UInt64(max(1, jobBudgetMicroseconds)) * 1_000
    self.runsScheduledPasses = runsScheduledPasses
    self.intervalMs = max(100, intervalMs)
    self.batchSize = max(1, batchSize)
  }

  /// When the background pass runs next (milliseconds since the epoch).
  public var nextRunAtMs: Int64 { nextRun.withLock { $0 } }

  /// The background passes, one every interval, the first one interval after the start
  /// (so a restart does not begin with a burst of deletions while clients reconnect; the
  /// schedule itself is in the store and survives restarts). Runs until its task is
  /// cancelled (the daemon's service group owns that task and cancels it at the stop); a
  /// pass under way then stops at its next write job, which a cancelled task is refused.
  public func run() async {
    nextRun.withLock { $0 = env.clock.nowMs() + intervalMs }
    while !Task.isCancelled {
      try? await Task.sleep(for: .milliseconds(intervalMs))
      if Task.isCancelled { break }
      if runsScheduledPasses() { _ = try? await runPass(projectID: nil, trigger: "schedule") }
      nextRun.withLock { $0 = env.clock.nowMs() + intervalMs }
    }
  }

  /// How long one clean-up job may hold the writer. Sign-ups committed in the same batch
  /// wait for it: deletions touch random pages of large B-trees (half a millisecond each
  /// at 5 million accounts), and 500 of them were a quarter of a second in which no
  /// sign-up could finish. One job at a time, each in its own commit; a scheduled pass
  /// also rests between jobs (`restPerWrite`).
  let jobBudgetNanoseconds: UInt64

  /// A scheduled pass rests this many times as long as each job's write took (queueing
  /// and commit included): it then holds the writer a third of the time at most, which
  /// still deletes thousands of accounts a second at 5 million, while the sign-ups beside
  /// it keep their latency (with a rest of 1x their p99 at 5 million rose 1.6x).
  static let restPerWrite = 2

  /// One pass: deletes every account due now (of one project, or all), batch by batch.
  /// - Parameter maxAccounts: stop after about this many (0: no limit), so a caller can
  ///   show progress between passes.
  /// - Returns: how many accounts were deleted.
  @discardableResult
  public func runPass(projectID: String?, maxAccounts: Int = 0, trigger: String) async throws(RPCError) -> Int
  {
    let started = env.clock.nowMs()
    var total = 0
    var byProject: [String: Int] = [:]
    var batches = 0
    // Due accounts a job looks up: finding them costs a read each, so a job whose budget
    // ran out early asks for about what the last one managed instead of batchSize.
    var want = batchSize
    while maxAccounts == 0 || total < maxAccounts {
      let now = env.clock.nowMs()
      let limit = min(want, maxAccounts == 0 ? batchSize : maxAccounts - total)
      let budget = jobBudgetNanoseconds
      let began = ContinuousClock.now
      let batch = try await env.write(Self.admitted) { db in
        try CleanupRepository.deleteDueBatch(
          db, projectID: projectID, nowMs: now, limit: limit, budgetNanoseconds: budget)
      }
      let deleted = batch.deleted.values.reduce(0, +)
      batches += 1
      for (project, count) in batch.deleted { byProject[project, default: 0] += count }
      total += deleted
      // Done when this job found fewer than it asked for and deleted them all; a job
      // its budget stopped early leaves some of what it found for the next.
      if deleted == 0 || (batch.found < limit && deleted >= batch.found) { break }
      want = deleted < limit ? max(8, deleted + deleted / 4) : min(batchSize, max(8, limit * 2))
      // Scheduled passes rest twice as long as the job's write took; one an operator asked for
      // (RunCleanup) goes on at once: its jobs are budgeted all the same.
      if trigger == "schedule" {
        try? await Task.sleep(for: (ContinuousClock.now - began) * Self.restPerWrite)
      } else {
        await Task.yield()
      }
    }
    try await pruneQuotaEvents()
    try await pruneUsedNonces()
    try await pruneRotatedRefreshTokens()
    env.metrics.recordCleanupPass(deleted: Int64(total))
    if total > 0 || trigger != "schedule" {
      var fields: [String: LogValue] = [
        "is_anon": true, "deleted": .int(Int64(total)), "batches": .int(Int64(batches)),
        "trigger": .string(trigger), "duration_ms": .int(env.clock.nowMs() - started),
      ]
      if let projectID { fields["project_id"] = .string(projectID) }
      if byProject.count > 1 || projectID == nil {
        fields["by_project"] = .object(byProject.mapValues { .int(Int64($0)) })
      }
      env.logger.info("clean-up pass", fields)
    }
    return total
  }

  /// Forgets the sign-up quota's minutes whose sign-ups are all older than the quota's
  /// window, 5,000 per write job, so the table holds about an hour of minutes per
  /// address (and one pass's interval) whatever the traffic was. Sign-ups do not prune:
  /// this is the only place minutes go.
  func pruneQuotaEvents() async throws(RPCError) {
    let before = env.clock.nowMs() - SignUpQuota.windowMs
    while try await env.write(
      Self.admitted, { db in try QuotaRepository.prune(db, beforeMs: before, limit: 5000) }) == 5000
    {
      await Task.yield()
    }
  }

  /// Forgets the nonces of provider ID tokens that have expired (`NonceRule`), 5,000 per
  /// write job: the table holds the nonces of the tokens still alive, a day at most.
  func pruneUsedNonces() async throws(RPCError) {
    let now = env.clock.nowMs()
    while try await env.write(
      Self.admitted, { db in try UsedNoncesRepository.prune(db, nowMs: now, limit: 5000) }) == 5000
    {
      await Task.yield()
    }
  }

  /// A session is one row (migration 8) that each refresh rewrites, keeping the new
  /// token sealed for the reuse grace window; the seal is dropped a minute after the
  /// window is over (the margin keeps a refresh that waited in the writer's queue from
  /// finding its successor gone), so a stolen copy of the store holds no live token.
  /// 5,000 per write job.
  func pruneRotatedRefreshTokens() async throws(RPCError) {
    let graceOver = env.clock.nowMs() - env.refreshReuseGraceMs - 60_000
    while try await env.write(
      Self.admitted,
      { db in
        try RefreshTokensRepository.forgetSuccessors(db, rotatedBeforeMs: graceOver, limit: 5000)
      }) == 5000
    {
      await Task.yield()
    }
  }

  /// Schedules a project's existing anonymous accounts when clean-up is turned on, in
  /// batches of 5,000 (keyset order), each its own write job.
  /// - Returns: how many accounts were scheduled.
  public func scheduleExisting(projectID: String, enabledAtMs: Int64) async throws(RPCError) -> Int {
    var after = ""
    var total = 0
    while true {
      let cursor = after
      let (last, scheduled) = try await env.write(Self.admitted) { db in
        try CleanupRepository.scheduleBatch(
          db, projectID: projectID, enabledAtMs: enabledAtMs, afterLocalID: cursor, limit: 5000)
      }
      total += scheduled
      guard let last else { break }
      after = last
      await Task.yield()
    }
    env.logger.info(
      "clean-up scheduled existing accounts",
      ["is_anon": true, "project_id": .string(projectID), "scheduled": .int(Int64(total))])
    return total
  }
}
