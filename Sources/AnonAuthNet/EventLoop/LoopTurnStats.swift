import Synchronization

/// How long each turn of an event loop worked (from `epoll_wait` returning to the next
/// call): every connection of a loop waits while one turn runs, so a long turn is a
/// latency spike for all of them. Published on `/metrics` as a histogram per loop, so an
/// operator sees stalls that averages hide.
public final class LoopTurnStats: Sendable {
  /// Upper bounds of the buckets, in nanoseconds (100 µs to 1 s).
  public static let boundsNanos: [UInt64] = [
    100_000, 250_000, 500_000, 1_000_000, 2_500_000, 5_000_000, 10_000_000, 25_000_000, 50_000_000,
    100_000_000, 250_000_000, 1_000_000_000,
  ]

  public struct Snapshot: Sendable {
    /// Turns at or under each bound of `boundsNanos` (cumulative, as Prometheus wants).
    public var cumulative: [UInt64]
    public var count: UInt64
    public var sumNanos: UInt64
    public var maxNanos: UInt64
  }

  private struct Counts {
    var buckets = [UInt64](repeating: 0, count: LoopTurnStats.boundsNanos.count)
    var count: UInt64 = 0
    var sumNanos: UInt64 = 0
    var maxNanos: UInt64 = 0
  }

  public let loopName: String
  // Written once per turn by the loop thread, read by the ops port: uncontended.
  private let counts = Mutex(Counts())

  init(loopName: String) {
    self.loopName = loopName
  }

  func record(_ nanos: UInt64) {
    counts.withLock { counts in
      if let bucket = Self.boundsNanos.firstIndex(where: { nanos <= $0 }) { counts.buckets[bucket] += 1 }
      counts.count += 1
      counts.sumNanos &+= nanos
      counts.maxNanos = max(counts.maxNanos, nanos)
    }
  }

  public var snapshot: Snapshot {
    let counts = counts.withLock { $0 }
    var running: UInt64 = 0
    let cumulative = counts.buckets.map { bucket -> UInt64 in
      running += bucket
      return running
    }
    return Snapshot(
      cumulative: cumulative, count: counts.count, sumNanos: counts.sumNanos, maxNanos: counts.maxNanos)
  }
}
