import AnonAuthService
import Testing

@Suite("Service metrics")
struct ServiceMetricsTests {
  @Test("a clean-up pass counts, adds what it deleted and takes it off the accounts gauge")
  func cleanupPasses() {
    let metrics = ServiceMetrics()
    metrics.accounts.store(10, ordering: .relaxed)
    metrics.recordCleanupPass(deleted: 3)
    metrics.recordCleanupPass(deleted: 0)
    #expect(metrics.cleanupPasses.load(ordering: .relaxed) == 2)
    #expect(metrics.cleanedUp.load(ordering: .relaxed) == 3)
    #expect(metrics.accounts.load(ordering: .relaxed) == 7)
    let text = metrics.prometheusText()
    #expect(text.contains("anonauth_cleanup_passes_total 2\n"))
    #expect(text.contains("anonauth_cleaned_up_accounts_total 3\n"))
    #expect(text.contains("anonauth_accounts 7\n"))
  }
}
