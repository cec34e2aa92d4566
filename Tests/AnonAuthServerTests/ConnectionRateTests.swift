import AnonAuthService
import Synchronization
import Testing

@testable import AnonAuthServer

/// `--max-connection-rate-per-ip`: a peer opens a burst as large as the per-IP cap at
/// once, then connections at the set pace; other peers and trusted proxies are not
/// paced, and the table of paced peers does not grow without bound.
@Suite struct ConnectionRateTests {
  /// A clock the test moves by hand.
  final class Clock: Sendable {
    let nanos = Atomic<UInt64>(1_000_000_000)
    func advance(milliseconds: UInt64) { nanos.add(milliseconds * 1_000_000, ordering: .relaxed) }
    var read: @Sendable () -> UInt64 { { [self] in nanos.load(ordering: .relaxed) } }
  }

  /// A limiter whose pace runs on a clock the test moves, and that clock.
  static func paced(maxConnections: Int = 1000, maxPerIP: Int, ratePerIP: Int) -> (Clock, ConnectionLimiter) {
    let clock = Clock()
    let limiter = ConnectionLimiter(
      maxConnections: maxConnections, maxPerIP: maxPerIP, ratePerIP: ratePerIP, exempt: [], now: clock.read)
    return (clock, limiter)
  }

  /// Short-lived connections: each admitted and closed at once, so the cap on open
  /// connections never binds and only the pace can refuse.
  func openAndClose(_ limiter: ConnectionLimiter, _ peer: String, times: Int) {
    for _ in 0..<times {
      #expect(limiter.admit(peer) == nil)
      limiter.release(peer)
    }
  }

  @Test func aBurstThenThePace() {
    let (clock, limiter) = Self.paced(maxPerIP: 5, ratePerIP: 10)
    openAndClose(limiter, "192.0.2.1", times: 5)
    #expect(limiter.admit("192.0.2.1") == .rate)
    #expect(limiter.admit("192.0.2.2") == nil)  // another peer has a bucket of its own
    clock.advance(milliseconds: 99)
    #expect(limiter.admit("192.0.2.1") == .rate)
    clock.advance(milliseconds: 1)  // 100 ms: one connection's worth at 10 a second
    #expect(limiter.admit("192.0.2.1") == nil)
    #expect(limiter.admit("192.0.2.1") == .rate)
    clock.advance(milliseconds: 10_000)  // full again, and no more than full
    openAndClose(limiter, "192.0.2.1", times: 5)
    #expect(limiter.admit("192.0.2.1") == .rate)
  }

  @Test func aPenaltyCostsThePeerItsPaceAndIsBounded() {
    let (clock, limiter) = Self.paced(maxPerIP: 5, ratePerIP: 10)
    // A connection ended for abuse costs 3 connections of the pace: 2 of the burst left.
    limiter.penalize("192.0.2.1", connections: 3)
    openAndClose(limiter, "192.0.2.1", times: 2)
    #expect(limiter.admit("192.0.2.1") == .rate)
    #expect(limiter.admit("192.0.2.2") == nil)  // others are not charged
    // A huge debt is capped: 10 s past the burst, then the peer connects again.
    limiter.penalize("192.0.2.1", connections: 1_000_000)
    clock.advance(milliseconds: 9_000)
    #expect(limiter.admit("192.0.2.1") == .rate)
    clock.advance(milliseconds: 10_000)
    #expect(limiter.admit("192.0.2.1") == nil)
  }

