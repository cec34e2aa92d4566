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
}
