import Testing

@testable import AnonAuthService

/// Log lines that outsiders can cause are budgeted: a burst, then one per interval, and
/// the next line allowed says how many were not written.
@Suite struct LogBudgetTests {
  static let second: UInt64 = 1_000_000_000

  @Test func aBurstThenOneAnIntervalWithTheCountOfTheRest() {
    let budget = LogBudget(burst: 3, intervalNs: Self.second, nowNs: 0)
    #expect((0..<3).map { _ in budget.take(nowNs: 0) } == [0, 0, 0])
    // A flood within the same instant: nothing more is written, all of it is counted.
    for _ in 0..<1_000 { #expect(budget.take(nowNs: 0) == nil) }
    #expect(budget.take(nowNs: Self.second / 2) == nil)
    // A second later one line, carrying the count of those not written.
    #expect(budget.take(nowNs: Self.second) == 1_001)
    #expect(budget.take(nowNs: Self.second) == nil)
    #expect(budget.take(nowNs: 2 * Self.second) == 1)
  }

  @Test func aQuietSpellRefillsTheBurstButNoMore() {
    let budget = LogBudget(burst: 2, intervalNs: Self.second, nowNs: 0)
    #expect(budget.take(nowNs: 0) == 0)
    #expect(budget.take(nowNs: 0) == 0)
    #expect(budget.take(nowNs: 0) == nil)
    // An hour later: the burst again, not 3,600 lines.
    let later = 3_600 * Self.second
    #expect(budget.take(nowNs: later) == 1)
    #expect(budget.take(nowNs: later) == 0)
    #expect(budget.take(nowNs: later) == nil)
  }

  @Test func aClockThatSeemsToGoBackEarnsNothing() {
    let budget = LogBudget(burst: 1, intervalNs: Self.second, nowNs: 10 * Self.second)
    #expect(budget.take(nowNs: 10 * Self.second) == 0)
    #expect(budget.take(nowNs: 5 * Self.second) == nil)
    #expect(budget.take(nowNs: 11 * Self.second) == 1)
  }
}
