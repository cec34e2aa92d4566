import Testing

@testable import AnonAuthService

/// The admission rate tables' bound (`DeadlineTable`, `RateTable`): who is dropped when a
/// new key finds the table full. Keys whose bucket is full again go first, then the
/// least owed; a key that floods owes the most and stays.
@Suite struct DeadlineTableTests {
  /// A table whose slots are 1,024 us long (a horizon of 100 ms).
  static func table(maxKeys: Int) -> DeadlineTable {
    let table = DeadlineTable(horizon: 100_000, maxKeys: maxKeys)
    #expect(table.quantum == 1024)
    return table
  }

  @Test func theLeastOwedIsDroppedFirst() {
    var table = Self.table(maxKeys: 3)
    let now: Int64 = 1_000_000_000
    table.set("far", deadline: now + 90_000, now: now)
    table.set("near", deadline: now + 5_000, now: now)
    table.set("middle", deadline: now + 40_000, now: now)
    table.set("new", deadline: now + 1, now: now)
    #expect(table.count == 3)
    #expect(table.deadline("near") == nil)
    #expect(table.deadline("far") == now + 90_000)
    #expect(table.deadline("middle") == now + 40_000)
    table.set("newer", deadline: now + 60_000, now: now)
    #expect(table.deadline("new") == nil, "the new key owed least")
    #expect(table.deadline("middle") != nil && table.deadline("far") != nil)
  }

  @Test func aKeyWhoseDeadlinePassedGoesBeforeAnyOwed() {
    var table = Self.table(maxKeys: 3)
    let start: Int64 = 5_000_000
    table.set("passes", deadline: start + 2_000, now: start)
    table.set("owes", deadline: start + 95_000, now: start)
    table.set("owes-less", deadline: start + 60_000, now: start)
    let later = start + 50_000
    table.set("new", deadline: later + 1, now: later)
    #expect(table.deadline("passes") == nil)
    #expect(table.deadline("owes-less") == start + 60_000)
    #expect(table.deadline("owes") == start + 95_000)
    #expect(table.deadline("new") == later + 1)
  }

  /// Keys whose deadline passed are dropped two per `set`, so the table shrinks back.
  @Test func passedKeysAreDroppedAsTimeGoes() {
    var table = Self.table(maxKeys: 1000)
    let start: Int64 = 7_000_000
    for i in 0..<100 { table.set("k\(i)", deadline: start + 10_000, now: start) }
    #expect(table.count == 100)
    let later = start + 200_000
    for i in 0..<60 { table.set("live\(i % 3)", deadline: later + 1_000, now: later + Int64(i)) }
    #expect(table.count == 3)
  }

  /// A key moved to a later slot leaves its old one: the earliest slot's keys are the
  /// ones dropped, whatever order they were first set in.
  @Test func movingAKeyKeepsTheOrder() {
    var table = Self.table(maxKeys: 3)
    let now: Int64 = 9_000_000
    table.set("a", deadline: now + 1_000, now: now)
    table.set("b", deadline: now + 20_000, now: now)
    table.set("c", deadline: now + 30_000, now: now)
    table.set("a", deadline: now + 80_000, now: now)
    table.set("d", deadline: now + 50_000, now: now)
    #expect(table.deadline("b") == nil)
    #expect(table.deadline("a") == now + 80_000)
    table.remove("a")
    #expect(table.deadline("a") == nil)
    #expect(table.count == 2)
  }

  /// The clock going back (or jumping far ahead) leaves every key where it can be found
  /// and the bound kept.
  @Test func theClockGoingBackKeepsTheTableWhole() {
    var table = Self.table(maxKeys: 50)
    var now: Int64 = 100_000_000
    for i in 0..<200 {
      now += i % 7 == 0 ? -300_000 : 40_000
      table.set("k\(i % 80)", deadline: now + Int64(i % 90) * 1_000 + 1, now: now)
      #expect(table.count <= 50)
      #expect(table.deadline("k\(i % 80)") == now + Int64(i % 90) * 1_000 + 1)
    }
    now += 10_000_000_000
    table.set("after", deadline: now + 1, now: now)
    #expect(table.deadline("after") == now + 1)
  }

  /// Through the rate table: a flood of new addresses does not forgive the address that
  /// owes the most.
  @Test func aFloodOfAddressesKeepsTheFlooder() {
    var rates = RateTable(perSecond: 1, burst: 10, maxKeys: 100)
    let now: Int64 = 1_000_000_000_000
    for _ in 0..<10 { rates.take("flooder", nowUs: now) }
    #expect(rates.wait("flooder", nowUs: now) != nil)
    for i in 0..<10_000 {
      let key = "10.0.\(i / 256 % 256).\(i % 256)"
      if rates.wait(key, nowUs: now + Int64(i)) == nil { rates.take(key, nowUs: now + Int64(i)) }
      #expect(rates.trackedKeys <= 100)
    }
    #expect(rates.wait("flooder", nowUs: now + 10_000) != nil, "the flooder is still limited")
  }

  /// A unit given back returns the key's deadline to before it took it.
  @Test func aUnitGivenBackIsCredited() {
    var rates = RateTable(perSecond: 1, burst: 2, maxKeys: 16)
    let now: Int64 = 50_000_000
    rates.take("k", nowUs: now)
    rates.take("k", nowUs: now)
    #expect(rates.wait("k", nowUs: now) == 1)
    rates.giveBack("k", nowUs: now)
    #expect(rates.wait("k", nowUs: now) == nil)
    rates.giveBack("k", nowUs: now)
    #expect(rates.trackedKeys == 0)
  }
}

/// A table made with `reportsDrops` names the keys it dropped on its own (a new key's
/// room, keys whose deadline passed), so a caller keeping data per key drops it too;
/// `remove` and a key set again are not reported.
@Suite struct DeadlineTableDropReportTests {
  @Test func theKeysDroppedToMakeRoomAreReported() {
    var table = DeadlineTable(horizon: 100_000, maxKeys: 2, reportsDrops: true)
    let now: Int64 = 1_000_000_000
    table.set("near", deadline: now + 5_000, now: now)
    table.set("far", deadline: now + 90_000, now: now)
    #expect(table.takeDropped().isEmpty)
    table.set("new", deadline: now + 60_000, now: now)
    #expect(table.takeDropped() == ["near"])
    #expect(table.takeDropped().isEmpty, "taken once")
    table.remove("far")
    #expect(table.takeDropped().isEmpty)
  }

  @Test func keysWhoseDeadlinePassedAreReportedAsTheyGo() {
    var table = DeadlineTable(horizon: 100_000, maxKeys: 100, reportsDrops: true)
    let start: Int64 = 7_000_000
    for i in 0..<3 { table.set("k\(i)", deadline: start + 10_000, now: start) }
    let later = start + 200_000
    table.set("live", deadline: later + 1_000, now: later)
    table.set("live", deadline: later + 2_000, now: later)
    #expect(Set(table.takeDropped()) == ["k0", "k1", "k2"])
    #expect(table.count == 1)
  }

  @Test func aTableThatDoesNotReportKeepsNoList() {
    var table = DeadlineTable(horizon: 100_000, maxKeys: 1)
    let now: Int64 = 1_000_000_000
    table.set("a", deadline: now + 5_000, now: now)
    table.set("b", deadline: now + 6_000, now: now)
    #expect(table.takeDropped().isEmpty)
  }
}
