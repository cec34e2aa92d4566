import Synchronization

/// Failed password sign-ins, counted in sliding windows so that guessing is slow, without
/// letting one address lock an account for everyone.
///
/// The policy (all windows 10 minutes by default):
/// - **Per account and IP**: 10 failures for one account from one end-user IP, and that
///   IP must wait before trying that account again. Other IPs, the owner's among them,
///   are not affected.
/// - **Per IP**: 100 failures from one IP across all accounts, and that IP waits.
/// - **Per account, all IPs** (distributed guessing): past 100 failures for one account
///   from any number of IPs, the account is slowed, not locked: it takes one attempt
///   every `slowIntervalMs` (2 s) from IPs that have not signed in to it successfully,
///   while an IP that has signed in to it within `trustMs` (30 days) is not slowed.
/// - A successful sign-in clears that IP's failures for that account, gives the IP its
///   attempt back and trusts the (account, IP) pair.
///
/// Kept in memory: a restart forgets the windows (an attacker gains one fresh window per
/// restart, which is acceptable), and with more than one daemon each counts its own. The
/// number of keys is bounded (`maxKeys`): half for failure counters, half for trusted
/// (account, IP) pairs, so a flood of failures never forgets who signed in. A new key that
/// finds its half full takes the place of a key whose window has passed, or else of the
/// one expiring first (within 1/63 of the window: `DeadlineTable`), and keys whose window
/// has passed are forgotten as attempts come (up to two per key an attempt counts): no
/// walk or sort of the table, under the lock every attempt takes.
public final class SignInThrottle: Sendable {
  /// One limit: `maxFailures` within `windowMs`.
  public struct Limit: Sendable {
    public var maxFailures: Int
    public var windowMs: Int64

    public init(maxFailures: Int, windowMs: Int64) {
      self.maxFailures = maxFailures
      self.windowMs = windowMs
    }
  }

  /// 10 failures per account and IP, 100 per IP, and 100 per account from all IPs before
  /// it is slowed, within 10 minutes.
  public static let defaultAccountLimit = Limit(maxFailures: 10, windowMs: 600_000)
  public static let defaultIPLimit = Limit(maxFailures: 100, windowMs: 600_000)
  public static let defaultGlobalAccountLimit = Limit(maxFailures: 100, windowMs: 600_000)

  /// Per (account, IP).
  public let accountLimit: Limit
  /// Per IP, across accounts.
  public let ipLimit: Limit
  /// Per account, across IPs: past it the account is slowed.
  public let globalAccountLimit: Limit
  /// While slowed, one attempt per this long from untrusted IPs.
  public let slowIntervalMs: Int64
  /// How long a successful sign-in trusts its (account, IP) pair.
  public let trustMs: Int64
  private let maxKeys: Int
  private let state: Mutex<State>

  /// The failure times per key, and when each key's entry expires (its newest time plus
  /// its window): failure counters and trusted pairs in tables of their own.
  private struct State {
    var windows: [String: [Int64]] = [:]
    var failures: DeadlineTable
    var trust: DeadlineTable

    /// Keeps `times` for `key` until its newest time plus `windowMs`, or forgets the key
    /// when that has passed (or there is no time); keys the table drops go with it.
    mutating func store(_ key: String, _ times: [Int64], windowMs: Int64, trusted: Bool = false, nowMs: Int64)
    {
      guard let newest = times.last, newest + windowMs > nowMs else {
        forget(key)
        return
      }
      windows[key] = times
      if trusted {
        trust.set(key, deadline: newest + windowMs, now: nowMs)
        drop(trust.takeDropped(), keeping: key)
      } else {
        failures.set(key, deadline: newest + windowMs, now: nowMs)
        drop(failures.takeDropped(), keeping: key)
      }
    }

    mutating func forget(_ key: String) {
      windows[key] = nil
      failures.remove(key)
      trust.remove(key)
    }

    /// Forgets what the tables dropped on their own (`key`, just set, may be among them).
    private mutating func drop(_ keys: [String], keeping key: String) {
      for dropped in keys where dropped != key { windows[dropped] = nil }
    }
  }

  public init(
    accountLimit: Limit = SignInThrottle.defaultAccountLimit, ipLimit: Limit = SignInThrottle.defaultIPLimit,
    globalAccountLimit: Limit = SignInThrottle.defaultGlobalAccountLimit, slowIntervalMs: Int64 = 2_000,
    trustMs: Int64 = 30 * 86_400_000, maxKeys: Int = 200_000
  ) {
    self.accountLimit = accountLimit
    self.ipLimit = ipLimit
    self.globalAccountLimit = globalAccountLimit
    self.slowIntervalMs = max(1, slowIntervalMs)
    self.trustMs = trustMs
    self.maxKeys = max(8, maxKeys)
    let longest = max(accountLimit.windowMs, ipLimit.windowMs, globalAccountLimit.windowMs)
    state = Mutex(
      State(
        failures: DeadlineTable(
          horizon: max(1, longest), maxKeys: self.maxKeys - self.maxKeys / 2, reportsDrops: true),
        trust: DeadlineTable(horizon: max(1, trustMs), maxKeys: self.maxKeys / 2, reportsDrops: true)))
  }

