import Testing

@testable import AnonAuthStore

/// The commit delay's decision alone, on a clock the test moves: when a small batch is
/// held back for more writes, and for how long at most.
@Suite struct CommitDelayTests {
  static let millisecond: UInt64 = 1_000_000

  /// A delay of 1 ms that has seen `count` submissions `gap` apart, the last at `end`.
  static func streamed(count: Int, gap: UInt64, end: UInt64, fullBatch: Int = 256) -> CommitDelay {
    var delay = CommitDelay(delayNanoseconds: millisecond, fullBatch: fullBatch)
    for index in 0..<count { delay.submitted(at: end - UInt64(count - 1 - index) * gap) }
    return delay
  }

  @Test func aStreamOfWritesHoldsASmallBatchUntilItsOldestHasWaitedTheDelay() {
    let now: UInt64 = 1_000 * Self.millisecond
    let delay = Self.streamed(count: 40, gap: 100_000, end: now)  // 10,000 writes a second
    let oldest = now - 300_000
    #expect(delay.holdUntil(queued: 3, oldestSubmittedAt: oldest, now: now) == oldest + Self.millisecond)
  }

  @Test func aLoneWriteAfterAQuietSpellIsNotHeld() {
    var delay = CommitDelay(delayNanoseconds: Self.millisecond, fullBatch: 256)
    let now: UInt64 = 5_000 * Self.millisecond
    #expect(delay.holdUntil(queued: 1, oldestSubmittedAt: now, now: now) == nil)
    delay.submitted(at: now)
    #expect(delay.holdUntil(queued: 1, oldestSubmittedAt: now, now: now) == nil)
  }

  @Test func aWriteAfterAPauseInAStreamIsNotHeld() {
    // A quiet gap counts at most eight delays, so one pause of any length after a stream
    // must still lift the average above half the delay.
    let streamEnd: UInt64 = 1_000 * Self.millisecond
    var delay = Self.streamed(count: 40, gap: 10_000, end: streamEnd)
    let later = streamEnd + 3_600_000 * Self.millisecond
    delay.submitted(at: later)
    #expect(delay.holdUntil(queued: 1, oldestSubmittedAt: later, now: later) == nil)
  }

  @Test func writesSlowerThanTwoPerDelayAreNotHeld() {
    let now: UInt64 = 1_000 * Self.millisecond
    // One every 0.6 ms: fewer than two expected within the 1 ms delay.
    let slow = Self.streamed(count: 200, gap: 600_000, end: now)
    #expect(slow.holdUntil(queued: 1, oldestSubmittedAt: now, now: now) == nil)
    // One every 0.4 ms: held.
    let fast = Self.streamed(count: 200, gap: 400_000, end: now)
    #expect(fast.holdUntil(queued: 1, oldestSubmittedAt: now, now: now) == now + Self.millisecond)
  }

  @Test func aQuietSpellIsForgottenAfterAFewFastWrites() {
    var delay = CommitDelay(delayNanoseconds: Self.millisecond, fullBatch: 256)
    var now: UInt64 = 1_000 * Self.millisecond
    delay.submitted(at: now)
    now += 3_600_000 * Self.millisecond  // an hour without writes
    for _ in 0..<30 {
      delay.submitted(at: now)
      now += 50_000
    }
    #expect(delay.holdUntil(queued: 2, oldestSubmittedAt: now, now: now) != nil)
  }

  @Test func writesThatHaveWaitedTheDelayAlreadyAreNotHeld() {
    // A slow commit: the writes queued behind it are older than the delay.
    let now: UInt64 = 1_000 * Self.millisecond
    let delay = Self.streamed(count: 40, gap: 100_000, end: now)
    #expect(delay.holdUntil(queued: 5, oldestSubmittedAt: now - Self.millisecond, now: now) == nil)
    #expect(delay.holdUntil(queued: 5, oldestSubmittedAt: now - 5 * Self.millisecond, now: now) == nil)
  }

  @Test func aFullBatchIsNotHeld() {
    let now: UInt64 = 1_000 * Self.millisecond
    let delay = Self.streamed(count: 40, gap: 10_000, end: now, fullBatch: 8)
    #expect(delay.holdUntil(queued: 7, oldestSubmittedAt: now, now: now) != nil)
    #expect(delay.holdUntil(queued: 8, oldestSubmittedAt: now, now: now) == nil)
  }

  @Test func aDelayOfZeroNeverHolds() {
    var delay = CommitDelay(delayNanoseconds: 0, fullBatch: 256)
    for index in 0..<100 { delay.submitted(at: UInt64(index)) }
    #expect(delay.holdUntil(queued: 1, oldestSubmittedAt: 99, now: 99) == nil)
  }

  @Test func anEmptyQueueIsNotHeld() {
    let now: UInt64 = 1_000 * Self.millisecond
    let delay = Self.streamed(count: 40, gap: 10_000, end: now)
    #expect(delay.holdUntil(queued: 0, oldestSubmittedAt: now, now: now) == nil)
  }
}
