import Synchronization

/// What the service layer counts for `/metrics`: sign-ups by provider, quota refusals,
/// and the number of accounts.
public final class ServiceMetrics: Sendable {
  private let signUps = Mutex<[String: Int]>([:])
  private let links = Mutex<[String: Int]>([:])
  public let quotaRefusals = Atomic<Int>(0)
  public let accounts = Atomic<Int64>(0)

  public init() {}

  func signedUp(provider: String) {
    signUps.withLock { $0[provider, default: 0] += 1 }
    accounts.add(1, ordering: .relaxed)
  }

  func accountsDeleted(_ count: Int64) { accounts.subtract(count, ordering: .relaxed) }

  func linked(provider: String) { links.withLock { $0[provider, default: 0] += 1 } }

  public func prometheusText() -> String {
    var out = "# HELP anonauth_sign_ups_total Accounts created, by sign-in provider.\n"
    out += "# TYPE anonauth_sign_ups_total counter\n"
    for (provider, count) in signUps.withLock({ $0 }).sorted(by: { $0.key < $1.key }) {
      out += "anonauth_sign_ups_total{provider=\"\(provider)\"} \(count)\n"
    }
    out += "# HELP anonauth_links_total Credentials linked to existing accounts, by provider.\n"
    out += "# TYPE anonauth_links_total counter\n"
    for (provider, count) in links.withLock({ $0 }).sorted(by: { $0.key < $1.key }) {
      out += "anonauth_links_total{provider=\"\(provider)\"} \(count)\n"
    }
    out += "# HELP anonauth_sign_up_quota_refusals_total Sign-ups refused by the per-IP quota.\n"
    out += "# TYPE anonauth_sign_up_quota_refusals_total counter\n"
    out += "anonauth_sign_up_quota_refusals_total \(quotaRefusals.load(ordering: .relaxed))\n"
    out += "# HELP anonauth_accounts Accounts in the store.\n"
    out += "# TYPE anonauth_accounts gauge\n"
    out += "anonauth_accounts \(accounts.load(ordering: .relaxed))\n"
    return out
  }
}
