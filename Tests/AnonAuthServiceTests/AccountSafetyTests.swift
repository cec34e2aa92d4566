import AnonAuthService
import AnonAuthStore
import AnonAuthWire
import Testing

/// The exposure review's account-safety findings, each as the attack was described: a stolen,
/// stale session swapping the account's credentials; unlinking the last sign-in method;
/// a link handing out a fresh `auth_time`; probing which emails are taken around the
/// sign-up quota; parallel password links each paying for a hash; an unverified
/// pre-registration locking out the verified owner.
@Suite struct AccountSafetyTests {
  /// Ten minutes: older than the five-minute recent-sign-in window.
  static let stale: Int64 = 600

  // MARK: The recent-sign-in rule

  @Test func aStaleSessionCannotSwapTheAccountsCredentials() async throws {
    let pool = CPUPool(threads: 1, name: "safety-scrypt", maxQueued: 64)
    try await LinkingHarness.with(passwordPool: { pool }) { h in
      // The owner signs in with Google: one permanent account, one sign-in method.
      let owner = try await h.signIn(try h.googleCredential(sub: "g-owner", email: "owner@gmail.com"))
      h.clock.advance(seconds: Self.stale)
      // The attacker holds the owner's refresh token (it never expires) and refreshes it:
      // a valid ID token, but with the owner's auth_time of ten minutes ago.
      let stolen = try await h.refresh(owner.refreshToken)
      let before = try await h.snapshot(owner.localId)
      let hashes = pool.jobsRun

      await expectLinkError(.credentialTooOld) { try await h.unlink(stolen.idToken, "google.com") }
      await expectLinkError(.credentialTooOld) {
        try await h.link(stolen.idToken, LinkingHarness.password("thief@example.com", "thief-pass-1"))
      }
      await expectLinkError(.credentialTooOld) {
        try await h.link(
          stolen.idToken,
          LinkingHarness.idToken("oidc.inline", try h.oidc.token(sub: "thief", now: h.nowSeconds)))
      }
      await expectLinkError(.credentialTooOld) {
        try await h.accounts.deleteAccount(
          DeleteAccountRequest(idToken: stolen.idToken), context: h.context("DeleteAccount"))
      }
      // Nothing changed and no password was hashed.
      #expect(try await h.snapshot(owner.localId) == before)
      #expect(pool.jobsRun == hashes)
      // The owner, signing in with Google again, lands on the same account.
      let again = try await h.signIn(try h.googleCredential(sub: "g-owner", email: "owner@gmail.com"))
      #expect(again.localId == owner.localId && !again.isNewUser)
    }
  }

  @Test func aFreshSessionMayChangeCredentialsUntilFiveMinutesHavePassed() async throws {
    try await LinkingHarness.with { h in
      let owner = try await h.signIn(try h.googleCredential(sub: "g-fresh", email: "fresh@gmail.com"))
      h.clock.advance(seconds: 60)
      let linked = try await h.link(owner.idToken, LinkingHarness.password("fresh@gmail.com", "secret-1"))
      h.clock.advance(seconds: 239)  // 299 s after the sign-in
      let info = try await h.unlink(linked.idToken, "google.com")
      #expect(info.providers.map(\.providerId) == ["password"])
      // Exactly five minutes is still recent; one second more is not.
      h.clock.advance(seconds: 1)
      let oidc = LinkingHarness.idToken("oidc.inline", try h.oidc.token(sub: "o-fresh", now: h.nowSeconds))
      let again = try await h.link(linked.idToken, oidc)
      h.clock.advance(seconds: 1)
      await expectLinkError(.credentialTooOld) { try await h.unlink(again.idToken, "oidc.inline") }
      // A new sign-in makes the session recent again.
      let signedIn = try await h.signIn(email: "fresh@gmail.com", password: "secret-1")
      #expect(try await h.unlink(signedIn.idToken, "oidc.inline").providers.map(\.providerId) == ["password"])
    }
  }

  @Test func anAnonymousAccountLinksAtAnyAge() async throws {
    try await LinkingHarness.with { h in
      let anonymous = try await h.anonymous()
      h.clock.advance(seconds: 86_400)
      let refreshed = try await h.refresh(anonymous.refreshToken)
      let linked = try await h.link(
        refreshed.idToken, LinkingHarness.password("anna@example.com", "secret-1"))
      #expect(linked.localId == anonymous.localId && !linked.isAnonymous)
      // Now permanent: the day-old auth_time no longer passes for a sensitive change.
      await expectLinkError(.credentialTooOld) {
        try await h.link(linked.idToken, try h.googleCredential(sub: "g-anna"))
      }
    }
  }

  // MARK: The last sign-in method

