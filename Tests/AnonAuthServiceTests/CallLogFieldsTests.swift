import AnonAuthService
import AnonAuthWire
import Testing

/// The services report the project, uid and is_anon of each call for its log line.
@Suite("Call log fields")
struct CallLogFieldsTests {
  @Test("sign-up, refresh, account info and verify name the project and the anonymous account")
  func accountCalls() async throws {
    try await ServiceHarness.with { h in
      let signUp = h.accountContext("SignUp")
      let auth = try await h.accounts.signUp(
        SignUpRequest(kind: .anonymous(AnonymousSignUp())), context: signUp)
      #expect(
        signUp.log.logFields == [
          "project_id": .string(h.projectID), "uid": .string(auth.localId), "is_anon": .bool(true),
        ])

      let refresh = h.accountContext("RefreshToken")
      _ = try await h.accounts.refreshToken(
        RefreshTokenRequest(refreshToken: auth.refreshToken), context: refresh)
      #expect(refresh.log.logFields["uid"] == .string(auth.localId))

      let info = h.accountContext("GetAccountInfo")
      _ = try await h.accounts.getAccountInfo(GetAccountInfoRequest(idToken: auth.idToken), context: info)
      #expect(info.log.logFields["is_anon"] == .bool(true))

      let verify = h.tokenContext("VerifyIdToken")
      _ = try await h.tokens.verifyIdToken(VerifyIdTokenRequest(idToken: auth.idToken), context: verify)
      #expect(verify.log.logFields["uid"] == .string(auth.localId))
      #expect(verify.log.logFields["project_id"] == .string(h.projectID))
    }
  }

  @Test("a refused call names what was known before it failed, and nothing else")
  func refusedCalls() async throws {
    try await ServiceHarness.with { h in
      let badKey = h.accountContext("SignUp", apiKey: "AAnot-a-key")
      await #expect(throws: RPCError.self) {
        _ = try await h.accounts.signUp(SignUpRequest(kind: .anonymous(AnonymousSignUp())), context: badKey)
      }
      #expect(badKey.log.logFields.isEmpty)

      let badToken = h.accountContext("GetAccountInfo")
      await #expect(throws: RPCError.self) {
        _ = try await h.accounts.getAccountInfo(GetAccountInfoRequest(idToken: "x.y.z"), context: badToken)
      }
      #expect(badToken.log.logFields == ["project_id": .string(h.projectID)])
    }
  }

  @Test("admin calls name the project they act on")
  func adminCalls() async throws {
    try await ServiceHarness.with { h in
      let context = h.adminContext("GetProjectConfig")
      _ = try h.admin.getProjectConfig(GetProjectConfigRequest(projectId: h.projectID), context: context)
      #expect(context.log.logFields == ["project_id": .string(h.projectID)])
    }
  }
}
