import AnonAuthService
import AnonAuthWire
import Testing

@Suite("API keys and admin keys")
struct CredentialTests {
  @Test("a missing, empty or unknown x-api-key is API_KEY_INVALID; the right one passes")
  func apiKeys() async throws {
    try await ServiceHarness.with { h in
      let method = ServiceHarness.path(AccountService.name, "SignUp")
      let bad: [[String: String]] = [
        [:], ["x-api-key": ""], ["x-api-key": "AAnot-a-key"], ["api-key": h.apiKey],
      ]
      for metadata in bad {
        let context = h.context(method, metadata: metadata)
        expectRPCError(
          .apiKeyInvalid, "\(metadata)",
          sync: { () throws(RPCError) in
            try h.accounts.authenticate(context)
          })
        expectRPCError(
          .apiKeyInvalid, "\(metadata)",
          sync: { () throws(RPCError) in
            try h.tokens.authenticate(context)
          })
        await expectRPCError(.apiKeyInvalid, "\(metadata)") { () async throws(RPCError) in
          try await h.accounts.signUp(SignUpRequest(kind: .anonymous(AnonymousSignUp())), context: context)
        }
      }
      #expect(try await h.accountCount() == 0)
      #expect(try await h.countedIPKeys().isEmpty)

      try h.accounts.authenticate(h.accountContext("SignUp"))
      try h.tokens.authenticate(h.tokenContext("GetPublicKeys"))
    }
  }

  @Test("an API key stops working when revoked")
  func revokedAPIKey() async throws {
    try await ServiceHarness.with { h in
      _ = try await h.admin.revokeApiKey(
        RevokeApiKeyRequest(projectId: h.projectID, apiKey: h.apiKey), context: h.adminContext("RevokeApiKey")
      )
      expectRPCError(
        .apiKeyInvalid,
        sync: { () throws(RPCError) in
          try h.accounts.authenticate(h.accountContext("SignUp"))
        })
      let listed = try h.admin.listApiKeys(
        ListApiKeysRequest(projectId: h.projectID), context: h.adminContext("ListApiKeys"))
      #expect(listed.apiKeys.isEmpty)
    }
  }

  @Test("a missing or wrong admin key, or an API key as bearer, is ADMIN_KEY_INVALID")
  func adminKeys() async throws {
    try await ServiceHarness.with { h in
      let method = ServiceHarness.path(AdminService.name, "GetProjectConfig")
      let bad: [[String: String]] = [
        [:],
        ["authorization": ""],
        ["authorization": "Bearer "],
        ["authorization": "Bearer aak_wrong"],
        ["authorization": "Bearer \(h.apiKey)"],
        ["authorization": h.adminKey],
        ["authorization": "Basic \(h.adminKey)"],
        ["authorization": "Bearer \(h.adminKey)x"],
        ["x-api-key": h.apiKey],
      ]
      for metadata in bad {
        expectRPCError(
          .adminKeyInvalid, "\(metadata)",
          sync: { () throws(RPCError) in
            try h.admin.authenticate(h.context(method, metadata: metadata))
          })
      }
      try h.admin.authenticate(h.context(method, metadata: ["authorization": "Bearer \(h.adminKey)"]))
    }
  }
}
