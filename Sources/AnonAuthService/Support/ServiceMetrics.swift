import Synchronization

/// What the service layer counts for `/metrics`: sign-ups by provider, quota refusals,
/// and the number of accounts.
public final class ServiceMetrics: Sendable {
  private let signUps = Mutex<[String: Int]>([:])
  public let quotaRefusals = Atomic<Int>(0)
  public let accounts = Atomic<Int64>(0)
  /// Clean-up passes run, and accounts they deleted.
  public let cleanupPasses = Atomic<Int>(0)
  public let cleanedUp = Atomic<Int>(0)

  public init() {}

  func signedUp(provider: String) {
    signUps.withLock { $0[provider, default: 0] += 1 }
    accounts.add(1, ordering: .relaxed)
  }

  func accountsDeleted(_ count: Int64) { accounts.subtract(count, ordering: .relaxed) }

  public func prometheusText() -> String {
    var out = "# HELP anonauth_sign_ups_total Accounts created, by sign-in provider.\n"
    out += "# TYPE anonauth_sign_ups_total counter\n"
    for (provider, count) in signUps.withLock({ $0 }).sorted(by: { $0.key < $1.key }) {
      out += "anonauth_sign_ups_total{provider=\"\(provider)\"} \(count)\n"
    }
    out += "# HELP anonauth_sign_up_quota_refusals_total Sign-ups refused by the per-IP quota.\n"
    out += "# TYPE anonauth_sign_up_quota_refusals_total counter\n"
    out += "anonauth_sign_up_quota_refusals_total \(quotaRefusals.load(ordering: .relaxed))\n"
    out += "# HELP anonauth_accounts Accounts in the store.\n"
    out += "# TYPE anonauth_accounts gauge\n"
    out += "anonauth_accounts \(accounts.load(ordering: .relaxed))\n"
    out += "# HELP anonauth_cleanup_passes_total Clean-up passes run (background and RunCleanup).\n"
    out += "# TYPE anonauth_cleanup_passes_total counter\n"
    out += "anonauth_cleanup_passes_total \(cleanupPasses.load(ordering: .relaxed))\n"
    out += "# HELP anonauth_cleanup_deleted_total Anonymous accounts deleted by clean-up.\n"
    out += "# TYPE anonauth_cleanup_deleted_total counter\n"
    out += "anonauth_cleanup_deleted_total \(cleanedUp.load(ordering: .relaxed))\n"
    return out
  }
}