  @Test func theLastSignInMethodOfAPermanentAccountCannotBeUnlinked() async throws {
    try await LinkingHarness.with { h in
      let google = try await h.signIn(try h.googleCredential(sub: "g-last"))
      try await h.expectRefusedUnchanged(google.localId, .lastSignInMethod) {
        try await h.unlink(google.idToken, "google.com")
      }
      // Still NO_SUCH_PROVIDER for a provider the account does not have.
      await expectLinkError(.noSuchProvider) { try await h.unlink(google.idToken, "password") }

      let password = try await h.signUp(email: "last@example.com", password: "secret-1")
      try await h.expectRefusedUnchanged(password.localId, .lastSignInMethod) {
        try await h.unlink(password.idToken, "password")
      }
      #expect(try await h.signIn(email: "last@example.com", password: "secret-1").localId == password.localId)
    }
  }

  // MARK: auth_time across a link

  @Test func aLinkKeepsTheCallersAuthTime() async throws {
    try await LinkingHarness.with { h in
      let owner = try await h.signIn(try h.googleCredential(sub: "g-time"))
      let signedInAt = h.nowSeconds
      h.clock.advance(seconds: 120)
      let linked = try await h.link(owner.idToken, LinkingHarness.password("time@example.com", "secret-1"))
      #expect(try await h.verify(linked.idToken).authTime == signedInAt)
      // The session the link started keeps it through refreshes too.
      h.clock.advance(seconds: 60)
      let refreshed = try await h.refresh(linked.refreshToken)
      #expect(try await h.verify(refreshed.idToken).authTime == signedInAt)
      // So the link did not extend the five-minute window of the sign-in.
      h.clock.advance(seconds: 121)  // 301 s after the sign-in
      await expectLinkError(.credentialTooOld) { try await h.unlink(refreshed.idToken, "google.com") }
    }
  }

  // MARK: EMAIL_EXISTS and the sign-up quota

  @Test func probingTakenEmailsWithPasswordLinksStopsAtTheQuota() async throws {
    let pool = CPUPool(threads: 1, name: "safety-scrypt", maxQueued: 64)
    try await LinkingHarness.with(passwordPool: { pool }) { h in
      // 300 accounts whose emails the attacker wants to learn.
      let projectID = LinkingHarness.projectID
      let now = h.clock.nowMs()
      try await h.store.write { db in
        for i in 0..<300 {
          var account = AccountRecord(
            projectID: projectID, localID: "victim-\(i)", isAnonymous: false, createdAtMs: now)
          account.email = "victim\(i)@example.com"
          try AccountsRepository.insert(db, account)
        }
      }
      // One anonymous account (one place of the default quota of 100), then 300 probes.
      let attacker = try await h.anonymous()
      var answers: [String: Int] = [:]
      for i in 0..<300 {
        do throws(RPCError) {
          _ = try await h.link(
            attacker.idToken, LinkingHarness.password("victim\(i)@example.com", "secret-1"))
          answers["linked", default: 0] += 1
        } catch {
          answers[error.reason, default: 0] += 1
        }
      }
      #expect(answers == [Reason.emailExists.name: 99, Reason.tooManyAttempts.name: 201])
      #expect(pool.jobsRun == 0)
      // Another address is not held back.
      _ = try await h.anonymous(ip: "192.0.2.99")
    }
  }

  @Test func everyEmailExistsAnswerCountsAgainstTheQuota() async throws {
    try await LinkingHarness.with { h in
      try await h.updateConfig({ $0.signUpQuotaPerHour = 3 }, mask: ["sign_up_quota_per_hour"])
      let taken = try await h.signUp(email: "held@example.com", password: "secret-1", ip: "192.0.2.1")
      try await h.change(taken.localId) { $0.emailVerified = true }
      // A provider sign-in whose email another account holds (verified there): counted.
      await expectLinkError(.emailExists) {
        try await h.signIn(try h.googleCredential(sub: "p-1", email: "held@example.com"))
      }
      // Linking a provider identity with that email: counted.
      let anonymous = try await h.anonymous()
      await expectLinkError(.emailExists) {
        try await h.link(anonymous.idToken, try h.googleCredential(sub: "p-2", email: "held@example.com"))
      }
      // The quota (3) is spent: one sign-up, two EMAIL_EXISTS.
      await expectLinkError(.tooManyAttempts) {
        try await h.signIn(try h.googleCredential(sub: "p-3", email: "held@example.com"))
      }
      await expectLinkError(.tooManyAttempts) { try await h.anonymous() }
    }
  }

  // MARK: One password link in flight per account

