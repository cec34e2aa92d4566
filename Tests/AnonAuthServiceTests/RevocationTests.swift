import AnonAuthService
import AnonAuthWire
import Testing

@Suite("valid_since revocation")
struct RevocationTests {
  @Test("iat before valid_since: TOKEN_EXPIRED with check_revoked, OK without")
  func validSince() async throws {
    try await ServiceHarness.with { h in
      let signedUp = try await h.signUp()
      let iat = try #require(try h.minter.verify(signedUp.idToken, projectID: h.projectID)["iat"]?.int64Value)

      // valid_since == iat: still valid (revoked only when iat < valid_since).
      try await h.updateAccount(signedUp.localId) { $0.validSince = iat }
      #expect(try await h.verify(signedUp.idToken, checkRevoked: true).uid == signedUp.localId)

      try await h.updateAccount(signedUp.localId) { $0.validSince = iat + 1 }
      await expectRPCError(.tokenExpired) { () async throws(RPCError) in
        try await h.verify(signedUp.idToken, checkRevoked: true)
      }
      await expectRPCError(.tokenExpired) { () async throws(RPCError) in
        try await h.accountInfo(signedUp.idToken)
      }
      let unchecked = try await h.verify(signedUp.idToken, checkRevoked: false)
      #expect(unchecked.uid == signedUp.localId)
      #expect(unchecked.issuedAt == iat)
    }
  }

  @Test(
    "refresh-token reuse revokes the family and its ID tokens fail check_revoked; other accounts are untouched"
  )
  func reuseRevokesIDTokens() async throws {
    try await ServiceHarness.with { h in
      let victim = try await h.signUp()
      let bystander = try await h.signUp()
      let rotated = try await h.refresh(victim.refreshToken)
      let reissued = try await h.refresh(victim.refreshToken)  // a grace-window re-issue
      for token in [victim.idToken, rotated.idToken, reissued.idToken] {
        #expect(try await h.verify(token, checkRevoked: true).uid == victim.localId)
      }
      h.clock.advance(seconds: 11)
      await expectRPCError(.invalidRefreshToken) { () async throws(RPCError) in
        try await h.refresh(victim.refreshToken)
      }
      for token in [victim.idToken, rotated.idToken, reissued.idToken] {
        await expectRPCError(.tokenExpired, "check_revoked after reuse") { () async throws(RPCError) in
          try await h.verify(token, checkRevoked: true)
        }
        // Without check_revoked only the signature and expiry count, as in Firebase.
        #expect(try await h.verify(token, checkRevoked: false).uid == victim.localId)
      }
      await expectRPCError(.invalidRefreshToken, "the family's live token") { () async throws(RPCError) in
        try await h.refresh(rotated.refreshToken)
      }
      #expect(try await h.verify(bystander.idToken, checkRevoked: true).uid == bystander.localId)
      _ = try await h.refresh(bystander.refreshToken)
    }
  }
}
