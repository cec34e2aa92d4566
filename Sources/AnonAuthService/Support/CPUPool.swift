import CShims
import Foundation
import Synchronization

/// A fixed set of threads for CPU-heavy work (RSA signing, scrypt): sized to the cores,
/// so a burst of sign-ups queues here instead of starving the cooperative pool and the
/// event loops.
///
/// The service keeps two: one for token signing and one for password hashing, so a token
/// never waits behind scrypt. The password pool's queue is bounded (`maxQueued`): a job
/// beyond it is refused at once (`CPUPool.Refused.queueFull`) instead of waiting behind
/// work that would make its caller time out anyway. A job whose task was cancelled (its
/// call timed out or its connection closed) before a thread picked it up is dropped.
///
/// Waiting jobs are served fairly (`FairQueue`): round robin across the projects and end
/// user IPs of the calls that submitted them (their `Admitted` proof's source), so one
/// source's backlog does not stand in front of everyone else's job. Both `run` and
/// `submit` take that proof: no CPU-heavy job reaches a pool without admission.
public final class CPUPool: Sendable {
  private struct State {
    var jobs = FairQueue<@Sendable () -> Void>()
    var stopped = false

    mutating func enqueue(_ job: @escaping @Sendable () -> Void, from source: Admission.Source?) {
      jobs.append(job, project: source?.projectID ?? "", ip: source?.ipKey ?? "")
    }
  }

  /// Why `submit` did not run a job.
  public enum Refused: Error, Sendable {
    /// `maxQueued` jobs were already waiting.
    case queueFull
    /// The caller's task was cancelled before the job started.
    case cancelled
  }

  private let state = Mutex(State())
  private let available = DispatchSemaphore(value: 0)
  public let threads: Int
  /// The most jobs `submit` lets wait for a thread (`run` is not bounded).
  public let maxQueued: Int
  private let counters = Counters()

  /// How many jobs ran, were refused for a full queue, and were dropped as cancelled.
  public var jobsRun: Int { counters.ran.load(ordering: .relaxed) }
  public var jobsRefused: Int { counters.refused.load(ordering: .relaxed) }
  public var jobsDropped: Int { counters.dropped.load(ordering: .relaxed) }
  /// How many jobs wait for a thread now.
  public var jobsQueued: Int { state.withLock { $0.jobs.count } }

  private final class Flag: Sendable {
    let value = Atomic<Bool>(false)
  }

  private final class Counters: Sendable {
    let ran = Atomic<Int>(0)
    let refused = Atomic<Int>(0)
    let dropped = Atomic<Int>(0)
  }

  public init(
    threads: Int = ProcessInfo.processInfo.activeProcessorCount, name: String = "anonauth-cpu",
    maxQueued: Int = Int.max
  ) {
    self.threads = max(1, threads)
    self.maxQueued = max(0, maxQueued)
    for i in 0..<self.threads {
      let threadName = "\(name)-\(i)"
      let thread = Thread { [self] in
        anonauth_set_thread_name(threadName)
        work()
      }
      thread.name = "\(name)-\(i)"
      thread.start()
    }
  }

  /// Runs `body` on a pool thread and returns its result (no queue bound, never dropped:
  /// for work whose result is always needed, such as making a signing key).
  /// - Parameter admitted: the proof the work was admitted; its source is the job's
  ///   place in the fair queue.
  public func run<T: Sendable, E: Error>(_ admitted: Admitted, _ body: @escaping @Sendable () throws(E) -> T)
    async throws(E) -> T
  {
    let source = admitted.source
    let result: Result<T, E> = await withCheckedContinuation { continuation in
      state.withLock {
        $0.enqueue(
          { [counters] in
            counters.ran.add(1, ordering: .relaxed)
            continuation.resume(returning: Result { () throws(E) -> T in try body() })
          }, from: source)
      }
      available.signal()
    }
    return try result.get()
  }

  /// Runs `body` on a pool thread unless the queue is full or the calling task is
  /// cancelled before a thread takes the job.
  /// - Parameter admitted: as `run`'s.
  /// - Throws: `Refused` when the job did not run, or `body`'s error wrapped in `Failed`.
  public func submit<T: Sendable, E: Error>(
    _ admitted: Admitted, _ body: @escaping @Sendable () throws(E) -> T
  ) async throws(Outcome<E>) -> T {
    if Task.isCancelled {
      counters.dropped.add(1, ordering: .relaxed)
      throw .refused(.cancelled)
    }
    let cancelled = Flag()
    let source = admitted.source
    let result: Result<T, Outcome<E>> = await withTaskCancellationHandler {
      await withCheckedContinuation { continuation in
        let job: @Sendable () -> Void = { [counters] in
          if cancelled.value.load(ordering: .acquiring) {
            counters.dropped.add(1, ordering: .relaxed)
            continuation.resume(returning: .failure(.refused(.cancelled)))
            return
          }
          counters.ran.add(1, ordering: .relaxed)
          continuation.resume(
            returning: Result { () throws(E) -> T in try body() }.mapError { Outcome.failed($0) })
        }
        let queued = state.withLock { state -> Bool in
          guard state.jobs.count < maxQueued else { return false }
          state.enqueue(job, from: source)
          return true
        }
        if queued {
          available.signal()
        } else {
          counters.refused.add(1, ordering: .relaxed)
          continuation.resume(returning: .failure(.refused(.queueFull)))
        }
      }
    } onCancel: {
      cancelled.value.store(true, ordering: .releasing)
    }
    return try result.get()
  }

  /// What `submit` throws: the pool's refusal, or the job's own error.
  public enum Outcome<E: Error>: Error {
    case refused(Refused)
    case failed(E)
  }

  /// Lets the threads finish queued work and exit.
  public func shutdown() {
    state.withLock { $0.stopped = true }
    for _ in 0..<threads { available.signal() }
  }

  private func work() {
    while true {
      available.wait()
      let job = state.withLock { state -> (@Sendable () -> Void)? in
        state.jobs.popFirst()
      }
      if let job {
        job()
        continue
      }
      if state.withLock({ $0.stopped }) { return }
    }
  }
}
