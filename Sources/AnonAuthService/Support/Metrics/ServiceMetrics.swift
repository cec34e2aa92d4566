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
  /// Email actions' mails: delivered, retried later, given up.
  public let mailsSent = Atomic<Int>(0)
  public let mailsRetried = Atomic<Int>(0)
  public let mailsFailed = Atomic<Int>(0)

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

  /// The service's families (declared in `MetricFamilies`) in Prometheus text.
  public func prometheusText() -> String {
    typealias F = MetricFamilies
    var out = F.signUps.header
    for (provider, count) in signUps.withLock({ $0 }).sorted(by: { $0.key < $1.key }) {
      out += F.signUps.sample(count, provider)
    }
    out += F.links.header
    for (provider, count) in links.withLock({ $0 }).sorted(by: { $0.key < $1.key }) {
      out += F.links.sample(count, provider)
    }
    out += F.signUpQuotaRefusals.single(quotaRefusals.load(ordering: .relaxed))
    out += F.overloadRefusals.header
    out += F.overloadRefusals.sample(passwordPoolRefusals.load(ordering: .relaxed), "password_pool")
    out += F.overloadRefusals.sample(providerBusyRefusals.load(ordering: .relaxed), "identity_provider")
    out += F.signInThrottled.header
    out += F.signInThrottled.sample(passwordThrottled.load(ordering: .relaxed), "password")
    out += F.signInThrottled.sample(idpThrottled.load(ordering: .relaxed), "identity_provider")
    out += F.admissionRefusals.header
    let refused = refusedAdmissions.withLock { $0 }
    for work in AdmissionWork.allCases {
      for limit in Admission.Limit.allCases {
        let count = refused["\(work)/\(limit.rawValue)", default: 0]
        out += F.admissionRefusals.sample(count, "\(work)", limit.rawValue)
      }
    }
    out += F.accounts.single(accounts.load(ordering: .relaxed))
    out += F.cleanupPasses.single(cleanupPasses.load(ordering: .relaxed))
    out += F.cleanedUpAccounts.single(cleanedUp.load(ordering: .relaxed))
    out += F.mails.header
    out += F.mails.sample(mailsSent.load(ordering: .relaxed), "sent")
    out += F.mails.sample(mailsRetried.load(ordering: .relaxed), "retried")
    out += F.mails.sample(mailsFailed.load(ordering: .relaxed), "failed")
    return out
  }
}
