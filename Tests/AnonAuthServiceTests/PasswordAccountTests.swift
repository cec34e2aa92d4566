import AnonAuthCrypto
import AnonAuthService
import AnonAuthStore
import AnonAuthWire
import Foundation
import Testing

/// SignUp with email_password and SignInWithPassword.
@Suite struct PasswordAccountTests {
  /// A sign-in throttle over one minute: `perAccount` failures for an account from one
  /// address, `perIP` from one address in all.
  static func throttle(perAccount: Int, perIP: Int) -> SignInThrottle {
    SignInThrottle(
      accountLimit: .init(maxFailures: perAccount, windowMs: 60_000),
      ipLimit: .init(maxFailures: perIP, windowMs: 60_000))
  }

  @Test func signUpMakesAPermanentPasswordAccount() async throws {
    try await LinkingHarness.with { h in
      let response = try await h.signUp(email: "  Ann@Example.COM ", password: "secret-1")
      #expect(response.isNewUser)
      #expect(!response.isAnonymous)
      #expect(response.signInProvider == "password")
      #expect(response.account?.email == "ann@example.com")
      #expect(response.account?.providers.map(\.providerId) == ["password"])
      #expect(response.account?.providers.first?.rawId == "ann@example.com")
      let stored = try await h.account(response.localId)
      #expect(stored.passwordHash?.hasPrefix("$scrypt$ln=10,r=8,p=1$") == true)
      #expect(stored.passwordHash?.contains("secret-1") == false)
      #expect(!stored.isAnonymous && stored.scheduledDeletionAtMs == 0)
      let verified = try await h.verify(response.idToken)
      #expect(verified.signInProvider == "password" && !verified.isAnonymous)
      let claims = try #require(JSONValue(jsonBytes: Array(verified.claimsJson.utf8))?.objectValue)
      #expect(claims["email"] == "ann@example.com")
      #expect(claims["email_verified"] == false)
      #expect(claims["firebase"]?["identities"] == ["email": ["ann@example.com"]])
      #expect(claims["provider_id"] == nil)
      #expect(try await h.signUpsCounted("password") == 1)
      // The refresh token works and keeps the provider.
      #expect(try await h.refresh(response.refreshToken).signInProvider == "password")
    }
  }

  @Test func oneAccountPerEmailWhateverItsCase() async throws {
    try await LinkingHarness.with { h in
      _ = try await h.signUp(email: "bob@example.com", password: "secret-1")
      let before = try await h.snapshot("none")
      await expectLinkError(.emailExists) {
        try await h.signUp(email: "BOB@example.com", password: "other-22")
      }
      #expect(try await h.snapshot("none").accounts == before.accounts)
      #expect(try await h.signUpsCounted("password") == 1)
    }
  }

  @Test(arguments: ["", "bob", "bob@", "bob@localhost", "bob @example.com", "bób@example.com"])
  func invalidEmailIsRefused(email: String) async throws {
    try await LinkingHarness.with { h in
      await expectLinkError(.invalidEmail) { try await h.signUp(email: email, password: "secret-1") }
      await expectLinkError(.invalidEmail) { try await h.signIn(email: email, password: "secret-1") }
    }
  }

  @Test func passwordPolicy() async throws {
    try await LinkingHarness.with { h in
      await expectLinkError(.weakPassword) { try await h.signUp(email: "c@example.com", password: "12345") }
      await expectLinkError(.weakPassword) { try await h.signUp(email: "c@example.com", password: "") }
      let huge = String(repeating: "p", count: 4097)
      await expectLinkError(.weakPassword) { try await h.signUp(email: "c@example.com", password: huge) }
      // Characters count, not bytes: six two-byte characters are long enough.
      _ = try await h.signUp(email: "d@example.com", password: "éééééé")
      _ = try await h.signUp(email: "e@example.com", password: String(repeating: "p", count: 4096))
      try await h.updateConfig({ $0.passwordMinLength = 10 }, mask: ["password_min_length"])
      await expectLinkError(.weakPassword) {
        try await h.signUp(email: "f@example.com", password: "123456789")
      }
      _ = try await h.signUp(email: "f@example.com", password: "1234567890")
    }
  }

