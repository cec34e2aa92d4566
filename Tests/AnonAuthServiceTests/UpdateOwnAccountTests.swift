import AnonAuthService
import AnonAuthStore
import AnonAuthWire
import Testing

/// AccountService.UpdateAccount (addition): what Firebase's `accounts:update` needs of a
/// signed-in user.
@Suite struct UpdateOwnAccountTests {
  static func update(
    _ h: LinkingHarness, _ idToken: String, _ mask: [String], email: String = "", password: String = "",
    name: String = ""
  ) async throws(RPCError) -> AuthResponse {
    var request = UpdateOwnAccountRequest()
    request.idToken = idToken
    request.updateMask = mask
    request.email = email
    request.password = password
    request.displayName = name
    return try await h.accounts.updateAccount(request, context: h.context("UpdateAccount"))
  }

  @Test func aNameAloneGivesANewIDTokenAndKeepsTheSession() async throws {
    try await LinkingHarness.with { h in
      let anon = try await h.anonymous()
      let response = try await Self.update(h, anon.idToken, ["display_name"], name: "Ada")
      #expect(response.account?.displayName == "Ada")
      #expect(response.refreshToken.isEmpty && !response.idToken.isEmpty)
      #expect(try await h.account(anon.localId).displayName == "Ada")
      #expect(try await h.account(anon.localId).isAnonymous)
      _ = try await h.refresh(anon.refreshToken)
      await expectLinkError(.invalidArgument) {
        try await Self.update(h, anon.idToken, ["display_name"], name: "a\u{7}")
      }
      await expectLinkError(.invalidArgument) { try await Self.update(h, anon.idToken, ["disabled"]) }
    }
  }

  @Test func emailAndPasswordOnAnAnonymousAccountLinkAPassword() async throws {
    try await LinkingHarness.with { h in
      let anon = try await h.anonymous()
      await expectLinkError(.invalidArgument) {
        try await Self.update(h, anon.idToken, ["email"], email: "ann@example.com")
      }
      let response = try await Self.update(
        h, anon.idToken, ["email", "password", "display_name"], email: "ann@example.com",
        password: "secret-1",
        name: "Ann")
      #expect(response.localId == anon.localId && !response.isAnonymous)
      #expect(response.account?.displayName == "Ann")
      #expect(try await h.signIn(email: "ann@example.com", password: "secret-1").localId == anon.localId)
    }
  }

  @Test func aNewPasswordRevokesEveryOtherSession() async throws {
    try await LinkingHarness.with { h in
      let first = try await h.signUp(email: "bob@example.com", password: "secret-1")
      let other = try await h.signIn(email: "bob@example.com", password: "secret-1")
      h.clock.advance(seconds: 2)
      let changed = try await Self.update(h, first.idToken, ["password"], password: "secret-2")
      #expect(!changed.refreshToken.isEmpty)
      await expectLinkError(.invalidRefreshToken) { try await h.refresh(other.refreshToken) }
      await expectLinkError(.invalidRefreshToken) { try await h.refresh(first.refreshToken) }
      await expectLinkError(.tokenExpired) { try await h.verify(other.idToken) }
      _ = try await h.refresh(changed.refreshToken)
      _ = try await h.verify(changed.idToken)
      await expectLinkError(.invalidLoginCredentials) {
        try await h.signIn(email: "bob@example.com", password: "secret-1")
      }
      #expect(try await h.signIn(email: "bob@example.com", password: "secret-2").localId == first.localId)
    }
  }

  @Test func aNewEmailMustBeFreeAndMovesThePasswordIdentity() async throws {
    try await LinkingHarness.with { h in
      let carol = try await h.signUp(email: "carol@example.com", password: "secret-1")
      _ = try await h.signUp(email: "dan@example.com", password: "secret-1")
      await expectLinkError(.emailExists) {
        try await Self.update(h, carol.idToken, ["email"], email: "DAN@example.com")
      }
      let moved = try await Self.update(h, carol.idToken, ["email"], email: "carol2@example.com")
      #expect(moved.account?.email == "carol2@example.com")
      #expect(moved.account?.providers.map(\.rawId) == ["carol2@example.com"])
      #expect(try await h.signIn(email: "carol2@example.com", password: "secret-1").localId == carol.localId)
    }
  }

  @Test func aCredentialChangeNeedsARecentSignIn() async throws {
    try await LinkingHarness.with { h in
      let erin = try await h.signUp(email: "erin@example.com", password: "secret-1")
      h.clock.advance(seconds: 301)
      let fresh = try await h.refresh(erin.refreshToken)
      await expectLinkError(.credentialTooOld) {
        try await Self.update(h, fresh.idToken, ["password"], password: "secret-2")
      }
      _ = try await Self.update(h, fresh.idToken, ["display_name"], name: "Erin")
    }
  }
}
