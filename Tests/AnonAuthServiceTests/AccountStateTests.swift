import AnonAuthService
import AnonAuthWire
import Testing

@Suite("Sign-up refusals, deleted and disabled accounts")
struct AccountStateTests {
  @Test("SignUp with no kind is INVALID_ARGUMENT / MISSING_SIGN_UP_METHOD and creates nothing")
  func missingKind() async throws {
    try await ServiceHarness.with { h in
      await expectRPCError(.missingSignUpMethod) { () async throws(RPCError) in
        try await h.accounts.signUp(SignUpRequest(), context: h.accountContext("SignUp"))
      }
      #expect(Reason.missingSignUpMethod.code == .invalidArgument)
      let accounts = try await h.accountCount()
      #expect(accounts == 0)
      #expect(try await h.countedIPKeys().isEmpty)
    }
  }

  @Test("anonymous sign-in switched off is OPERATION_NOT_ALLOWED, creates nothing, and on again works")
  func anonymousOff() async throws {
    try await ServiceHarness.with { h in
      var config = ProjectConfig()
      config.projectId = h.projectID
      config.anonymousEnabled = false
      let after = try await h.updateConfig(config, mask: ["anonymous_enabled"])
      #expect(!after.anonymousEnabled)
      #expect(try h.config().anonymousEnabled == false)

      await expectRPCError(.operationNotAllowed) { () async throws(RPCError) in
        try await h.signUp()
      }
      #expect(try await h.accountCount() == 0)
      #expect(try await h.countedIPKeys().isEmpty)

      config.anonymousEnabled = true
      try await h.updateConfig(config, mask: ["anonymous_enabled"])
      _ = try await h.signUp()
      #expect(try await h.accountCount() == 1)
    }
  }

  @Test("after DeleteAccount: USER_NOT_FOUND for its ID token, INVALID_REFRESH_TOKEN for its refresh token")
  func deleted() async throws {
    try await ServiceHarness.with { h in
      let kept = try await h.signUp()
      let gone = try await h.signUp()
      _ = try await h.accounts.deleteAccount(
        DeleteAccountRequest(idToken: gone.idToken), context: h.accountContext("DeleteAccount"))
      #expect(try await h.account(gone.localId) == nil)
      #expect(try await h.accountCount() == 1)

      await h.expectIDTokenCallsRefuse(gone.idToken, .userNotFound, checkRevoked: true)
      await expectRPCError(.invalidRefreshToken) { () async throws(RPCError) in
        try await h.refresh(gone.refreshToken)
      }
      // Without check_revoked, VerifyIdToken checks only the token itself.
      #expect(try await h.verify(gone.idToken).uid == gone.localId)
      // The other account is untouched.
      #expect(try await h.accountInfo(kept.idToken).localId == kept.localId)
      _ = try await h.refresh(kept.refreshToken)
    }
  }

  @Test(
    "a disabled account is USER_DISABLED for GetAccountInfo and RefreshToken, and works again when enabled")
  func disabled() async throws {
    try await ServiceHarness.with { h in
      let response = try await h.signUp()
      try await h.updateAccount(response.localId) { $0.disabled = true }

      await expectRPCError(.userDisabled) { () async throws(RPCError) in
        try await h.accountInfo(response.idToken)
      }
      await expectRPCError(.userDisabled) { () async throws(RPCError) in
        try await h.refresh(response.refreshToken)
      }
      await expectRPCError(.userDisabled) { () async throws(RPCError) in
        try await h.verify(response.idToken, checkRevoked: true)
      }
      let stored = try #require(try await h.account(response.localId))
      #expect(stored.disabled)
      #expect(stored.lastRefreshAtMs == 0)

      // The refused refresh neither rotated nor revoked the token.
      try await h.updateAccount(response.localId) { $0.disabled = false }
      let refreshed = try await h.refresh(response.refreshToken)
      #expect(refreshed.localId == response.localId)
      #expect(try await h.accountInfo(response.idToken).disabled == false)
    }
  }
}
