import Synchronization

/// What the service layer counts for `/metrics`: sign-ups by provider, quota refusals,
/// clean-up passes and the accounts they deleted, and the number of accounts.
public final class ServiceMetrics: Sendable {
  private let signUps = Mutex<[String: Int]>([:])
  private let links = Mutex<[String: Int]>([:])
  public let quotaRefusals = Atomic<Int>(0)
  public let accounts = Atomic<Int64>(0)
  /// Clean-up passes finished (by the worker or `RunCleanup`).
  public let cleanupPasses = Atomic<Int>(0)
  /// Anonymous accounts those passes deleted.
  public let cleanedUp = Atomic<Int64>(0)
  /// Password checks refused because the password pool's queue was full.
  public let passwordPoolRefusals = Atomic<Int>(0)
  /// Identity-provider calls refused because the provider's concurrency bound was full.
  public let providerBusyRefusals = Atomic<Int>(0)
  /// Sign-ins refused by the failed-sign-in throttles (password, identity provider).
  public let passwordThrottled = Atomic<Int>(0)
  public let idpThrottled = Atomic<Int>(0)
  /// Work refused by fair admission, by kind of work and limit ("password/ip_rate").
  private let refusedAdmissions = Mutex<[String: Int]>([:])

  public init() {}

  /// The clean-up worker calls this once per finished pass, whatever it deleted (a pass
  /// that deleted nothing still shows the worker is alive). It also takes `deleted` off
  /// the accounts gauge, so the worker calls nothing else for those accounts.
  public func recordCleanupPass(deleted: Int64) {
    cleanupPasses.add(1, ordering: .relaxed)
    cleanedUp.add(deleted, ordering: .relaxed)
    accounts.subtract(deleted, ordering: .relaxed)
  }

  func signedUp(provider: String) {
    signUps.withLock { $0[provider, default: 0] += 1 }
    accounts.add(1, ordering: .relaxed)
  }

  func accountsDeleted(_ count: Int64) { accounts.subtract(count, ordering: .relaxed) }

  func admissionRefused(_ work: AdmissionWork, _ limit: Admission.Limit) {
    refusedAdmissions.withLock { $0["\(work)/\(limit.rawValue)", default: 0] += 1 }
  }

  /// How many units of `work` fair admission refused for `limit`.
  public func admissionRefusals(_ work: AdmissionWork, _ limit: Admission.Limit) -> Int {
    refusedAdmissions.withLock { $0["\(work)/\(limit.rawValue)", default: 0] }
  }

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
    out += "# HELP anonauth_overload_refusals_total Calls refused at once because a bounded queue was full.\n"
    out += "# TYPE anonauth_overload_refusals_total counter\n"
    out +=
      "anonauth_overload_refusals_total{queue=\"password_pool\"} \(passwordPoolRefusals.load(ordering: .relaxed))\n"
    out +=
      "anonauth_overload_refusals_total{queue=\"identity_provider\"} \(providerBusyRefusals.load(ordering: .relaxed))\n"
    out += "# HELP anonauth_sign_in_throttled_total Sign-ins refused by the failed-sign-in throttles.\n"
    out += "# TYPE anonauth_sign_in_throttled_total counter\n"
    out +=
      "anonauth_sign_in_throttled_total{kind=\"password\"} \(passwordThrottled.load(ordering: .relaxed))\n"
    out +=
      "anonauth_sign_in_throttled_total{kind=\"identity_provider\"} \(idpThrottled.load(ordering: .relaxed))\n"
    out += "# HELP anonauth_admission_refusals_total Work refused by fair admission, by kind and limit.\n"
    out += "# TYPE anonauth_admission_refusals_total counter\n"
    let refused = refusedAdmissions.withLock { $0 }
    for work in AdmissionWork.allCases {
      for limit in Admission.Limit.allCases {
        let count = refused["\(work)/\(limit.rawValue)", default: 0]
        out += "anonauth_admission_refusals_total{work=\"\(work)\",limit=\"\(limit.rawValue)\"} \(count)\n"
      }
    }
    out += "# HELP anonauth_accounts Accounts in the store.\n"
    out += "# TYPE anonauth_accounts gauge\n"
    out += "anonauth_accounts \(accounts.load(ordering: .relaxed))\n"
    out += "# HELP anonauth_cleanup_passes_total Clean-up passes finished.\n"
    out += "# TYPE anonauth_cleanup_passes_total counter\n"
    out += "anonauth_cleanup_passes_total \(cleanupPasses.load(ordering: .relaxed))\n"
    out += "# HELP anonauth_cleaned_up_accounts_total Anonymous accounts deleted by clean-up passes.\n"
    out += "# TYPE anonauth_cleaned_up_accounts_total counter\n"
    out += "anonauth_cleaned_up_accounts_total \(cleanedUp.load(ordering: .relaxed))\n"
    return out
  }
}
