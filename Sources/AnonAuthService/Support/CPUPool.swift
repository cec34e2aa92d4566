import CShims
import Foundation
import Synchronization

/// A fixed set of threads for CPU-heavy work (RSA signing, scrypt): sized to the cores,
/// so a burst of sign-ups queues here instead of starving the cooperative pool and the
/// event loops.
public final class CPUPool: Sendable {
  private struct State {
    var jobs: [@Sendable () -> Void] = []
    var stopped = false
  }

  private let state = Mutex(State())
  private let available = DispatchSemaphore(value: 0)
  public let threads: Int

  public init(threads: Int = ProcessInfo.processInfo.activeProcessorCount, name: String = "anonauth-cpu") {
    self.threads = max(1, threads)
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

  /// Runs `body` on a pool thread and returns its result.
  public func run<T: Sendable, E: Error>(_ body: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
    let result: Result<T, E> = await withCheckedContinuation { continuation in
      state.withLock {
        $0.jobs.append({ continuation.resume(returning: Result { () throws(E) -> T in try body() }) })
      }
      available.signal()
    }
    return try result.get()
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
        state.jobs.isEmpty ? nil : state.jobs.removeFirst()
      }
      if let job {
        job()
        continue
      }
      if state.withLock({ $0.stopped }) { return }
    }
  }
}
