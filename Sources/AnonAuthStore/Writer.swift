import CShims
import Dispatch
import Foundation
import Synchronization

/// The one writer connection and the thread it lives on. Writes queued while a commit is
/// in progress wait for it and then share the next transaction: with `synchronous=FULL`
/// the fsync is the cost, and a batch pays it once for all its jobs. While writes stream
/// in, a small batch may be held back briefly for more to join it (`CommitDelay`).
final class Writer: @unchecked Sendable {
  // @unchecked Sendable is safe: `database` is used only on the writer thread once
  // `start()` has run; before that only the opening thread used it, and `Thread.start`
  // orders those uses before the thread's. Everything else that threads share is the
  // Mutex-guarded `state`, the semaphore and the atomic counters.
  let database: Database
  let counters: StoreCounters
  private let state: Mutex<State>
  /// Signalled at most once per sleep or hold of the thread (see `State.sleeping`,
  /// `State.holding`).
  private let wake = MonotonicSemaphore()

  private struct State {
    var queue: [WriteJob] = []
    var delay: CommitDelay
    /// The thread found nothing to do and waits, or is about to, on the semaphore.
    var sleeping = false
    /// The thread holds a small batch back until a deadline, waiting on the semaphore
    /// with a timeout; a full batch or `close` ends the hold early.
    var holding = false
    var closing = false
    var stopped = false
    var onStopped: [@Sendable () -> Void] = []

    /// Whether the caller must signal the semaphore: only when the thread sleeps, so that
    /// signals never pile up while it is busy.
    mutating func takeSleeping() -> Bool {
      defer { sleeping = false }
      return sleeping
    }

    /// Whether the caller must signal to end a hold: once, and only when the hold is
    /// over for good (the batch is full, or the store closes).
    mutating func takeHolding() -> Bool {
      guard holding, closing || queue.count >= delay.fullBatch else { return false }
      holding = false
      return true
    }
  }

  private enum Next {
    /// The jobs to run, and those dropped because their task was cancelled first.
    case batch([WriteJob], dropped: [WriteJob])
    case sleep
    /// Wait, at most until this moment (monotonic nanoseconds), for more jobs.
    case hold(until: UInt64)
    case stop
  }

  /// The savepoint each job runs in; unlikely to clash with a job's own savepoints.
  static let savepoint = "anonauth_write_job"

  /// - Parameter commitDelayNanoseconds: how long a small batch may be held back for
  ///   more writes to join it while they stream in; 0 never holds one.
  init(database: Database, maxBatch: Int, commitDelayNanoseconds: UInt64 = 0, counters: StoreCounters) {
    self.database = database
    self.counters = counters
    state = Mutex(State(delay: CommitDelay(delayNanoseconds: commitDelayNanoseconds, fullBatch: maxBatch)))
  }

  /// Jobs waiting for the writer, for the queue-depth metric.
  var queuedCount: Int { state.withLock { $0.queue.count } }

  func start(name: String) {
    let thread = Thread { [self] in
      anonauth_set_thread_name(name)
      run()
    }
    thread.name = name
    // SQLite's parser and the jobs' own code run here; the stack costs address space only.
    thread.stackSize = 4 << 20
    thread.start()
  }

  /// Queues a job; after `close` it fails at once with `.closed`.
  func submit(_ job: WriteJob) {
    let (accepted, wakeThread) = state.withLock { state -> (Bool, Bool) in
      if state.closing { return (false, false) }
      state.queue.append(job)
      state.delay.submitted(at: job.submittedAt)
      return (true, state.takeSleeping() || state.takeHolding())
    }
    if !accepted { job.fail(StoreError(kind: .closed, message: "the store is closed")) }
    if wakeThread { wake.signal() }
  }

