import AnonAuthCrypto
import AnonAuthService
import AnonAuthStore
import AnonAuthWire
import Testing

/// LinkWithCredential: the seed's upgrade of an anonymous account, and every refusal.
@Suite struct LinkTests {
  @Test func linkingAPasswordMakesTheAnonymousAccountPermanent() async throws {
    try await LinkingHarness.with { h in
      let anonymous = try await h.anonymous()
      try await h.change(anonymous.localId) { $0.scheduledDeletionAtMs = 4_000_000_000_000 }
      h.clock.advance(seconds: 5)
      let linked = try await h.link(anonymous.idToken, LinkingHarness.password("Zoe@Example.com", "secret-1"))
      #expect(linked.localId == anonymous.localId)
      #expect(!linked.isAnonymous && !linked.isNewUser)
      #expect(linked.signInProvider == "password")
      let account = try await h.account(anonymous.localId)
      #expect(!account.isAnonymous)
      #expect(account.scheduledDeletionAtMs == 0)
      #expect(account.email == "zoe@example.com")
      #expect(account.validSince == h.nowSeconds)
      #expect(linked.account?.validSince == h.nowSeconds)
      #expect(linked.account?.scheduledDeletionAtMs == 0)

      // The old ID token is revoked; the new one, issued at valid_since, is not.
      await expectLinkError(.tokenExpired) { try await h.verify(anonymous.idToken) }
      let verified = try await h.verify(linked.idToken)
      #expect(verified.issuedAt == account.validSince)
      #expect(verified.uid == anonymous.localId)
      #expect(verified.signInProvider == "password" && !verified.isAnonymous)
      // A link is not a sign-in: the token keeps the anonymous session's auth_time.
      #expect(verified.authTime == h.nowSeconds - 5)
      // The anonymous session's refresh token is revoked with it; the new one works.
      await expectLinkError(.tokenExpired) { try await h.refresh(anonymous.refreshToken) }
      #expect(try await h.refresh(linked.refreshToken).signInProvider == "password")

      // Sign out, sign in with email and password: the same uid.
      let again = try await h.signIn(email: "zoe@example.com", password: "secret-1")
      #expect(again.localId == anonymous.localId)
      #expect(!again.isNewUser)
      // Not a sign-up: no new account was counted.
      #expect(try await h.signUpsCounted("password") == 0)
    }
  }

  @Test func linkingGoogleCarriesTheProviderAndItsEmail() async throws {
    try await LinkingHarness.with { h in
      let anonymous = try await h.anonymous()
      h.clock.advance(seconds: 2)
      let linked = try await h.link(
        anonymous.idToken, try h.googleCredential(sub: "g-42", email: "Gus@Gmail.com"))
      #expect(linked.localId == anonymous.localId && !linked.isAnonymous)
      #expect(linked.signInProvider == "google.com")
      #expect(linked.account?.email == "gus@gmail.com")
      #expect(linked.account?.emailVerified == true)
      #expect(linked.account?.displayName == "Test User")
      #expect(linked.account?.providers.map(\.rawId) == ["g-42"])
      let verified = try await h.verify(linked.idToken)
      let claims = try #require(JSONValue(jsonBytes: Array(verified.claimsJson.utf8))?.objectValue)
      #expect(claims["firebase"]?["sign_in_provider"] == "google.com")
      #expect(claims["firebase"]?["identities"] == ["email": ["gus@gmail.com"], "google.com": ["g-42"]])
      #expect(claims["provider_id"] == nil)
      // Signing in with Google later finds the same account.
      let signedIn = try await h.signIn(try h.googleCredential(sub: "g-42", email: "gus@gmail.com"))
      #expect(signedIn.localId == anonymous.localId && !signedIn.isNewUser)
    }
  }

