/// A rate per key that counts every unit of work admitted, successes included: the
/// generic cell rate algorithm (a token bucket kept as one deadline per key), as
/// `ConnectionRate` paces new connections. A key may take `burst` units at once, then
/// one every `1 / perSecond` s.
///
/// A key whose bucket is full again needs no entry. The table is bounded: a new key that
/// finds `maxKeys` entries takes the place of one whose bucket is full again, or else of
/// one of the least owed (closest to full: within 1/63 of a burst's length of the least,
/// `DeadlineTable`). A dropped key starts again with a full bucket, which forgives at
/// most one burst; a key that floods owes the most and is dropped last. Each admission
/// costs the same however many keys are held: no prune walks or sorts the table.
struct RateTable {
  /// Microseconds of credit one unit costs.
  private let interval: Int64
  /// How far ahead of now a key's deadline may run: `burst - 1` units' worth.
  private let tolerance: Int64
  /// Per key: when its bucket is full again (microseconds on the service clock).
  private var fullAt: DeadlineTable

  /// How many keys have an entry now.
  var trackedKeys: Int { fullAt.count }

  init(perSecond: Int, burst: Int, maxKeys: Int) {
    interval = 1_000_000 / Int64(max(1, perSecond))
    tolerance = Int64(max(0, burst - 1)) * interval
    // `take` sets a deadline at most tolerance + 2 intervals ahead (see `owed`).
    fullAt = DeadlineTable(horizon: tolerance + 2 * interval, maxKeys: max(16, maxKeys))
  }

  /// Whole seconds (1 or more) until `key` may take a unit, or nil when it may now.
  /// (Mutating only to remember where it found the key, for the `take` that follows.)
  mutating func wait(_ key: String, nowUs: Int64) -> Int64? {
    let due = max(owed(key, nowUs: nowUs), nowUs)
    let over = due - nowUs - tolerance
    guard over > 0 else { return nil }
    return max(1, (over + 999_999) / 1_000_000)
  }

  /// Takes one unit from `key`'s bucket (call after `wait` said it may).
  mutating func take(_ key: String, nowUs: Int64) {
    fullAt.set(key, deadline: max(owed(key, nowUs: nowUs), nowUs) + interval, now: nowUs)
  }

  /// Gives back one unit taken but not used.
  mutating func giveBack(_ key: String, nowUs: Int64) {
    guard let due = fullAt.deadline(key) else { return }
    if due - interval > nowUs {
      fullAt.set(key, deadline: min(due, nowUs + tolerance + interval) - interval, now: nowUs)
    } else {
      fullAt.remove(key)
    }
  }

  /// The key's deadline, never further ahead than a full burst: a wall clock that went
  /// back cannot leave a key refused for the length of the jump.
  private mutating func owed(_ key: String, nowUs: Int64) -> Int64 {
    min(fullAt.deadline(key) ?? nowUs, nowUs + tolerance + interval)
  }
}