  /// Lets queued jobs finish, closes the connection on its thread, then calls `done`.
  func close(then done: @escaping @Sendable () -> Void) {
    let (finished, wakeThread) = state.withLock { state -> (Bool, Bool) in
      if state.stopped { return (true, false) }
      state.closing = true
      state.onStopped.append(done)
      return (false, state.takeSleeping() || state.takeHolding())
    }
    if finished { done() }
    if wakeThread { wake.signal() }
  }

  // MARK: The writer thread

  private func run() {
    loop: while true {
      switch nextStep() {
      case .batch(let jobs, let dropped):
        drop(dropped)
        if !jobs.isEmpty { commit(jobs) }
      case .sleep: wake.wait()
      case .hold(let deadline): hold(until: deadline)
      case .stop: break loop
      }
    }
    database.close()
    let callbacks = state.withLock { state in
      state.stopped = true
      return state.onStopped
    }
    for callback in callbacks { callback() }
  }

  private func nextStep() -> Next {
    let now = DispatchTime.now().uptimeNanoseconds
    return state.withLock { state in
      if !state.closing, let oldest = state.queue.first,
        let deadline = state.delay.holdUntil(
          queued: state.queue.count, oldestSubmittedAt: oldest.submittedAt, now: now)
      {
        state.holding = true
        return .hold(until: deadline)
      }
      if !state.queue.isEmpty {
        let count = min(state.delay.fullBatch, state.queue.count)
        let taken = state.queue.prefix(count)
        state.queue.removeFirst(count)
        // Taken here: a job cancelled before this moment never runs; after it, it does.
        var jobs: [WriteJob] = []
        var dropped: [WriteJob] = []
        for job in taken {
          if job.cancellation.isCancelled { dropped.append(job) } else { jobs.append(job) }
        }
        return .batch(jobs, dropped: dropped)
      }
      if state.closing { return .stop }
      state.sleeping = true
      return .sleep
    }
  }

  /// Waits for the deadline, or for a submitter or `close` to end the hold. A signal
  /// promised under the lock (`takeHolding`) may land after the timeout: it is taken
  /// then, so that it cannot cut the thread's next sleep short.
  private func hold(until deadline: UInt64) {
    let now = DispatchTime.now().uptimeNanoseconds
    // The deadline may have passed since `nextStep` read the clock: then the hold ends
    // here, uncounted, and the next step takes the batch.
    if deadline > now {
      counters.recordHeldBatch()
      if wake.wait(nanoseconds: deadline - now) { return }
    }
    let signalPending = state.withLock { state in
      defer { state.holding = false }
      return !state.holding
    }
    if signalPending { wake.wait() }
  }

  /// One transaction for the whole batch, one savepoint per job: a job that throws takes
  /// back only its own changes, and only a successful COMMIT acknowledges anyone.
  ///
  /// The control statements between two jobs go together (`RELEASE` with the next
  /// `SAVEPOINT`, the last `RELEASE` with `COMMIT`). If such a pair fails, nothing of the
  /// batch is kept. The replicated store runs the batch ahead of its answers instead
  /// (`commitPipelined`).
  private func commit(_ jobs: [WriteJob]) {
    if database.pipelinesStatements { return commitPipelined(jobs) }
    do {
      try database.executeControl("BEGIN IMMEDIATE", "SAVEPOINT \(Self.savepoint)")
    } catch {
      failBatch(jobs, error)
      return
    }
    var done: [(job: WriteJob, acknowledge: @Sendable () -> Void)] = []
    var failed = 0
    // Told only once the batch is over: what a failed caller does next (a read of the
    // sign-up quota's window, say) must see the batch's committed writes.
    var refused: [(WriteJob, any Error)] = []
    defer { for (job, error) in refused { job.fail(error) } }
    // When the request that holds COMMIT starts: the commit-time histogram's start.
    var start = DispatchTime.now().uptimeNanoseconds
    for (index, job) in jobs.enumerated() {
      let isLast = index == jobs.count - 1
      let next = isLast ? "COMMIT" : "SAVEPOINT \(Self.savepoint)"
      let outcome = run(job)
      if isLast { start = DispatchTime.now().uptimeNanoseconds }
      switch outcome {
      case .success(let acknowledge):
        do {
          try database.executeControl("RELEASE \(Self.savepoint)", next)
        } catch {
          abandon(done.map(\.job) + [job], failed: failed, error, requeue: jobs[(index + 1)...])
          return
        }
        done.append((job, acknowledge))
      case .failure(let error) where database.isInTransaction:
        refused.append((job, error))
        failed += 1
        do {
          try database.executeControl("ROLLBACK TO \(Self.savepoint)", "RELEASE \(Self.savepoint)", next)
        } catch {
          // The job's changes could not be taken back alone: take back the whole batch
          // rather than commit half a job.
          abandon(done.map(\.job), failed: failed, error, requeue: jobs[(index + 1)...])
          return
        }
      case .failure(let error):
        // The engine rolled the whole transaction back (disk full, I/O error): the
        // earlier jobs' changes are gone with it. The jobs not yet run go back to the queue.
        job.fail(error)
        abandon(done.map(\.job), failed: failed + 1, error, requeue: jobs[(index + 1)...])
        return
      }
    }
    committed(jobs.count, done, failed: failed, since: start)
  }