  @Test func sixtyParallelPasswordLinksCostOneHash() async throws {
    let pool = CPUPool(threads: 1, name: "safety-scrypt", maxQueued: 128)
    try await LinkingHarness.with(scryptLn: 12, passwordPool: { pool }) { h in
      let anonymous = try await h.anonymous()
      let token = anonymous.idToken
      let outcomes = await withTaskGroup(of: String.self) { group in
        for i in 0..<60 {
          group.addTask {
            do throws(RPCError) {
              _ = try await h.link(token, LinkingHarness.password("par\(i)@example.com", "secret-1"))
              return "linked"
            } catch {
              return error.reason
            }
          }
        }
        var all: [String] = []
        for await outcome in group { all.append(outcome) }
        return all
      }
      #expect(outcomes.filter { $0 == "linked" }.count == 1)
      let refusals = Set(outcomes.filter { $0 != "linked" })
      #expect(
        refusals.isSubset(
          of: [Reason.tooManyAttempts.name, Reason.providerAlreadyLinked.name, Reason.tokenExpired.name]))
      #expect(pool.jobsRun == 1)
      // A later link on a token of the now-permanent account: refused before any hash.
      let account = try await h.account(anonymous.localId)
      let email = try #require(account.email)
      let signedIn = try await h.signIn(email: email, password: "secret-1")
      let hashesAfterSignIn = pool.jobsRun
      await expectLinkError(.providerAlreadyLinked) {
        try await h.link(signedIn.idToken, LinkingHarness.password("late@example.com", "secret-1"))
      }
      #expect(pool.jobsRun == hashesAfterSignIn)
    }
  }

  // MARK: A verified identity wins over an unverified email

  @Test func aVerifiedGoogleSignInTakesOverAnUnverifiedPasswordAccount() async throws {
    try await LinkingHarness.with { h in
      // The attacker registers the owner's address with their own password, and links a
      // provider of their own too.
      let squatter = try await h.signUp(email: "real.owner@gmail.com", password: "squatter-1")
      let facebookToken = "fb-squat"
      h.graph.add(facebookToken, .init(userID: "fb-squatter", appID: "fb-app", expiresAt: h.nowSeconds + 600))
      _ = try await h.link(squatter.idToken, LinkingHarness.facebook(facebookToken))
      let squatterSession = try await h.signIn(email: "real.owner@gmail.com", password: "squatter-1")
      h.clock.advance(seconds: 5)

      // The real owner signs in with Google, which vouches for the address.
      let owner = try await h.signIn(try h.googleCredential(sub: "g-real", email: "real.owner@gmail.com"))
      #expect(owner.localId == squatter.localId && !owner.isNewUser)
      #expect(owner.signInProvider == "google.com")
      let account = try await h.account(owner.localId)
      #expect(account.passwordHash == nil)
      #expect(account.email == "real.owner@gmail.com" && account.emailVerified)
      #expect(account.displayName == "Test User")
      #expect(account.validSince == h.nowSeconds)
      #expect(owner.account?.providers.map(\.providerId) == ["google.com"])
      #expect(try await h.signUpsCounted("google.com") == 0)

      // Everything of the squatter's is gone: password, provider, sessions.
      await expectLinkError(.invalidLoginCredentials) {
        try await h.signIn(email: "real.owner@gmail.com", password: "squatter-1")
      }
      let facebookAgain = try await h.signIn(LinkingHarness.facebook(facebookToken))
      #expect(facebookAgain.localId != owner.localId && facebookAgain.isNewUser)
      await expectLinkError(.tokenExpired) { try await h.verify(squatterSession.idToken) }
      do throws(RPCError) {
        _ = try await h.refresh(squatterSession.refreshToken)
        Issue.record("the squatter's refresh token still works")
      } catch {
        #expect([Reason.tokenExpired.name, Reason.invalidRefreshToken.name].contains(error.reason))
      }
      // The owner's session works, and Google signs in to the same account again.
      #expect(try await h.verify(owner.idToken).uid == owner.localId)
      #expect(try await h.refresh(owner.refreshToken).localId == owner.localId)
      h.clock.advance(seconds: 1)
      let again = try await h.signIn(try h.googleCredential(sub: "g-real", email: "real.owner@gmail.com"))
      #expect(again.localId == owner.localId)
    }
  }

  @Test func noTakeOverOfAVerifiedOrDisabledAccount() async throws {
    try await LinkingHarness.with { h in
      let verified = try await h.signUp(email: "kept@gmail.com", password: "secret-1")
      try await h.change(verified.localId) { $0.emailVerified = true }
      try await h.expectRefusedUnchanged(verified.localId, .emailExists) {
        try await h.signIn(try h.googleCredential(sub: "g-kept", email: "kept@gmail.com"))
      }

      let disabled = try await h.signUp(email: "off@gmail.com", password: "secret-1")
      try await h.change(disabled.localId) { $0.disabled = true }
      try await h.expectRefusedUnchanged(disabled.localId, .userDisabled) {
        try await h.signIn(try h.googleCredential(sub: "g-off", email: "off@gmail.com"))
      }
    }
  }

  // MARK: Provider text at the door

  @Test func aSubjectWithNULIsRefusedAndNothingIsMade() async throws {
    try await LinkingHarness.with { h in
      let before = try await h.snapshot("none").accounts
      let token = try h.google.token(sub: "g\u{0}nul", now: h.nowSeconds, email: "nul@gmail.com")
      await expectLinkError(.invalidIdpResponse) {
        try await h.signIn(LinkingHarness.idToken("google.com", token))
      }
      var claims = h.google.claims(sub: "g-ctl", now: h.nowSeconds)
      claims["name"] = "Ctl\u{1B}[31m"
      await expectLinkError(.invalidIdpResponse) {
        try await h.signIn(LinkingHarness.idToken("google.com", try h.google.sign(claims)))
      }
      #expect(try await h.snapshot("none").accounts == before)
    }
  }
}
