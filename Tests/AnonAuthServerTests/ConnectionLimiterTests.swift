import AnonAuthService
import Testing

@testable import AnonAuthServer

/// The admission counts behind `--max-connections` and `--max-connections-per-ip`.
@Suite struct ConnectionLimiterTests {
  @Test func perIPLimitRefusesTheExtraAndReleaseGivesThePlaceBack() {
    let limiter = ConnectionLimiter(maxConnections: 100, maxPerIP: 2, exempt: [])
    #expect(limiter.admit("192.0.2.1") == nil)
    #expect(limiter.admit("192.0.2.1") == nil)
    #expect(limiter.admit("192.0.2.1") == .perIP)
    #expect(limiter.admit("192.0.2.2") == nil)
    limiter.release("192.0.2.1")
    #expect(limiter.admit("192.0.2.1") == nil)
  }

  @Test func anIPv6Slash64IsOnePeerAndAMappedAddressIsItsIPv4() {
    let limiter = ConnectionLimiter(maxConnections: 100, maxPerIP: 2, exempt: [])
    #expect(limiter.admit("2001:db8:1:2::1") == nil)
    #expect(limiter.admit("2001:db8:1:2::ffff:1") == nil)
    #expect(limiter.admit("2001:db8:1:2:aaaa::7") == .perIP)  // same /64: refused
    #expect(limiter.admit("2001:db8:1:3::1") == nil)  // another /64
    #expect(limiter.admit("192.0.2.5") == nil)
    #expect(limiter.admit("::ffff:192.0.2.5") == nil)
    #expect(limiter.admit("192.0.2.5") == .perIP)
    limiter.release("2001:db8:1:2::1")
    #expect(limiter.admit("2001:db8:1:2::99") == nil)
  }

  @Test func totalLimitCountsEveryone() {
    let limiter = ConnectionLimiter(maxConnections: 3, maxPerIP: 10, exempt: [])
    for i in 1...3 { #expect(limiter.admit("192.0.2.\(i)") == nil) }
    #expect(limiter.admit("192.0.2.9") == .total)
    limiter.release("192.0.2.2")
    #expect(limiter.admit("192.0.2.9") == nil)
  }

  @Test func exemptPeersSkipThePerIPLimitButNotTheTotal() throws {
    let proxy = try #require(IPNetwork("10.0.0.0/8"))
    let limiter = ConnectionLimiter(maxConnections: 5, maxPerIP: 1, exempt: [proxy])
    for _ in 1...5 { #expect(limiter.admit("10.1.2.3") == nil) }
    #expect(limiter.admit("10.1.2.3") == .total)
  }
}
