/// The pace of new connections per peer: a flood of short-lived connections (1,600 a
/// second from eight addresses) costs the loop an accept, a TLS object and a timer each,
/// and comes in bursts that delay every other connection's frames; the cap on *open*
/// connections does not bound it, since each one closes soon.
///
/// The generic cell rate algorithm (a token bucket kept as one deadline per peer): a peer
/// may open `burst` connections at once, then one every `1 / perSecond` s. A peer whose
/// bucket is full again has no entry; entries are pruned when the table doubles, so it
/// holds only peers seen within the last `burst / perSecond` seconds.
struct ConnectionRate {
  /// Nanoseconds of credit one connection costs.
  private let interval: UInt64
  /// How far ahead of now a peer's deadline may run: `burst - 1` connections' worth.
  private let tolerance: UInt64
  /// Per peer: when its bucket is full again.
  private var fullAt: [String: UInt64] = [:]
  /// Per penalized peer: when the penalty's debt is paid off.
  private var penalizedUntil: [String: UInt64] = [:]
  private var pruneAtCount = Self.minimumPruneCount
  private static let minimumPruneCount = 1024

  /// How many peers have an entry now (for tests).
  var trackedPeers: Int { fullAt.count }

  init(perSecond: Int, burst: Int) {
    interval = 1_000_000_000 / UInt64(max(1, perSecond))
    tolerance = UInt64(max(0, burst - 1)) * interval
  }

  /// Charges `peer` for `connections` more connections than it opened (a connection
  /// ended for abuse costs its address more of its pace), so that an attacker whose
  /// connections are cut cannot reconnect as fast as a client that behaves. The debt runs
  /// at most `maxPenaltyNanos` past the bucket's tolerance, so a shared address is held
  /// back, not shut out.
  mutating func penalize(_ peer: String, connections: Int, now: UInt64) {
    let due = max(fullAt[peer] ?? now, now)
    let charged = due + UInt64(max(0, connections)) * interval
    let until = min(charged, now + tolerance + Self.maxPenaltyNanos)
    fullAt[peer] = until
    penalizedUntil[peer] = until
    if penalizedUntil.count >= pruneAtCount { prune(now: now) }
  }

  /// Whether `peer` was penalized and has not yet paid the debt off (its bucket is not
  /// full again): its connections are served after those of peers that behave
  /// (`ByteStream.deprioritized`).
  func isPenalized(_ peer: String, now: UInt64) -> Bool {
    (penalizedUntil[peer] ?? 0) > now
  }

  static let maxPenaltyNanos: UInt64 = 10_000_000_000

  /// Takes one connection's credit from `peer`'s bucket, or says it is empty.
  mutating func admit(_ peer: String, now: UInt64) -> Bool {
    let due = max(fullAt[peer] ?? now, now)
    if due - now > tolerance { return false }
    fullAt[peer] = due + interval
    if fullAt.count >= pruneAtCount { prune(now: now) }
    return true
  }

  /// Forgets peers whose buckets are full again (and penalties paid off).
  private mutating func prune(now: UInt64) {
    fullAt = fullAt.filter { $0.value > now }
    penalizedUntil = penalizedUntil.filter { $0.value > now }
    pruneAtCount = max(Self.minimumPruneCount, 2 * max(fullAt.count, penalizedUntil.count))
  }
}
