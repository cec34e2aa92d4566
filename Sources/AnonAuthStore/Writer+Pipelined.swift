import Dispatch

/// The replicated store's batch: jobs run ahead of the leader's answers.
///
/// On the single file every statement is a function call; on the replicated store every
/// wait for an answer is a round trip to the leader, and the writer is one thread. So a
/// batch waits three times, whatever its size: for `BEGIN`, once for every job's
/// statements, and for `COMMIT` (and once more for every 128 requests it sends: see
/// `DqliteConnection.maxUnanswered`). Each job runs in a savepoint of its own, nested in the
/// one before and open until COMMIT, and the next job's `SAVEPOINT` is sent behind the
/// job's statements without waiting. (A job that queries waits for that query, and its
/// answer brings every earlier answer with it.)
///
/// A job whose statement failed, or whose expectation was not met, is known only when
/// the answers arrive, after later jobs have run on top of it. Then `ROLLBACK TO` its
/// savepoint takes back it and every job after it; it fails, and the jobs after it run
/// again, ahead of their answers for the first two such failures of a batch, then each
/// waited for before the next starts: a batch full of failing jobs costs what it did
/// before pipelining, and no job runs more than four times.
extension Writer {
  func commitPipelined(_ jobs: [WriteJob]) {
    // Left over only if a batch ended oddly: it must not fail this one.
    _ = database.takePipelineFailure()
    do {
      try database.executeControl("BEGIN IMMEDIATE", Self.savepoint(0))
    } catch {
      failBatch(jobs, error)
      return
    }
    var batch = PipelinedBatch(jobs)
    // Told only once the batch is over: what a failed caller does next (a read of the
    // sign-up quota's window, say) must see the batch's committed writes.
    defer { for (job, error) in batch.failures { job.fail(error) } }
    while true {
      while batch.next < jobs.count {
        guard let failure = runAhead(&batch) else {
          batch.next += 1
          continue
        }
        guard takeBack(failure, in: &batch) else { return }
      }
      // Every job has run: one wait for all their answers, each failure charged to its job.
      database.pipelineTag = jobs.count
      do {
        try database.settle()
      } catch {
        // Only a broken link throws here: the transaction is gone.
        abandon(batch.ran, failed: batch.failed, error, requeue: [])
        return
      }
      guard let failure = database.takePipelineFailure() else { break }
      guard takeBack(failure, in: &batch) else { return }
    }
    let start = DispatchTime.now().uptimeNanoseconds
    do {
      try database.executeControl("COMMIT")
    } catch {
      abandon(batch.ran, failed: batch.failed, error, requeue: [])
      return
    }
    committed(jobs.count, batch.done, failed: batch.failed, since: start)
  }

  /// The savepoint job `index` runs in.
  static func savepoint(_ index: Int) -> String { "SAVEPOINT \(savepoint)_\(index)" }

  /// Runs the batch's next job and sends the next savepoint behind it, waiting for its
  /// answers only once the batch is careful. Returns the failure to take back, if one is
  /// known: the job's own, or an earlier job's that its waits brought in.
  private func runAhead(_ batch: inout PipelinedBatch) -> PipelineFailure? {
    let index = batch.next
    let next = index + 1 < batch.jobs.count ? Self.savepoint(index + 1) : nil
    database.pipelineTag = index
    var failure: PipelineFailure?
    do {
      batch.acknowledgements[index] = try batch.jobs[index].perform(database)
      switch (batch.careful, next) {
      case (true, let next?): try database.settle(thenExecuting: next)
      case (true, nil): try database.settle()
      case (false, let next?): try database.executeControlPipelined(next)
      case (false, nil): break
      }
    } catch {
      failure = PipelineFailure(tag: index, error: error)
    }
    // An earlier job's failure (or this one's expectation) came first.
    return database.takePipelineFailure() ?? failure
  }

  /// Fails the job `failure` names and takes back its savepoint, with everything after
  /// it; the batch goes on, carefully, from the job after it. Returns false when the
  /// transaction is lost instead (the batch is over).
  private func takeBack(_ found: PipelineFailure, in batch: inout PipelinedBatch) -> Bool {
    // Every answer still unread, charged to its own job (the tag is no job's): an earlier
    // failure among them is the one to take back.
    database.pipelineTag = batch.jobs.count
    var failure = found
    var lostLink: (any Error)?
    do {
      try database.settle()
      // The same job's expectation came before what it threw.
      if let earlier = database.takePipelineFailure(), earlier.tag <= failure.tag { failure = earlier }
    } catch {
      lostLink = error
    }
    let index = failure.tag
    batch.failures.append((batch.jobs[index], failure.error))
    batch.failed += 1
    for later in index..<batch.jobs.count { batch.acknowledgements[later] = nil }
    if batch.restartsLeft > 0 {
      batch.restartsLeft -= 1
    } else {
      batch.careful = true
    }
    batch.next = index + 1
    let remaining = batch.jobs[(index + 1)...]
    guard database.isInTransaction else {
      // The engine rolled the whole transaction back, or the link to the leader broke:
      // the earlier jobs' changes are gone with it, and they are told so (not the failed
      // job's own error: a quota refusal is no one else's). The later ones go back to
      // the queue.
      let lost =
        lostLink
        ?? StoreError(kind: .unavailable, message: "the batch's transaction was lost: nothing of it was kept")
      abandon(batch.ran, failed: batch.failed, lost, requeue: remaining)
      return false
    }
    do {
      if remaining.isEmpty {
        try database.executeControl("ROLLBACK TO \(Self.savepoint)_\(index)")
      } else {
        try database.executeControl("ROLLBACK TO \(Self.savepoint)_\(index)", Self.savepoint(index + 1))
      }
    } catch {
      // The job's changes could not be taken back alone: take back the whole batch
      // rather than commit half a job.
      abandon(batch.ran, failed: batch.failed, error, requeue: remaining)
      return false
    }
    return true
  }
}

/// Where a pipelined batch stands.
struct PipelinedBatch {
  let jobs: [WriteJob]
  /// Each job's acknowledgement while its run stands: nil before it runs, after it
  /// failed, and after an earlier job's failure took it back.
  var acknowledgements: [(@Sendable () -> Void)?]
  /// The next job to run.
  var next = 0
  var failed = 0
  /// The jobs that failed, with their errors, told when the batch is over.
  var failures: [(WriteJob, any Error)] = []
  /// Take-backs after which the jobs after the failed one still run ahead: a refused
  /// sign-up now and then costs its batch one more wait, not a wait for each later job.
  var restartsLeft = PipelinedBatch.restarts
  /// Jobs failed more often: from now on each job is waited for before the next runs,
  /// so that no job runs more than `restarts + 2` times, and a batch of failing jobs
  /// costs about what it did when every job was waited for.
  var careful = false

  static let restarts = 2

  init(_ jobs: [WriteJob]) {
    self.jobs = jobs
    acknowledgements = Array(repeating: nil, count: jobs.count)
  }

  /// The jobs whose run stands, with their acknowledgements.
  var done: [(job: WriteJob, acknowledge: @Sendable () -> Void)] {
    zip(jobs, acknowledgements).compactMap { job, acknowledge in acknowledge.map { (job, $0) } }
  }

  /// The jobs whose run stands: they fail if the batch is abandoned.
  var ran: [WriteJob] { done.map(\.job) }
}
