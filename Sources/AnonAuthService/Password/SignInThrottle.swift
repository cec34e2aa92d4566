import Synchronization

/// Failed password sign-ins, counted in a sliding window per account (project + email)
/// and per end-user IP (project + IP key), so that guessing passwords is slow both for
/// one account and from one address.
///
/// Kept in memory: a restart forgets the windows (an attacker gains one fresh window per
/// restart, which is acceptable), and with more than one daemon each counts its own. The
/// number of keys is bounded; when full, expired windows are dropped first, then the
/// oldest keys.
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

  /// 10 failures per account and 100 per IP within 10 minutes.
  public static let defaultAccountLimit = Limit(maxFailures: 10, windowMs: 600_000)
  public static let defaultIPLimit = Limit(maxFailures: 100, windowMs: 600_000)

  public let accountLimit: Limit
  public let ipLimit: Limit
  private let maxKeys: Int
  private let windows = Mutex<[String: [Int64]]>([:])

  public init(
    accountLimit: Limit = SignInThrottle.defaultAccountLimit, ipLimit: Limit = SignInThrottle.defaultIPLimit,
    maxKeys: Int = 200_000
  ) {
    self.accountLimit = accountLimit
    self.ipLimit = ipLimit
    self.maxKeys = maxKeys
  }

  static func accountKey(projectID: String, email: String) -> String { "a\u{0}\(projectID)\u{0}\(email)" }
  static func ipKey(projectID: String, ip: String) -> String { "i\u{0}\(projectID)\u{0}\(ip)" }

  /// Checks both windows and, when an attempt is allowed, counts it at once, as a
  /// failure until `succeeded` says otherwise. Counting before the password is checked
  /// keeps parallel guesses (up to 128 calls in flight per connection) from all passing
  /// the check before any failure is recorded.
  /// - Returns: seconds until another attempt is allowed (1 or more), or nil when this
  ///   one is allowed (and now counted).
  func reserve(account: String, ip: String?, nowMs: Int64) -> Int64? {
    windows.withLock { windows in
      var wait: Int64 = 0
      for (key, limit) in [(account, accountLimit), (ip, ipLimit)] {
        guard let key, let times = windows[key] else { continue }
        let recent = times.filter { $0 > nowMs - limit.windowMs }
        if recent.count >= limit.maxFailures, let oldest = recent.first {
          wait = max(wait, (oldest + limit.windowMs - nowMs + 999) / 1000)
        }
      }
      if wait > 0 { return max(1, wait) }
      for (key, limit) in [(account, accountLimit), (ip, ipLimit)] {
        guard let key else { continue }
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

  /// The attempt reserved at `reservedAtMs` succeeded: the account's failures are
  /// cleared, and the IP gets its attempt back.
  func succeeded(account: String, ip: String?, reservedAtMs: Int64) {
    windows.withLock { windows in
      windows[account] = nil
      if let ip, var times = windows[ip], let index = times.lastIndex(of: reservedAtMs) {
        times.remove(at: index)
        windows[ip] = times.isEmpty ? nil : times
      }
    }
  }

  private func prune(_ windows: inout [String: [Int64]], nowMs: Int64) {
    let longest = max(accountLimit.windowMs, ipLimit.windowMs)
    windows = windows.filter { ($0.value.last ?? 0) > nowMs - longest }
    guard windows.count > maxKeys else { return }
    let oldestFirst = windows.sorted { ($0.value.last ?? 0) < ($1.value.last ?? 0) }
    for (key, _) in oldestFirst.prefix(windows.count - maxKeys * 9 / 10) { windows[key] = nil }
  }
}
