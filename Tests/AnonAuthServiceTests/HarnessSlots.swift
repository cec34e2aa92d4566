import Foundation

/// How many service harnesses (a store with its writer and checkpointer, a signing pool
/// and a password pool each) may be open at once in the test process.
///
/// Swift Testing starts every test whose predecessor is suspended, so without a bound some
/// sixty harnesses ran at once: 1,374 threads in the test process, hundreds runnable on 2
/// cores. The work gets no faster for it, and every other process on the machine (the
/// integration tests' daemons among them) waits behind it. A harness waits for a slot
/// suspended, never blocking a thread; a harness is never opened inside another's body,
/// so the bound cannot deadlock.
actor HarnessSlots {
  static let shared = HarnessSlots(limit: max(2, ProcessInfo.processInfo.activeProcessorCount * 2))

  private let limit: Int
  private var inUse = 0
  private var waiting: [CheckedContinuation<Void, Never>] = []

  init(limit: Int) {
    self.limit = limit
  }

  /// Runs `body` holding one slot.
  nonisolated func run<T>(_ body: () async throws -> T) async throws -> T {
    await acquire()
    do {
      let result = try await body()
      await release()
      return result
    } catch {
      await release()
      throw error
    }
  }

  private func acquire() async {
    if inUse < limit {
      inUse += 1
      return
    }
    await withCheckedContinuation { waiting.append($0) }
  }

  /// Hands the slot straight to the first waiter, if any.
  private func release() {
    if waiting.isEmpty {
      inUse -= 1
    } else {
      waiting.removeFirst().resume()
    }
  }
}
