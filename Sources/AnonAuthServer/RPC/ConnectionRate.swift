import AnonAuthService

/// The pace of new connections per peer: a flood of short-lived connections (1,600 a
/// second from eight addresses) costs the loop an accept, a TLS object and a timer each,
/// and comes in bursts that delay every other connection's frames; the cap on *open*
/// connections does not bound it, since each one closes soon.
///
/// The generic cell rate algorithm (a token bucket kept as one deadline per peer): a peer
/// may open `burst` connections at once, then one every `1 / perSecond` s. A peer whose
/// bucket is full again needs no entry: each admission forgets up to two such peers
/// (`DeadlineTable`, deadlines kept in slots by time), so the table holds about the
/// peers seen within the last `burst / perSecond` seconds, and no admission walks it
/// (it used to be filtered whole, under the limiter's lock, each time it doubled).
struct ConnectionRate {
  /// Nanoseconds of credit one connection costs.
  private let interval: UInt64
  /// How far ahead of now a peer's deadline may run: `burst - 1` connections' worth.
  private let tolerance: UInt64
  /// Per peer: when its bucket is full again (nanoseconds on the monotonic clock).
  private var fullAt: DeadlineTable
  /// Per penalized peer: when the penalty's debt is paid off.
  private var penalizedUntil: DeadlineTable

  /// How many peers have an entry now (for tests).
  var trackedPeers: Int { fullAt.count }
  /// How many penalized peers have an entry now (for tests).
  var penalizedPeers: Int { penalizedUntil.count }

  init(perSecond: Int, burst: Int) {
    interval = 1_000_000_000 / UInt64(max(1, perSecond))
    tolerance = UInt64(max(0, burst - 1)) * interval
    // A deadline runs at most a penalty past the tolerance (`penalize`), or one interval.
    let horizon = tolerance + max(interval, Self.maxPenaltyNanos)
    fullAt = DeadlineTable(horizon: Int64(clamping: horizon), maxKeys: .max)
    penalizedUntil = DeadlineTable(horizon: Int64(clamping: horizon), maxKeys: .max)
  }

  /// Charges `peer` for `connections` more connections than it opened (a connection
  /// ended for abuse costs its address more of its pace), so that an attacker whose
  /// connections are cut cannot reconnect as fast as a client that behaves. The debt runs
  /// at most `maxPenaltyNanos` past the bucket's tolerance, so a shared address is held
  /// back, not shut out.
  mutating func penalize(_ peer: String, connections: Int, now: UInt64) {
    let due = max(deadline(peer) ?? now, now)
    let charged = due + UInt64(max(0, connections)) * interval
    let capped = min(charged, now + tolerance + Self.maxPenaltyNanos)
    guard capped > now else { return }
    fullAt.set(peer, deadline: Int64(clamping: capped), now: Int64(clamping: now))
    penalizedUntil.set(peer, deadline: Int64(clamping: capped), now: Int64(clamping: now))
  }

  /// Whether `peer` was penalized and has not yet paid the debt off (its bucket is not
  /// full again): its connections are served after those of peers that behave
  /// (`ByteStream.deprioritized`).
  mutating func isPenalized(_ peer: String, now: UInt64) -> Bool {
    (penalizedUntil.deadline(peer) ?? 0) > Int64(clamping: now)
  }

  static let maxPenaltyNanos: UInt64 = 10_000_000_000

  /// Takes one connection's credit from `peer`'s bucket, or says it is empty.
  mutating func admit(_ peer: String, now: UInt64) -> Bool {
    let due = max(deadline(peer) ?? now, now)
    if due - now > tolerance { return false }
    fullAt.set(peer, deadline: Int64(clamping: due + interval), now: Int64(clamping: now))
    // Penalties are set rarely: paid-off ones are forgotten as connections are admitted.
    penalizedUntil.forgetPassed(now: Int64(clamping: now))
    return true
  }

  private mutating func deadline(_ peer: String) -> UInt64? {
    fullAt.deadline(peer).map { UInt64(max(0, $0)) }
  }
}
