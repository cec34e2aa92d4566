import AnonAuthService
import AnonAuthStore
import AnonAuthWire
import Testing

/// UnlinkProvider.
@Suite struct UnlinkTests {
  @Test func unlinkingAProviderKeepsTheAccountPermanent() async throws {
    try await LinkingHarness.with { h in
      let anonymous = try await h.anonymous()
      h.clock.advance(seconds: 1)
      let google = try await h.link(
        anonymous.idToken, try h.googleCredential(sub: "g-u", email: "uma@gmail.com"))
      h.clock.advance(seconds: 1)
      let linked = try await h.link(
        google.idToken, LinkingHarness.idToken("oidc.inline", try h.oidc.token(sub: "o-u", now: h.nowSeconds))
      )
      let info = try await h.unlink(linked.idToken, "google.com")
      #expect(info.providers.map(\.providerId) == ["oidc.inline"])
      #expect(!info.isAnonymous)
      #expect(try await h.account(anonymous.localId).isAnonymous == false)
      await expectLinkError(.noSuchProvider) { try await h.unlink(linked.idToken, "google.com") }
      await expectLinkError(.noSuchProvider) { try await h.unlink(linked.idToken, "facebook.com") }
      await expectLinkError(.noSuchProvider) { try await h.unlink(linked.idToken, "") }
      // The identity is free again: another account may link it.
      let other = try await h.anonymous()
      h.clock.advance(seconds: 1)
      #expect(try await h.link(other.idToken, try h.googleCredential(sub: "g-u")).localId == other.localId)
    }
  }

  @Test func unlinkingThePasswordRemovesEmailAndHash() async throws {
    try await LinkingHarness.with { h in
      let created = try await h.signUp(email: "una@example.com", password: "secret-1")
      h.clock.advance(seconds: 1)
      let linked = try await h.link(created.idToken, try h.googleCredential(sub: "g-una"))
      let info = try await h.unlink(linked.idToken, "password")
      #expect(info.email.isEmpty && !info.isAnonymous)
      #expect(info.providers.map(\.providerId) == ["google.com"])
      let account = try await h.account(created.localId)
      #expect(account.passwordHash == nil && account.email == nil)
      await expectLinkError(.invalidLoginCredentials) {
        try await h.signIn(email: "una@example.com", password: "secret-1")
      }
      await expectLinkError(.noSuchProvider) { try await h.unlink(linked.idToken, "password") }
      // The email is free for a new account.
      _ = try await h.signUp(email: "una@example.com", password: "secret-2")
    }
  }

  @Test func anAnonymousAccountHasNothingToUnlink() async throws {
    try await LinkingHarness.with { h in
      let anonymous = try await h.anonymous()
      let before = try await h.snapshot(anonymous.localId)
      await expectLinkError(.noSuchProvider) { try await h.unlink(anonymous.idToken, "anonymous") }
      await expectLinkError(.noSuchProvider) { try await h.unlink(anonymous.idToken, "password") }
      #expect(try await h.snapshot(anonymous.localId) == before)
      await expectLinkError(.invalidIdToken) { try await h.unlink("bad", "password") }
    }
  }
}
