/// A rate per key that counts every unit of work admitted, successes included: the
/// generic cell rate algorithm (a token bucket kept as one deadline per key), as
/// `ConnectionRate` paces new connections. A key may take `burst` units at once, then
/// one every `1 / perSecond` s.
///
/// A key whose bucket is full again has no entry. The table is bounded: when it reaches
/// `maxKeys`, entries whose bucket is full again are dropped, and if that is not enough
/// the ones closest to full (the least owed) go, down to nine tenths of `maxKeys`. A
/// dropped key starts again with a full bucket, which forgives at most one burst.
struct RateTable {
  /// Microseconds of credit one unit costs.
  private let interval: Int64
  /// How far ahead of now a key's deadline may run: `burst - 1` units' worth.
  private let tolerance: Int64
  private let maxKeys: Int
  /// Per key: when its bucket is full again (microseconds on the service clock).
  private var fullAt: [String: Int64] = [:]
  private var pruneAtCount: Int

  /// How many keys have an entry now.
  var trackedKeys: Int { fullAt.count }

  init(perSecond: Int, burst: Int, maxKeys: Int) {
    interval = 1_000_000 / Int64(max(1, perSecond))
    tolerance = Int64(max(0, burst - 1)) * interval
    self.maxKeys = max(16, maxKeys)
    pruneAtCount = min(self.maxKeys, 1024)
  }

  /// Whole seconds (1 or more) until `key` may take a unit, or nil when it may now.
  func wait(_ key: String, nowUs: Int64) -> Int64? {
    let due = max(owed(key, nowUs: nowUs), nowUs)
    let over = due - nowUs - tolerance
    guard over > 0 else { return nil }
    return max(1, (over + 999_999) / 1_000_000)
  }

  /// Takes one unit from `key`'s bucket (call after `wait` said it may).
  mutating func take(_ key: String, nowUs: Int64) {
    fullAt[key] = max(owed(key, nowUs: nowUs), nowUs) + interval
    if fullAt.count >= pruneAtCount { prune(nowUs: nowUs) }
  }

  /// Gives back one unit taken but not used.
  mutating func giveBack(_ key: String, nowUs: Int64) {
    guard let due = fullAt[key] else { return }
    fullAt[key] = due - interval > nowUs ? due - interval : nil
  }

  /// The key's deadline, never further ahead than a full burst: a wall clock that went
  /// back cannot leave a key refused for the length of the jump.
  private func owed(_ key: String, nowUs: Int64) -> Int64 {
    min(fullAt[key] ?? nowUs, nowUs + tolerance + interval)
  }

  private mutating func prune(nowUs: Int64) {
    fullAt = fullAt.filter { $0.value > nowUs }
    if fullAt.count >= maxKeys {
      let keep = maxKeys * 9 / 10
      let leastOwed = fullAt.sorted { $0.value < $1.value }.prefix(fullAt.count - keep)
      for (key, _) in leastOwed { fullAt[key] = nil }
    }
    pruneAtCount = min(maxKeys, max(1024, 2 * fullAt.count))
  }
}
