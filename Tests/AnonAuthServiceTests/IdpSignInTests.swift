import AnonAuthService
import AnonAuthStore
import AnonAuthWire
import Testing

/// SignInWithIdp: first use creates a permanent account, later uses find it.
@Suite struct IdpSignInTests {
  @Test func firstSignInCreatesAPermanentAccountLaterOnesFindIt() async throws {
    try await LinkingHarness.with { h in
      let first = try await h.signIn(try h.googleCredential(sub: "g-1", email: "ida@gmail.com"))
      #expect(first.isNewUser && !first.isAnonymous)
      #expect(first.signInProvider == "google.com")
      #expect(first.account?.email == "ida@gmail.com")
      #expect(first.account?.providers.map(\.providerId) == ["google.com"])
      #expect(try await h.signUpsCounted("google.com") == 1)
      h.clock.advance(seconds: 120)
      let second = try await h.signIn(try h.googleCredential(sub: "g-1", email: "ida@gmail.com"))
      #expect(second.localId == first.localId && !second.isNewUser)
      #expect(try await h.verify(second.idToken).authTime == h.nowSeconds)
      #expect(try await h.account(first.localId).lastSignInAtMs == h.clock.nowMs())
      #expect(try await h.signUpsCounted("google.com") == 1)
    }
  }

  @Test func eachProviderSignsIn() async throws {
    try await LinkingHarness.with { h in
      h.graph.add("fb-1", .init(userID: "fb-user", appID: "fb-app", expiresAt: h.nowSeconds + 600))
      let facebook = try await h.signIn(LinkingHarness.facebook("fb-1"))
      #expect(facebook.isNewUser && facebook.signInProvider == "facebook.com")
      #expect(facebook.account?.providers.first?.rawId == "fb-user")
      #expect(try await h.signIn(LinkingHarness.facebook("fb-1")).localId == facebook.localId)

      let remote = try await h.signIn(
        LinkingHarness.idToken("oidc.remote", try h.remote.token(sub: "r-9", now: h.nowSeconds, with: .ec)))
      #expect(remote.isNewUser && remote.signInProvider == "oidc.remote")

      // A password credential signs in as SignInWithPassword does.
      let created = try await h.signUp(email: "pw@example.com", password: "secret-1")
      let viaIdp = try await h.signIn(LinkingHarness.password("pw@example.com", "secret-1"))
      #expect(viaIdp.localId == created.localId && viaIdp.signInProvider == "password")
      await expectLinkError(.invalidLoginCredentials) {
        try await h.signIn(LinkingHarness.password("pw@example.com", "secret-2"))
      }
    }
  }

  @Test func theLinkedAnonymousAccountIsTheOneSignedInto() async throws {
    try await LinkingHarness.with { h in
      let anonymous = try await h.anonymous()
      h.clock.advance(seconds: 1)
      _ = try await h.link(anonymous.idToken, try h.googleCredential(sub: "g-up"))
      let signedIn = try await h.signIn(try h.googleCredential(sub: "g-up"))
      #expect(signedIn.localId == anonymous.localId && !signedIn.isNewUser)
    }
  }

  @Test func aNewIdentityWithAnExistingEmailIsRefused() async throws {
    try await LinkingHarness.with { h in
      let created = try await h.signUp(email: "eve@example.com", password: "secret-1")
      let before = try await h.snapshot(created.localId)
      // The provider does not vouch for the address: the account that has it stays.
      var claims = h.google.claims(sub: "g-eve", now: h.nowSeconds, email: "eve@example.com")
      claims["email_verified"] = false
      let unverified = LinkingHarness.idToken("google.com", try h.google.sign(claims))
      await expectLinkError(.emailExists) { try await h.signIn(unverified) }
      #expect(try await h.snapshot(created.localId) == before)
    }
  }

  @Test func newAccountsCountAgainstTheSignUpQuotaReturningOnesDoNot() async throws {
    try await LinkingHarness.with { h in
      try await h.updateConfig({ $0.signUpQuotaPerHour = 1 }, mask: ["sign_up_quota_per_hour"])
      let first = try await h.signIn(try h.googleCredential(sub: "q-1"))
      await expectLinkError(.tooManyAttempts) { try await h.signIn(try h.googleCredential(sub: "q-2")) }
      #expect(try await h.signIn(try h.googleCredential(sub: "q-1")).localId == first.localId)
    }
  }

  @Test func refusals() async throws {
    try await LinkingHarness.with { h in
      let disabled = try await h.signIn(try h.googleCredential(sub: "g-off"))
      try await h.change(disabled.localId) { $0.disabled = true }
      await expectLinkError(.userDisabled) { try await h.signIn(try h.googleCredential(sub: "g-off")) }
      await expectLinkError(.operationNotAllowed) {
        try await h.signIn(LinkingHarness.idToken("oidc.off", try h.oidc.token(sub: "o", now: h.nowSeconds)))
      }
      await expectLinkError(.invalidArgument) {
        try await h.accounts.signInWithIdp(SignInWithIdpRequest(), context: h.context("SignInWithIdp"))
      }
      await expectLinkError(.invalidIdpResponse) {
        try await h.signIn(
          LinkingHarness.idToken("google.com", try h.google.token(sub: "", now: h.nowSeconds)))
      }
      try await h.updateConfig({ _ in }, mask: ["idps"])
      await expectLinkError(.operationNotAllowed) { try await h.signIn(try h.googleCredential(sub: "g-1")) }
    }
  }
}
