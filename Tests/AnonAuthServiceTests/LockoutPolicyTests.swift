import AnonAuthService
import AnonAuthWire
import Foundation
import Testing

/// One address cannot lock an account for everyone: failures count per (account, IP),
/// distributed guessing slows the account without locking out IPs that signed in to it,
/// and the throttle's memory stays bounded.
@Suite struct LockoutPolicyTests {
  @Test func tenWrongPasswordsFromOneIPDoNotLockTheOwnerOut() async throws {
    try await LinkingHarness.with { h in
      _ = try await h.signUp(email: "owner@example.com", password: "secret-1")
      for i in 0..<10 {
        await expectLinkError(.invalidLoginCredentials) {
          try await h.signIn(email: "owner@example.com", password: "guess-\(i)", ip: "203.0.113.66")
        }
      }
      // The attacker's address is throttled, even with the right password.
      let refused = await expectLinkError(.tooManyAttempts) {
        try await h.signIn(email: "owner@example.com", password: "secret-1", ip: "203.0.113.66")
      }
      #expect(refused?.details["retry_after_seconds"] == "600")
      // The owner, from another address, signs in.
      let signedIn = try await h.signIn(email: "owner@example.com", password: "secret-1", ip: "192.0.2.10")
      #expect(signedIn.account?.email == "owner@example.com")
    }
  }

  /// Past the per-account limit from all addresses, untrusted addresses get one attempt
  /// per slow interval; an address that signed in before is not slowed.
  @Test func distributedGuessingSlowsTheAccountButNotItsOwner() async throws {
    let throttle = SignInThrottle(
      globalAccountLimit: .init(maxFailures: 5, windowMs: 600_000), slowIntervalMs: 2_000)
    try await LinkingHarness.with(throttle: throttle) { h in
      _ = try await h.signUp(email: "d@example.com", password: "secret-1")
      _ = try await h.signIn(email: "d@example.com", password: "secret-1", ip: "192.0.2.10")
      for i in 0..<5 {
        await expectLinkError(.invalidLoginCredentials) {
          try await h.signIn(email: "d@example.com", password: "x", ip: "203.0.113.\(i + 1)")
        }
      }
      let slowed = await expectLinkError(.tooManyAttempts) {
        try await h.signIn(email: "d@example.com", password: "x", ip: "203.0.113.50")
      }
      #expect(slowed?.details["retry_after_seconds"] == "2")
      // The owner's known address is not slowed.
      _ = try await h.signIn(email: "d@example.com", password: "secret-1", ip: "192.0.2.10")
      // After the interval one more attempt gets through, then the next waits again.
      h.clock.advance(seconds: 2)
      await expectLinkError(.invalidLoginCredentials) {
        try await h.signIn(email: "d@example.com", password: "x", ip: "203.0.113.51")
      }
      await expectLinkError(.tooManyAttempts) {
        try await h.signIn(email: "d@example.com", password: "x", ip: "203.0.113.52")
      }
    }
  }

  @Test func theThrottleKeepsABoundedNumberOfKeys() async throws {
    let throttle = SignInThrottle(maxKeys: 50)
    try await LinkingHarness.with(throttle: throttle) { h in
      for i in 0..<60 {
        await expectLinkError(.invalidLoginCredentials) {
          try await h.signIn(email: "nobody\(i)@example.com", password: "x", ip: "198.51.100.\(i + 1)")
        }
        #expect(throttle.trackedKeys <= 50)
      }
      #expect(throttle.trackedKeys > 0)
    }
  }
}