  @Test func aPenalizedPeerIsDeprioritizedUntilItsDebtIsPaid() {
    let clock = Clock()
    let limiter = ConnectionLimiter(
      maxConnections: 1000, maxPerIP: 5, ratePerIP: 10, exempt: [], now: clock.read)
    openAndClose(limiter, "192.0.2.1", times: 1)
    #expect(!limiter.isPenalized("192.0.2.1"))  // connecting is not abuse
    limiter.penalize("192.0.2.1", connections: 8)
    #expect(limiter.isPenalized("192.0.2.1"))
    #expect(!limiter.isPenalized("192.0.2.2"))
    // 9 connections at 10 a second: paid off after 900 ms, not before.
    clock.advance(milliseconds: 899)
    #expect(limiter.isPenalized("192.0.2.1"))
    clock.advance(milliseconds: 1)
    #expect(!limiter.isPenalized("192.0.2.1"))
    // Paid-off penalties are forgotten as later connections are admitted.
    for n in 0..<100 { limiter.penalize("198.51.100.\(n)", connections: 1) }
    #expect(limiter.penalizedPeers >= 100)
    clock.advance(milliseconds: 20_000)
    openAndClose(limiter, "192.0.2.9", times: 5)
    clock.advance(milliseconds: 20_000)
    openAndClose(limiter, "192.0.2.8", times: 5)
    clock.advance(milliseconds: 20_000)
    for n in 0..<50 { openAndClose(limiter, "203.0.113.\(n)", times: 1) }
    #expect(limiter.penalizedPeers == 0)
    // Without a pace there is no debt to pay off.
    let unpaced = ConnectionLimiter(maxConnections: 1000, maxPerIP: 5, exempt: [], now: clock.read)
    unpaced.penalize("192.0.2.1", connections: 8)
    #expect(!unpaced.isPenalized("192.0.2.1"))
  }

  @Test func aRefusalSpendsNeitherCreditNorAPlace() {
    let (clock, limiter) = Self.paced(maxPerIP: 2, ratePerIP: 1)
    #expect(limiter.admit("192.0.2.1") == nil)
    #expect(limiter.admit("192.0.2.1") == nil)
    clock.advance(milliseconds: 2000)  // the bucket is full again: 2 credits, 2 open
    // Over the open cap: refused for that, and no credit is spent on it.
    #expect(limiter.admit("192.0.2.1") == .perIP)
    limiter.release("192.0.2.1")
    limiter.release("192.0.2.1")
    openAndClose(limiter, "192.0.2.1", times: 2)  // both credits were still there
    // Out of credit: refused for pace, and no place is taken by it.
    #expect(limiter.admit("192.0.2.1") == .rate)
    clock.advance(milliseconds: 2000)
    #expect(limiter.admit("192.0.2.1") == nil)
    #expect(limiter.admit("192.0.2.1") == nil)  // both places were still free
  }

  @Test func offAndExemptPeersAreNotPaced() throws {
    let clock = Clock()
    let off = ConnectionLimiter(maxConnections: 1000, maxPerIP: 3, ratePerIP: 0, exempt: [], now: clock.read)
    openAndClose(off, "192.0.2.1", times: 100)
    let proxy = try #require(IPNetwork("10.0.0.0/8"))
    let paced = ConnectionLimiter(
      maxConnections: 1000, maxPerIP: 3, ratePerIP: 1, exempt: [proxy], now: clock.read)
    openAndClose(paced, "10.1.2.3", times: 100)
    #expect(paced.pacedPeers == 0)
  }

  @Test func anIPv6Slash64IsPacedAsOnePeer() {
    let (_, limiter) = Self.paced(maxPerIP: 2, ratePerIP: 1)
    openAndClose(limiter, "2001:db8:1:2::1", times: 1)
    openAndClose(limiter, "2001:db8:1:2::2", times: 1)
    #expect(limiter.admit("2001:db8:1:2:ffff::3") == .rate)
  }

  @Test func peersWhoseBucketIsFullAgainAreForgotten() {
    let (clock, limiter) = Self.paced(maxConnections: 100_000, maxPerIP: 4, ratePerIP: 2)
    // 50,000 peers, one connection each, a thousand a second: each bucket is full again
    // 0.5 s after its connection, so about 500 peers are live at any time, and the table
    // is pruned whenever it doubles (from 1,024 entries at least).
    for i in 0..<50_000 {
      let peer = "10.\(i >> 16).\((i >> 8) & 255).\(i & 255)"
      openAndClose(limiter, peer, times: 1)
      if i % 10 == 9 { clock.advance(milliseconds: 10) }
    }
    #expect(limiter.pacedPeers <= 2048, "\(limiter.pacedPeers) peers still tracked")
  }
}