  @Test func disabledMethodIsRefusedEverywhere() async throws {
    try await LinkingHarness.with { h in
      let anonymous = try await h.anonymous()
      _ = try await h.signUp(email: "g@example.com", password: "secret-1")
      try await h.updateConfig({ $0.emailPasswordEnabled = false }, mask: ["email_password_enabled"])
      await expectLinkError(.operationNotAllowed) {
        try await h.signUp(email: "h@example.com", password: "secret-1")
      }
      await expectLinkError(.operationNotAllowed) {
        try await h.signIn(email: "g@example.com", password: "secret-1")
      }
      await expectLinkError(.operationNotAllowed) {
        try await h.link(anonymous.idToken, LinkingHarness.password("h@example.com", "secret-1"))
      }
      await expectLinkError(.operationNotAllowed) {
        try await h.signIn(LinkingHarness.password("g@example.com", "secret-1"))
      }
    }
  }

  @Test func signUpQuotaApplies() async throws {
    try await LinkingHarness.with { h in
      try await h.updateConfig({ $0.signUpQuotaPerHour = 1 }, mask: ["sign_up_quota_per_hour"])
      _ = try await h.signUp(email: "q1@example.com", password: "secret-1")
      let error = await expectLinkError(.tooManyAttempts) {
        try await h.signUp(email: "q2@example.com", password: "secret-1")
      }
      #expect(error?.details["retry_after_seconds"] == "3600")
      // Another address has its own window.
      _ = try await h.signUp(email: "q2@example.com", password: "secret-1", ip: "192.0.2.55")
    }
  }

  @Test func signInFindsTheSameAccountAndStartsANewSession() async throws {
    try await LinkingHarness.with { h in
      let created = try await h.signUp(email: "ann@example.com", password: "secret-1")
      h.clock.advance(seconds: 90)
      let signedIn = try await h.signIn(email: " ANN@example.com", password: "secret-1")
      #expect(signedIn.localId == created.localId)
      #expect(!signedIn.isNewUser)
      #expect(signedIn.signInProvider == "password")
      #expect(signedIn.refreshToken != created.refreshToken)
      let verified = try await h.verify(signedIn.idToken)
      #expect(verified.authTime == h.nowSeconds)
      #expect(try await h.account(created.localId).lastSignInAtMs == h.clock.nowMs())
      // Both sessions work: signing in again does not end the first one.
      _ = try await h.refresh(created.refreshToken)
      #expect(try await h.refresh(signedIn.refreshToken).signInProvider == "password")
    }
  }

  /// Reuse detection revokes its family and moves the account's valid_since to now (so
  /// the family's ID tokens fail check_revoked): the account's other sign-ins, issued
  /// before, end with it; signing in again starts a working session.
  @Test func aReplayEndsTheAccountsSessionsUntilTheNextSignIn() async throws {
    try await LinkingHarness.with { h in
      let first = try await h.signUp(email: "ann@example.com", password: "secret-1")
      let second = try await h.signIn(email: "ann@example.com", password: "secret-1")
      let rotated = try await h.refresh(first.refreshToken)
      h.clock.advance(seconds: 11)
      await expectRPCError(.invalidRefreshToken, "a replay after the grace window") {
        () async throws(RPCError) in
        try await h.refresh(first.refreshToken)
      }
      await expectRPCError(.invalidRefreshToken, "its family is revoked") { () async throws(RPCError) in
        try await h.refresh(rotated.refreshToken)
      }
      await expectRPCError(.tokenExpired, "the other sign-in was issued before valid_since") {
        () async throws(RPCError) in
        try await h.refresh(second.refreshToken)
      }
      h.clock.advance(seconds: 1)
      let again = try await h.signIn(email: "ann@example.com", password: "secret-1")
      #expect(try await h.refresh(again.refreshToken).localId == first.localId)
    }
  }