  @Test func everyProviderLinks() async throws {
    try await LinkingHarness.with { h in
      let anonymous = try await h.anonymous()
      h.graph.add("fb-token", .init(userID: "fb-7", appID: "fb-app", email: "fay@example.com"))
      var idToken = anonymous.idToken
      let credentials: [Credential] = [
        LinkingHarness.idToken("oidc.inline", try h.oidc.token(sub: "o-1", now: h.nowSeconds, with: .ec)),
        LinkingHarness.idToken("oidc.remote", try h.remote.token(sub: "r-1", now: h.nowSeconds)),
        LinkingHarness.facebook("fb-token"),
        try h.googleCredential(sub: "g-1"),
        LinkingHarness.password("pat@example.com", "secret-1"),
      ]
      for credential in credentials {
        h.clock.advance(seconds: 1)
        let linked = try await h.link(idToken, credential)
        #expect(linked.signInProvider == credential.providerId)
        #expect(linked.localId == anonymous.localId)
        idToken = linked.idToken
      }
      let info = try await h.accounts.getAccountInfo(
        GetAccountInfoRequest(idToken: idToken), context: h.context("GetAccountInfo"))
      #expect(
        Set(info.providers.map(\.providerId))
          == ["oidc.inline", "oidc.remote", "facebook.com", "google.com", "password"])
      // The first identity with an email gave the account its email; linking a password
      // makes the password's email the account's (it is what signs in).
      #expect(info.email == "pat@example.com")
      #expect(h.graph.badProofs.load(ordering: .relaxed) == 0)
    }
  }

  @Test func anyAccountCanLinkNotOnlyAnonymousOnes() async throws {
    try await LinkingHarness.with { h in
      let created = try await h.signUp(email: "perm@example.com", password: "secret-1")
      h.clock.advance(seconds: 1)
      let linked = try await h.link(
        created.idToken, try h.googleCredential(sub: "g-perm", email: "perm@gmail.com"))
      #expect(linked.localId == created.localId)
      // The account keeps its email; the identity has its own.
      #expect(linked.account?.email == "perm@example.com")
      #expect(linked.account?.providers.first { $0.providerId == "google.com" }?.email == "perm@gmail.com")
    }
  }

  @Test func providerAlreadyLinked() async throws {
    try await LinkingHarness.with { h in
      let anonymous = try await h.anonymous()
      h.clock.advance(seconds: 1)
      let withGoogle = try await h.link(anonymous.idToken, try h.googleCredential(sub: "g-a"))
      let before = try await h.snapshot(anonymous.localId)
      await expectLinkError(.providerAlreadyLinked) {
        try await h.link(withGoogle.idToken, try h.googleCredential(sub: "g-b"))
      }
      h.clock.advance(seconds: 1)
      let withPassword = try await h.link(
        withGoogle.idToken, LinkingHarness.password("pal@example.com", "secret-1"))
      await expectLinkError(.providerAlreadyLinked) {
        try await h.link(withPassword.idToken, LinkingHarness.password("pal2@example.com", "secret-1"))
      }
      #expect(try await h.snapshot(anonymous.localId).identities.count == before.identities.count + 1)
    }
  }

  @Test func credentialAlreadyInUseNamesOnlyTheProviderAndEmail() async throws {
    try await LinkingHarness.with { h in
      let first = try await h.anonymous()
      let second = try await h.anonymous()
      h.clock.advance(seconds: 1)
      _ = try await h.link(first.idToken, try h.googleCredential(sub: "g-shared", email: "shared@gmail.com"))
      let before = try await h.snapshot(second.localId)
      // The identity is on the first account, and so is its email: the identity wins.
      let error = await expectLinkError(.credentialAlreadyInUse) {
        try await h.link(second.idToken, try h.googleCredential(sub: "g-shared", email: "shared@gmail.com"))
      }
      #expect(error?.details == ["provider_id": "google.com", "email": "shared@gmail.com"])
      #expect(error?.message.contains(first.localId) == false)
      #expect(try await h.snapshot(second.localId) == before)
    }
  }

  @Test func emailExistsForANewIdentityWithAnotherAccountsEmail() async throws {
    try await LinkingHarness.with { h in
      _ = try await h.signUp(email: "taken@example.com", password: "secret-1")
      let anonymous = try await h.anonymous()
      h.clock.advance(seconds: 1)
      let before = try await h.snapshot(anonymous.localId)
      await expectLinkError(.emailExists) {
        try await h.link(anonymous.idToken, try h.googleCredential(sub: "g-new", email: "TAKEN@example.com"))
      }
      await expectLinkError(.emailExists) {
        try await h.link(anonymous.idToken, LinkingHarness.password("taken@example.com", "secret-2"))
      }
      #expect(try await h.snapshot(anonymous.localId) == before)
    }
  }

  @Test func idTokenProblems() async throws {
    try await LinkingHarness.with { h in
      let credential = LinkingHarness.password("x@example.com", "secret-1")
      await expectLinkError(.invalidIdToken) { try await h.link("not.a.token", credential) }
      await expectLinkError(.invalidIdToken) { try await h.link("", credential) }

      let expiring = try await h.anonymous()
      h.clock.advance(seconds: 3601)
      await expectLinkError(.tokenExpired) { try await h.link(expiring.idToken, credential) }

      let revoked = try await h.anonymous()
      try await h.change(revoked.localId) { $0.validSince = 4_000_000_000 }
      await expectLinkError(.tokenExpired) { try await h.link(revoked.idToken, credential) }

      let disabled = try await h.anonymous()
      try await h.change(disabled.localId) { $0.disabled = true }
      await expectLinkError(.userDisabled) { try await h.link(disabled.idToken, credential) }

      let deleted = try await h.anonymous()
      _ = try await h.accounts.deleteAccount(
        DeleteAccountRequest(idToken: deleted.idToken), context: h.context("DeleteAccount"))
      await expectLinkError(.userNotFound) { try await h.link(deleted.idToken, credential) }
    }
  }

  @Test func credentialProblemsLeaveTheAccountExactlyAsItWas() async throws {
    try await LinkingHarness.with { h in
      let anonymous = try await h.anonymous()
      try await h.change(anonymous.localId) { $0.scheduledDeletionAtMs = 4_000_000_000_000 }
      h.clock.advance(seconds: 1)
      let before = try await h.snapshot(anonymous.localId)
      let now = h.nowSeconds
      let refusals: [(Reason, Credential?)] = [
        (.invalidArgument, nil),
        (.weakPassword, LinkingHarness.password("w@example.com", "123")),
        (.invalidEmail, LinkingHarness.password("not-an-email", "secret-1")),
        (.operationNotAllowed, LinkingHarness.idToken("oidc.off", try h.oidc.token(sub: "o", now: now))),
        (.operationNotAllowed, LinkingHarness.idToken("oidc.unknown", try h.oidc.token(sub: "o", now: now))),
        (.operationNotAllowed, LinkingHarness.idToken("twitter.com", "x")),
        (.invalidIdpResponse, LinkingHarness.idToken("google.com", "garbage")),
        (.invalidIdpResponse, LinkingHarness.idToken("google.com", try h.oidc.token(sub: "o", now: now))),
        (
          .invalidIdpResponse,
          LinkingHarness.idToken("oidc.inline", try h.oidc.token(sub: "o", now: now, with: .otherEC))
        ),
        (.invalidIdpResponse, LinkingHarness.facebook("unknown-token")),
      ]
      for (reason, credential) in refusals {
        await expectLinkError(reason) { try await h.link(anonymous.idToken, credential) }
        #expect(try await h.snapshot(anonymous.localId) == before, "after \(reason)")
      }
      // The ID token still works: nothing was revoked.
      _ = try await h.verify(anonymous.idToken)
    }
  }

  /// Two links of one identity to two accounts at once: the store's single writer runs
  /// the jobs one after the other, so exactly one wins.
  @Test(arguments: ["google.com", "password"])
  func concurrentLinksOfOneIdentityExactlyOneWins(provider: String) async throws {
    try await LinkingHarness.with { h in
      for round in 0..<8 {
        let accounts = [try await h.anonymous(), try await h.anonymous()]
        h.clock.advance(seconds: 1)
        let credential =
          provider == "password"
          ? LinkingHarness.password("race\(round)@example.com", "secret-1")
          : try h.googleCredential(sub: "race-\(round)", email: "race\(round)@gmail.com")
        let results = await withTaskGroup(of: Result<AuthResponse, RPCError>.self) { group in
          for account in accounts {
            group.addTask { () -> Result<AuthResponse, RPCError> in
              do throws(RPCError) {
                return .success(try await h.link(account.idToken, credential))
              } catch {
                return .failure(error)
              }
            }
          }
          return await group.reduce(into: []) { $0.append($1) }
        }
        let winners = results.compactMap { try? $0.get() }
        let losers = results.compactMap { result -> RPCError? in
          if case .failure(let error) = result { return error }
          return nil
        }
        #expect(winners.count == 1)
        let expected = provider == "password" ? "EMAIL_EXISTS" : "CREDENTIAL_ALREADY_IN_USE"
        #expect(losers.map(\.reason) == [expected])
        for account in accounts where account.localId != winners.first?.localId {
          let loser = try await h.snapshot(account.localId)
          #expect(loser.identities.isEmpty && loser.account?.isAnonymous == true)
        }
      }
    }
  }
}
