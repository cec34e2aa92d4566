import AnonAuthService
import Testing

@testable import AnonAuthServer

/// The budgets of partly received bytes: per peer IP beside the process's, trusted
/// proxies counting only against the process's, and every byte given back on close.
@Suite struct ReceiveBudgetTests {
  static let mib = 1024 * 1024

  @Test func aPeerIsRefusedOverItsOwnBudgetAndOthersAreNot() {
    let budget = ReceiveBudget(maxBytes: 100 * Self.mib, maxBytesPerIP: 8 * Self.mib, exempt: [])
    let first = budget.account(for: "192.0.2.1")
    let second = budget.account(for: "192.0.2.1")
    #expect(first.resize(to: 5 * Self.mib))
    #expect(!second.resize(to: 4 * Self.mib))
    #expect(second.refusal == .perIP)
    #expect(second.charged == 0)  // a refused growth changes nothing
    #expect(second.resize(to: 3 * Self.mib))
    // Another address has its own budget.
    let other = budget.account(for: "198.51.100.7")
    #expect(other.resize(to: 8 * Self.mib))
    #expect(budget.totalBytes == 16 * Self.mib)
    // Shrinking always succeeds, and frees room for the peer.
    #expect(first.resize(to: 1 * Self.mib))
    #expect(second.resize(to: 7 * Self.mib))
    first.release()
    second.release()
    other.release()
    #expect(budget.totalBytes == 0)
    #expect(budget.bytes(forPeer: "192.0.2.1") == 0)
  }

  @Test func theProcessBudgetBindsEveryPeer() {
    let budget = ReceiveBudget(maxBytes: 10 * Self.mib, maxBytesPerIP: 8 * Self.mib, exempt: [])
    let a = budget.account(for: "192.0.2.1")
    let b = budget.account(for: "192.0.2.2")
    #expect(a.resize(to: 8 * Self.mib))
    #expect(!b.resize(to: 3 * Self.mib))
    #expect(b.refusal == .process)
    #expect(b.resize(to: 2 * Self.mib))
  }

  /// One subscriber holds a whole /64: its addresses share a budget.
  @Test func anIPv6Slash64IsOnePeer() {
    let budget = ReceiveBudget(maxBytes: 100 * Self.mib, maxBytesPerIP: 4 * Self.mib, exempt: [])
    #expect(budget.account(for: "2001:db8:1:2::1").resize(to: 3 * Self.mib))
    #expect(!budget.account(for: "2001:db8:1:2::ffff").resize(to: 2 * Self.mib))
    #expect(budget.account(for: "2001:db8:1:3::1").resize(to: 2 * Self.mib))
  }

  @Test func trustedProxiesCountOnlyAgainstTheProcess() throws {
    let proxy = try #require(IPNetwork("10.0.0.0/8"))
    let budget = ReceiveBudget(maxBytes: 20 * Self.mib, maxBytesPerIP: 4 * Self.mib, exempt: [proxy])
    let accounts = (0..<4).map { _ in budget.account(for: "10.1.2.3") }
    for account in accounts { #expect(account.resize(to: 4 * Self.mib)) }
    #expect(budget.bytes(forPeer: "10.1.2.3") == 0)
    let last = budget.account(for: "10.1.2.3")
    #expect(!last.resize(to: 5 * Self.mib))
    #expect(last.refusal == .process)
  }
}