  @Test func wrongPasswordAndUnknownEmailGetTheSameAnswer() async throws {
    try await LinkingHarness.with { h in
      _ = try await h.signUp(email: "ann@example.com", password: "secret-1")
      let wrong = await expectLinkError(.invalidLoginCredentials) {
        try await h.signIn(email: "ann@example.com", password: "secret-2")
      }
      let unknown = await expectLinkError(.invalidLoginCredentials) {
        try await h.signIn(email: "nobody@example.com", password: "secret-1")
      }
      #expect(wrong == unknown)
      await expectLinkError(.invalidLoginCredentials) {
        try await h.signIn(email: "ann@example.com", password: String(repeating: "x", count: 5000))
      }
      await expectLinkError(.invalidLoginCredentials) {
        try await h.signIn(email: "ann@example.com", password: "")
      }
    }
  }

  @Test func anAccountWithoutAPasswordCannotSignInWithOne() async throws {
    try await LinkingHarness.with { h in
      let google = try await h.signIn(try h.googleCredential(sub: "g-1", email: "gina@example.com"))
      #expect(google.account?.email == "gina@example.com")
      await expectLinkError(.invalidLoginCredentials) {
        try await h.signIn(email: "gina@example.com", password: "anything")
      }
    }
  }

  @Test func disabledAccountIsToldOnlyWithTheRightPassword() async throws {
    try await LinkingHarness.with { h in
      let created = try await h.signUp(email: "dis@example.com", password: "secret-1")
      try await h.change(created.localId) { $0.disabled = true }
      await expectLinkError(.invalidLoginCredentials) {
        try await h.signIn(email: "dis@example.com", password: "nope-nope")
      }
      await expectLinkError(.userDisabled) {
        try await h.signIn(email: "dis@example.com", password: "secret-1")
      }
    }
  }

  @Test func weakerHashIsUpgradedOnSignIn() async throws {
    try await LinkingHarness.with { h in
      let created = try await h.signUp(email: "old@example.com", password: "secret-1")
      let old = try PasswordHasher(parameters: ScryptParameters(ln: 8, r: 8, p: 1)).hash("secret-1")
      try await h.change(created.localId) { $0.passwordHash = old }
      _ = try await h.signIn(email: "old@example.com", password: "secret-1")
      let upgraded = try #require(try await h.account(created.localId).passwordHash)
      #expect(upgraded != old)
      #expect(try PHCString(parsing: upgraded).parameters == ScryptParameters(ln: 10, r: 8, p: 1))
      _ = try await h.signIn(email: "old@example.com", password: "secret-1")
      #expect(try await h.account(created.localId).passwordHash == upgraded)
    }
  }

  @Test func failedSignInsAreThrottledPerAccountAndIP() async throws {
    try await LinkingHarness.with(throttle: Self.throttle(perAccount: 3, perIP: 100)) { h in
      _ = try await h.signUp(email: "t@example.com", password: "secret-1")
      for i in 0..<3 {
        await expectLinkError(.invalidLoginCredentials) {
          try await h.signIn(email: "t@example.com", password: "wrong-\(i)", ip: "192.0.2.1")
        }
        h.clock.advance(seconds: 10)
      }
      // Even the right password waits from that address: its window for the account is full.
      let refused = await expectLinkError(.tooManyAttempts) {
        try await h.signIn(email: "T@example.com", password: "secret-1", ip: "192.0.2.1")
      }
      #expect(refused?.details["retry_after_seconds"] == "30")
      // Other accounts are not affected.
      await expectLinkError(.invalidLoginCredentials) {
        try await h.signIn(email: "u@example.com", password: "x", ip: "192.0.2.1")
      }
      h.clock.advance(seconds: 31)
      _ = try await h.signIn(email: "t@example.com", password: "secret-1", ip: "192.0.2.1")
      // Success cleared the failures of that address for the account.
      for _ in 0..<2 {
        await expectLinkError(.invalidLoginCredentials) {
          try await h.signIn(email: "t@example.com", password: "x", ip: "192.0.2.1")
        }
      }
      _ = try await h.signIn(email: "t@example.com", password: "secret-1", ip: "192.0.2.1")
    }
  }

