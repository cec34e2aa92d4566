import CShims
import Foundation
import Synchronization

/// A few threads of its own for blocking outbound I/O (DNS, connect, TLS, reads with
/// deadlines), so that no such call ever runs on Swift's cooperative pool or on an event
/// loop. The queue is bounded; a job that waited past its deadline is failed unstarted.
final class IOThreadPool: Sendable {
  private struct Job: Sendable {
    let deadline: ContinuousClock.Instant
    let run: @Sendable () -> Void
    let expire: @Sendable () -> Void
  }

  private struct State {
    var jobs: [Job] = []
    var stopped = false
  }

  private let state = Mutex(State())
  private let available = DispatchSemaphore(value: 0)
  let threads: Int
  let maxQueued: Int

  init(threads: Int, maxQueued: Int, name: String) {
    self.threads = max(1, threads)
    self.maxQueued = maxQueued
    for i in 0..<self.threads {
      let threadName = "\(name)-\(i)"
      // Named from inside: Linux gives a new thread its creator's name (a dispatch
      // worker's, when a task makes the pool), and `Thread.name` set before `start`
      // does not reach the kernel.
      let thread = Thread { [self] in
        anonauth_set_thread_name(threadName)
        work()
      }
      thread.name = threadName
      thread.start()
    }
  }

  /// Queues `run`; returns false (and runs nothing) when the queue is full or stopped.
  /// `expire` runs instead of `run` when the deadline passed while the job waited.
  func submit(
    deadline: ContinuousClock.Instant, run: @escaping @Sendable () -> Void,
    expire: @escaping @Sendable () -> Void
  ) -> Bool {
    let accepted = state.withLock { state -> Bool in
      guard !state.stopped, state.jobs.count < maxQueued else { return false }
      state.jobs.append(Job(deadline: deadline, run: run, expire: expire))
      return true
    }
    if accepted { available.signal() }
    return accepted
  }

  /// Lets the threads finish what is queued and exit.
  func shutdown() {
    state.withLock { $0.stopped = true }
    for _ in 0..<threads { available.signal() }
  }

  private func work() {
    while true {
      available.wait()
      let job = state.withLock { state -> Job? in state.jobs.isEmpty ? nil : state.jobs.removeFirst() }
      if let job {
        if ContinuousClock.now >= job.deadline { job.expire() } else { job.run() }
        continue
      }
      if state.withLock({ $0.stopped }) { return }
    }
  }
}
