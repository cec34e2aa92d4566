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
/// number of keys is bounded (`maxKeys`); when full, expired entries are dropped first,
/// then the least recently used.
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
  private let windows = Mutex<[String: [Int64]]>([:])

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
  }

  /// How many keys are held now (at most `maxKeys` after any attempt).
  public var trackedKeys: Int { windows.withLock { $0.count } }

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
  func reserve(account: String?, ip: String?, nowMs: Int64) -> Int64? {
    windows.withLock { windows in
      var limited: [(String, Limit)] = []
      if let account { limited.append((Self.pairKey(account, ip), accountLimit)) }
      if let ip { limited.append((ip, ipLimit)) }
      var wait: Int64 = 0
      for (key, limit) in limited {
        guard let times = windows[key] else { continue }
        let recent = times.filter { $0 > nowMs - limit.windowMs }
        if recent.count >= limit.maxFailures, let oldest = recent.first {
          wait = max(wait, (oldest + limit.windowMs - nowMs + 999) / 1000)
        }
      }
      if let account, !isTrusted(windows, Self.trustKey(account, ip), nowMs: nowMs),
        let times = windows[account]
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
        var times = windows[key, default: []].filter { $0 > nowMs - limit.windowMs }
        times.append(nowMs)
        // Only the newest maxFailures matter for the decision.
        if times.count > limit.maxFailures { times.removeFirst(times.count - limit.maxFailures) }
        windows[key] = times
      }
      if windows.count > maxKeys { prune(&windows, nowMs: nowMs) }
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
    windows.withLock { windows in
      var keys: [String] = []
      if let ip { keys.append(ip) }
      if let account {
        keys.append(account)
        windows[Self.pairKey(account, ip)] = nil
        windows[Self.trustKey(account, ip)] = [reservedAtMs]
      }
      for key in keys {
        guard var times = windows[key], let index = times.lastIndex(of: reservedAtMs) else { continue }
        times.remove(at: index)
        windows[key] = times.isEmpty ? nil : times
      }
      if windows.count > maxKeys { prune(&windows, nowMs: reservedAtMs) }
    }
  }

  /// The attempt reserved at `reservedAtMs` was never judged (the password pool was
  /// full, or the call ended first): it is given back everywhere, nothing else changes.
  func release(account: String?, ip: String?, reservedAtMs: Int64) {
    windows.withLock { windows in
      var keys: [String] = []
      if let ip { keys.append(ip) }
      if let account { keys += [account, Self.pairKey(account, ip)] }
      for key in keys {
        guard var times = windows[key], let index = times.lastIndex(of: reservedAtMs) else { continue }
        times.remove(at: index)
        windows[key] = times.isEmpty ? nil : times
      }
    }
  }

  private func prune(_ windows: inout [String: [Int64]], nowMs: Int64) {
    let longest = max(accountLimit.windowMs, ipLimit.windowMs, globalAccountLimit.windowMs)
    windows = windows.filter { key, times in
      (times.last ?? 0) > nowMs - (key.hasPrefix("t\u{0}") ? trustMs : longest)
    }
    guard windows.count > maxKeys else { return }
    let oldestFirst = windows.sorted { ($0.value.last ?? 0) < ($1.value.last ?? 0) }
    for (key, _) in oldestFirst.prefix(windows.count - maxKeys * 9 / 10) { windows[key] = nil }
  }
}
