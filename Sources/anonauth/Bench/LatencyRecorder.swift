import Synchronization

/// Collects call latencies from many tasks and reports throughput and percentiles.
final class LatencyRecorder: Sendable {
  private let samples = Mutex<[UInt64]>([])
  private let failures = Atomic<Int>(0)
  private let firstFailure = Mutex<String?>(nil)

  func record(nanos: UInt64) { samples.withLock { $0.append(nanos) } }

  func fail(_ why: String) {
    failures.add(1, ordering: .relaxed)
    firstFailure.withLock { if $0 == nil { $0 = why } }
  }

  /// The first failure's reason, so a failed run says why.
  var firstFailureReason: String? { firstFailure.withLock { $0 } }

  struct Summary {
    let count: Int
    let failures: Int
    let p50Ms: Double
    let p99Ms: Double
    let maxMs: Double
  }

  func summary() -> Summary {
    let sorted = samples.withLock { $0 }.sorted()
    func percentile(_ p: Double) -> Double {
      guard !sorted.isEmpty else { return 0 }
      let index = min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)
      return Double(sorted[max(0, index)]) / 1e6
    }
    return Summary(
      count: sorted.count, failures: failures.load(ordering: .relaxed), p50Ms: percentile(0.5),
      p99Ms: percentile(0.99), maxMs: Double(sorted.last ?? 0) / 1e6)
  }
}