  /// How many keys are held now (at most `maxKeys` after any attempt).
  public var trackedKeys: Int { state.withLock { $0.windows.count } }

  /// How many (account, IP) pairs are trusted now (at most half of `maxKeys`; for tests).
  var trustedPairs: Int { state.withLock { $0.trust.count } }

  static func accountKey(projectID: String, email: String) -> String { "a\u{0}\(projectID)\u{0}\(email)" }
  static func ipKey(projectID: String, ip: String) -> String { "i\u{0}\(projectID)\u{0}\(ip)" }
  private static func pairKey(_ account: String, _ ip: String?) -> String {
    "p\u{0}\(account)\u{0}\(ip ?? "")"
  }
  private static func trustKey(_ account: String, _ ip: String?) -> String {
    "t\u{0}\(account)\u{0}\(ip ?? "")"
  }

  /// Checks the windows and, when an attempt is allowed, counts it at once, as a failure
  /// until `succeeded` says otherwise. Counting before the password is checked keeps
  /// parallel guesses (up to 128 calls in flight per connection) from all passing the
  /// check before any failure is recorded.
  /// - Parameter account: nil for attempts counted per IP only.
  /// - Returns: seconds until another attempt is allowed (1 or more), or nil when this
  ///   one is allowed (and now counted).
  /// (`package`: `anonauth bench admission-tables` times it.)
  package func reserve(account: String?, ip: String?, nowMs: Int64) -> Int64? {
    state.withLock { state in
      var limited: [(String, Limit)] = []
      if let account { limited.append((Self.pairKey(account, ip), accountLimit)) }
      if let ip { limited.append((ip, ipLimit)) }
      var wait: Int64 = 0
      for (key, limit) in limited {
        guard let times = state.windows[key] else { continue }
        let recent = times.filter { $0 > nowMs - limit.windowMs }
        if recent.count >= limit.maxFailures, let oldest = recent.first {
          wait = max(wait, (oldest + limit.windowMs - nowMs + 999) / 1000)
        }
      }
      if let account, !isTrusted(state.windows, Self.trustKey(account, ip), nowMs: nowMs),
        let times = state.windows[account]
      {
        let recent = times.filter { $0 > nowMs - globalAccountLimit.windowMs }
        if recent.count >= globalAccountLimit.maxFailures, let last = recent.last,
          nowMs - last < slowIntervalMs
        {
          wait = max(wait, (last + slowIntervalMs - nowMs + 999) / 1000)
        }
      }
      if wait > 0 { return max(1, wait) }
      if let account { limited.append((account, globalAccountLimit)) }
      for (key, limit) in limited {
        var times = state.windows[key, default: []].filter { $0 > nowMs - limit.windowMs }
        times.append(nowMs)
        // Only the newest maxFailures matter for the decision.
        if times.count > limit.maxFailures { times.removeFirst(times.count - limit.maxFailures) }
        state.store(key, times, windowMs: limit.windowMs, nowMs: nowMs)
      }
      return nil
    }
  }

  private func isTrusted(_ windows: [String: [Int64]], _ key: String, nowMs: Int64) -> Bool {
    guard let at = windows[key]?.last else { return false }
    return at > nowMs - trustMs
  }

  /// The attempt reserved at `reservedAtMs` succeeded: this IP's failures for the account
  /// are cleared, the IP and the account get the attempt back, and the pair is trusted.
  func succeeded(account: String?, ip: String?, reservedAtMs: Int64) {
    state.withLock { state in
      if let account {
        state.forget(Self.pairKey(account, ip))
        state.store(
          Self.trustKey(account, ip), [reservedAtMs], windowMs: trustMs, trusted: true, nowMs: reservedAtMs)
      }
      giveBack(&state, account: account, ip: ip, reservedAtMs: reservedAtMs)
    }
  }

  /// The attempt reserved at `reservedAtMs` was never judged (the password pool was
  /// full, or the call ended first): it is given back everywhere, nothing else changes.
  package func release(account: String?, ip: String?, reservedAtMs: Int64) {
    state.withLock { state in
      giveBack(&state, account: account, ip: ip, reservedAtMs: reservedAtMs)
      if let account {
        remove(&state, reservedAtMs, from: Self.pairKey(account, ip), windowMs: accountLimit.windowMs)
      }
    }
  }

  /// Takes the attempt reserved at `reservedAtMs` out of the IP's and the account's counts.
  private func giveBack(_ state: inout State, account: String?, ip: String?, reservedAtMs: Int64) {
    if let ip { remove(&state, reservedAtMs, from: ip, windowMs: ipLimit.windowMs) }
    if let account { remove(&state, reservedAtMs, from: account, windowMs: globalAccountLimit.windowMs) }
  }

  private func remove(_ state: inout State, _ time: Int64, from key: String, windowMs: Int64) {
    guard var times = state.windows[key], let index = times.lastIndex(of: time) else { return }
    times.remove(at: index)
    // The key's entry now expires with its newest remaining time (nowMs: the attempt's).
    state.store(key, times, windowMs: windowMs, nowMs: time)
  }
}
