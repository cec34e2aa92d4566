import Testing

@testable import AnonAuthService

/// The failed-sign-in throttle's memory (`SignInThrottle`): bounded, and at the bound a
/// new key takes the place of the failure counter that expires first, never of a
/// counter still refusing its address nor of a trusted (account, address) pair; counters
/// whose window has passed are forgotten as attempts come, with no walk of the table.
@Suite struct SignInThrottleTableTests {
  static let t0: Int64 = 1_000_000_000

  @Test func theCounterExpiringFirstIsDroppedWhenFull() {
    // 16 keys: 8 failure counters, 8 trusted pairs.
    let throttle = SignInThrottle(ipLimit: .init(maxFailures: 3, windowMs: 600_000), maxKeys: 16)
    for _ in 0..<3 { #expect(throttle.reserve(account: nil, ip: "old", nowMs: Self.t0) == nil) }
    for _ in 0..<3 { #expect(throttle.reserve(account: nil, ip: "flooder", nowMs: Self.t0 + 60_000) == nil) }
    #expect(throttle.reserve(account: nil, ip: "old", nowMs: Self.t0 + 120_000) != nil)
    #expect(throttle.reserve(account: nil, ip: "flooder", nowMs: Self.t0 + 120_000) != nil)
    for i in 0..<6 {
      #expect(throttle.reserve(account: nil, ip: "other\(i)", nowMs: Self.t0 + 120_000) == nil)
    }
    #expect(throttle.trackedKeys == 8)
    #expect(throttle.reserve(account: nil, ip: "new", nowMs: Self.t0 + 130_000) == nil)
    #expect(throttle.trackedKeys == 8)
    #expect(throttle.reserve(account: nil, ip: "flooder", nowMs: Self.t0 + 130_000) != nil, "still refused")
    #expect(
      throttle.reserve(account: nil, ip: "old", nowMs: Self.t0 + 130_000) == nil, "its failures were dropped")
  }

  @Test func aFloodOfFailuresKeepsTheTrustedPairs() {
    let throttle = SignInThrottle(maxKeys: 16)
    #expect(
      throttle.reserve(account: "a\u{0}p\u{0}owner@example.com", ip: "192.0.2.10", nowMs: Self.t0) == nil)
    throttle.succeeded(account: "a\u{0}p\u{0}owner@example.com", ip: "192.0.2.10", reservedAtMs: Self.t0)
    #expect(throttle.trustedPairs == 1)
    for i in 0..<100 {
      _ = throttle.reserve(account: nil, ip: "198.51.100.\(i)", nowMs: Self.t0 + 1_000 + Int64(i))
      #expect(throttle.trackedKeys <= 16)
    }
    #expect(throttle.trustedPairs == 1)
  }

  @Test func trustedPairsAreBoundedToo() {
    let throttle = SignInThrottle(maxKeys: 16)
    for i in 0..<20 {
      let account = "a\u{0}p\u{0}user\(i)@example.com"
      let now = Self.t0 + Int64(i) * 100_000_000
      #expect(throttle.reserve(account: account, ip: "192.0.2.1", nowMs: now) == nil)
      throttle.succeeded(account: account, ip: "192.0.2.1", reservedAtMs: now)
      #expect(throttle.trackedKeys <= 16)
    }
    #expect(throttle.trustedPairs == 8)
  }

  @Test func countersWhoseWindowPassedAreForgottenAsAttemptsCome() {
    let throttle = SignInThrottle(maxKeys: 1000)
    for i in 0..<10 { #expect(throttle.reserve(account: nil, ip: "gone\(i)", nowMs: Self.t0) == nil) }
    #expect(throttle.trackedKeys == 10)
    for _ in 0..<10 { #expect(throttle.reserve(account: nil, ip: "later", nowMs: Self.t0 + 700_000) == nil) }
    #expect(throttle.trackedKeys == 1)
  }

  /// An attempt given back (`release`) leaves no empty counter behind.
  @Test func aReleasedAttemptLeavesNothing() {
    let throttle = SignInThrottle(maxKeys: 100)
    let account = "a\u{0}p\u{0}x@example.com"
    #expect(throttle.reserve(account: account, ip: "192.0.2.7", nowMs: Self.t0) == nil)
    #expect(throttle.trackedKeys == 3)
    throttle.release(account: account, ip: "192.0.2.7", reservedAtMs: Self.t0)
    #expect(throttle.trackedKeys == 0)
  }
}
