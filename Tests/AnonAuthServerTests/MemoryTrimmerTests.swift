import Synchronization
import Testing

@testable import AnonAuthServer

/// The trim waits for a burst of closed connections to end, and for 30 s at most.
@Suite struct MemoryTrimmerTests {
  final class Harness: Sendable {
    let clock = Atomic<UInt64>(1_000_000_000)
    let trims = Atomic<Int>(0)
    let scheduled = Mutex<[(at: UInt64, body: @Sendable () -> Void)]>([])

    func makeTrimmer() -> MemoryTrimmer {
      MemoryTrimmer(
        trim: { [self] in trims.add(1, ordering: .relaxed) },
        schedule: { [self] nanos, body in
          let at = clock.load(ordering: .relaxed) + nanos
          scheduled.withLock { $0.append((at, body)) }
        },
        now: { [self] in clock.load(ordering: .relaxed) })
    }

    /// Moves the clock to `nanos` from now, running what falls due on the way.
    func advance(_ nanos: UInt64) {
      let end = clock.load(ordering: .relaxed) + nanos
      while true {
        let due = scheduled.withLock { jobs -> (at: UInt64, body: @Sendable () -> Void)? in
          guard let index = jobs.indices.min(by: { jobs[$0].at < jobs[$1].at }), jobs[index].at <= end else {
            return nil
          }
          return jobs.remove(at: index)
        }
        guard let due else { break }
        clock.store(max(clock.load(ordering: .relaxed), due.at), ordering: .relaxed)
        due.body()
      }
      clock.store(end, ordering: .relaxed)
    }

    var trimCount: Int { trims.load(ordering: .relaxed) }
    var pending: Int { scheduled.withLock { $0.count } }
  }

  @Test func aBurstIsTrimmedOnceItEnds() {
    let h = Harness()
    let trimmer = h.makeTrimmer()
    for _ in 0..<(MemoryTrimmer.closesPerTrim - 1) { trimmer.connectionClosed() }
    #expect(h.pending == 0)
    trimmer.connectionClosed()
    #expect(h.pending == 1)
    h.advance(MemoryTrimmer.quietNanos - 1)
    #expect(h.trimCount == 0)
    h.advance(1)
    #expect(h.trimCount == 1)
    #expect(h.pending == 0)
    // The count starts again.
    for _ in 0..<(MemoryTrimmer.closesPerTrim - 1) { trimmer.connectionClosed() }
    h.advance(10 * MemoryTrimmer.quietNanos)
    #expect(h.trimCount == 1)
  }

  @Test func closesThatKeepComingPutTheTrimOffForThirtySecondsAtMost() {
    let h = Harness()
    let trimmer = h.makeTrimmer()
    for _ in 0..<MemoryTrimmer.closesPerTrim { trimmer.connectionClosed() }
    // A close every second: never quiet for two.
    var waited: UInt64 = 0
    while h.trimCount == 0 && waited < 60_000_000_000 {
      h.advance(1_000_000_000)
      waited += 1_000_000_000
      trimmer.connectionClosed()
    }
    #expect(h.trimCount == 1)
    #expect(waited >= MemoryTrimmer.longestWaitNanos)
    #expect(waited <= MemoryTrimmer.longestWaitNanos + MemoryTrimmer.quietNanos)
  }
}