  /// Runs a job inside the open savepoint; it succeeds only if no expectation of its
  /// pipelined statements failed and no deferred foreign-key violation is left behind.
  private func run(_ job: WriteJob) -> Result<@Sendable () -> Void, any Error> {
    do {
      let acknowledge = try job.perform(database)
      if let failure = database.takePipelineFailure() { throw failure.error }
      if database.hasDeferredForeignKeyViolations { throw StoreError.deferredForeignKey }
      return .success(acknowledge)
    } catch {
      // An expectation that failed before the job threw came first.
      return .failure(database.takePipelineFailure()?.error ?? error)
    }
  }

  /// BEGIN failed: nothing ran.
  func failBatch(_ jobs: [WriteJob], _ error: any Error) {
    if database.isInTransaction { try? database.execute("ROLLBACK") }
    counters.recordTransactionFailure()
    fail(jobs, error)
  }

  /// The batch committed: the metrics, then the acknowledgements.
  func committed(
    _ batchSize: Int, _ done: [(job: WriteJob, acknowledge: @Sendable () -> Void)], failed: Int,
    since start: UInt64
  ) {
    let end = DispatchTime.now().uptimeNanoseconds
    counters.recordCommit(
      batchSize: batchSize, committed: done.count, nanoseconds: end &- start,
      waitedNanoseconds: done.map { end &- $0.job.submittedAt })
    counters.recordFailures(failed)
    counters.recordRoundTrips(database.roundTrips, requests: database.requestsSent)
    for entry in done { entry.acknowledge() }
  }

  /// The batch's transaction is lost or must be: every job that had succeeded fails with
  /// `error` (nothing of theirs is kept), and the jobs not yet run go back to the queue.
  func abandon(
    _ succeeded: [WriteJob], failed: Int, _ error: any Error, requeue remaining: ArraySlice<WriteJob>
  ) {
    if database.isInTransaction { try? database.execute("ROLLBACK") }
    counters.recordTransactionFailure()
    fail(succeeded, error)
    counters.recordFailures(failed)
    requeue(remaining)
  }

  func fail(_ jobs: [WriteJob], _ error: any Error) {
    counters.recordFailures(jobs.count)
    counters.recordRoundTrips(database.roundTrips, requests: database.requestsSent)
    for job in jobs { job.fail(error) }
  }

  /// Jobs whose task was cancelled before the writer took them: they never ran.
  private func drop(_ jobs: [WriteJob]) {
    guard !jobs.isEmpty else { return }
    counters.recordDropped(jobs.count)
    for job in jobs { job.fail(CancellationError()) }
  }

  private func requeue(_ jobs: ArraySlice<WriteJob>) {
    guard !jobs.isEmpty else { return }
    state.withLock { $0.queue.insert(contentsOf: jobs, at: 0) }
  }
}