  /// Guesses sent in parallel are counted before their hashes are checked, so a burst
  /// cannot pass the check all at once: exactly the limit gets through.
  @Test func parallelGuessesAreThrottledToo() async throws {
    try await LinkingHarness.with(throttle: Self.throttle(perAccount: 3, perIP: 100)) { h in
      _ = try await h.signUp(email: "p@example.com", password: "secret-1")
      let reasons = await withTaskGroup(of: String.self) { group in
        for i in 0..<12 {
          group.addTask {
            do {
              _ = try await h.signIn(email: "p@example.com", password: "guess-\(i)", ip: "192.0.2.1")
              return "OK"
            } catch {
              return (error as? RPCError)?.reason ?? "\(error)"
            }
          }
        }
        var all: [String] = []
        for await reason in group { all.append(reason) }
        return all
      }
      #expect(reasons.filter { $0 == Reason.invalidLoginCredentials.name }.count == 3)
      #expect(reasons.filter { $0 == Reason.tooManyAttempts.name }.count == 9)
    }
  }

  @Test func failedSignInsAreThrottledPerIP() async throws {
    try await LinkingHarness.with(throttle: Self.throttle(perAccount: 100, perIP: 4)) { h in
      _ = try await h.signUp(email: "v@example.com", password: "secret-1")
      for i in 0..<4 {
        await expectLinkError(.invalidLoginCredentials) {
          try await h.signIn(email: "guess\(i)@example.com", password: "x", ip: "203.0.113.9")
        }
      }
      await expectLinkError(.tooManyAttempts) {
        try await h.signIn(email: "v@example.com", password: "secret-1", ip: "203.0.113.9")
      }
      _ = try await h.signIn(email: "v@example.com", password: "secret-1", ip: "203.0.113.10")
    }
  }

  /// An unknown email costs the same scrypt work as a wrong password: each runs exactly
  /// one job on the password pool (a check against the dummy hash, made with the current
  /// parameters), so response times do not tell which emails have accounts. Counted in
  /// jobs, not timed: how long each takes is the machine's business.
  @Test func unknownEmailCostsWhatAWrongPasswordCosts() async throws {
    try await LinkingHarness.with(scryptLn: 10) { h in
      _ = try await h.signUp(email: "w@example.com", password: "secret-1")
      _ = try? await h.signIn(email: "warm-up@example.com", password: "x")  // makes the dummy hash
      let pool = h.env.passwordPool
      func jobs(_ email: String, ip: String) async -> Int {
        let before = pool.jobsRun
        let result = try? await h.signIn(email: email, password: "wrong-password", ip: ip)
        #expect(result == nil, "\(email) signed in with a wrong password")
        return pool.jobsRun - before
      }
      for i in 0..<3 {
        #expect(await jobs("w@example.com", ip: "192.0.2.\(i + 1)") == 1)
        #expect(await jobs("nobody\(i)@example.com", ip: "192.0.2.\(i + 101)") == 1)
      }
    }
  }
}

@Suite("Sensitive changes need a recent sign-in")
struct RecentSignInTests {
  @Test("deleting a permanent account needs a sign-in within 5 minutes; an anonymous one does not")
  func deleteNeedsRecentSignIn() async throws {
    try await LinkingHarness.with { h in
      let permanent = try await h.signUp(email: "old@example.com", password: "secret-1")
      let anonymous = try await h.anonymous()
      h.clock.advance(seconds: 301)
      // A refreshed token keeps the old auth_time: still too old.
      let refreshed = try await h.accounts.refreshToken(
        RefreshTokenRequest(refreshToken: permanent.refreshToken), context: h.context("RefreshToken"))
      await expectLinkError(.credentialTooOld) {
        try await h.accounts.deleteAccount(
          DeleteAccountRequest(idToken: refreshed.idToken), context: h.context("DeleteAccount"))
      }
      #expect(try await h.snapshot(permanent.localId).account != nil)
      // The anonymous account can always delete itself.
      _ = try await h.accounts.deleteAccount(
        DeleteAccountRequest(idToken: anonymous.idToken), context: h.context("DeleteAccount"))
      // After signing in again, the permanent one can too.
      let again = try await h.signIn(email: "old@example.com", password: "secret-1")
      _ = try await h.accounts.deleteAccount(
        DeleteAccountRequest(idToken: again.idToken), context: h.context("DeleteAccount"))
      #expect(try await h.snapshot(permanent.localId).account == nil)
    }
  }
}
