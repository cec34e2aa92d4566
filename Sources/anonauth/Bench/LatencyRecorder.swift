import Synchronization

/// Collects call latencies and failures (by reason) from many tasks and reports
/// throughput and percentiles.
final class LatencyRecorder: Sendable {
  private let samples = Mutex<[UInt64]>([])
  private let failuresByReason = Mutex<[String: Int]>([:])
  private let kinds = Mutex<[String: Int]>([:])
  private let firstFailure = Mutex<String?>(nil)

  func record(nanos: UInt64, kind: String = "") {
    samples.withLock { $0.append(nanos) }
    if !kind.isEmpty { kinds.withLock { $0[kind, default: 0] += 1 } }
  }

  /// - Parameters:
  ///   - reason: the status reason (`TOO_MANY_ATTEMPTS_TRY_LATER`, ...) or a client-side
  ///     cause, counted in the report.
  ///   - detail: kept for the first failure, so a failed run says why.
  func fail(reason: String, detail: String) {
    failuresByReason.withLock { $0[reason.isEmpty ? "UNKNOWN" : reason, default: 0] += 1 }
    firstFailure.withLock { if $0 == nil { $0 = detail } }
  }

  /// The first failure's reason, so a failed run says why.
  var firstFailureReason: String? { firstFailure.withLock { $0 } }

  struct Summary {
    let count: Int
    let failures: [String: Int]
    let kinds: [String: Int]
    let p50Ms: Double
    let p90Ms: Double
    let p99Ms: Double
    let p999Ms: Double
    let maxMs: Double

    var failureCount: Int { failures.values.reduce(0, +) }
  }

  func summary() -> Summary {
    let sorted = samples.withLock { $0 }.sorted()
    func percentile(_ p: Double) -> Double {
      guard !sorted.isEmpty else { return 0 }
      let index = min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)
      return Double(sorted[max(0, index)]) / 1e6
    }
    return Summary(
      count: sorted.count, failures: failuresByReason.withLock { $0 }, kinds: kinds.withLock { $0 },
      p50Ms: percentile(0.5), p90Ms: percentile(0.9), p99Ms: percentile(0.99), p999Ms: percentile(0.999),
      maxMs: Double(sorted.last ?? 0) / 1e6)
  }
}
