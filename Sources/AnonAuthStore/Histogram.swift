import Synchronization

/// A histogram with fixed upper bounds, in the shape Prometheus publishes: how many
/// observations fell at or under each bound (cumulative), their count and their sum.
public struct HistogramSnapshot: Sendable, Hashable {
  /// Upper bounds, ascending; a last `+Inf` bucket is implied and equals `count`.
  public var bounds: [Double]
  /// Observations `<=` each bound, one per entry of `bounds`.
  public var cumulativeCounts: [UInt64]
  public var count: UInt64
  public var sum: Double

  public init(bounds: [Double]) {
    self.bounds = bounds
    self.cumulativeCounts = [UInt64](repeating: 0, count: bounds.count)
    self.count = 0
    self.sum = 0
  }

  mutating func observe(_ value: Double) {
    for (i, bound) in bounds.enumerated() where value <= bound { cumulativeCounts[i] &+= 1 }
    count &+= 1
    sum += value
  }
}

/// The live histogram behind a snapshot: the writer thread observes once per
/// transaction, a scrape copies it. A lock is fine at that rate.
final class LockedHistogram: Sendable {
  private let state: Mutex<HistogramSnapshot>

  init(bounds: [Double]) {
    state = Mutex(HistogramSnapshot(bounds: bounds))
  }

  func observe(_ value: Double) {
    state.withLock { $0.observe(value) }
  }

  func observe(_ values: [Double]) {
    state.withLock { histogram in
      for value in values { histogram.observe(value) }
    }
  }

  func snapshot() -> HistogramSnapshot { state.withLock { $0 } }
}
