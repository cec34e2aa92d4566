import AnonAuthCrypto
import AnonAuthService
import AnonAuthWire
import Testing

@Suite("Restart on the same store")
struct RestartTests {
  @Test("accounts, signing keys, refresh tokens, API and admin keys survive a restart")
  func keepsState() async throws {
    try await ServiceHarness.with { h in
      let signedUp = try await h.signUp()
      let kid = try #require(try JWT.decode(signedUp.idToken).keyID)
      let keysBefore = h.publicKeys()

      let r = try await h.restarted()
      #expect(try await r.accountCount() == 1)
      #expect(try await r.accountInfo(signedUp.idToken).localId == signedUp.localId)
      #expect(try await r.verify(signedUp.idToken, checkRevoked: true).uid == signedUp.localId)
      #expect(r.publicKeys().jwksJson == keysBefore.jwksJson)
      #expect(r.publicKeys().x509Certificates == keysBefore.x509Certificates)

      let refreshed = try await r.refresh(signedUp.refreshToken)
      #expect(try JWT.decode(refreshed.idToken).keyID == kid)
      let newcomer = try await r.signUp(peerIP: "192.0.2.77")
      #expect(try JWT.decode(newcomer.idToken).keyID == kid)
      try r.admin.authenticate(r.adminContext("GetProjectConfig"))
      #expect(try r.config().anonymousEnabled)
    }
  }

  @Test("the sign-up quota's counters survive a restart")
  func keepsQuota() async throws {
    try await ServiceHarness.with { h in
      try await h.setSignUpQuota(2)
      _ = try await h.signUp()
      _ = try await h.signUp()
      let r = try await h.restarted()
      #expect(try r.config().signUpQuotaPerHour == 2)
      let refused = await expectRPCError(.tooManyAttempts) { () async throws(RPCError) in
        try await r.signUp()
      }
      #expect(refused?.details["retry_after_seconds"] == "3600")
      _ = try await r.signUp(peerIP: "192.0.2.99")
    }
  }

  @Test("a restart with another master key fails to start the minter")
  func otherMasterKey() async throws {
    try await ServiceHarness.with { h in
      _ = try await h.signUp()
      let certificates = h.publicKeys().x509Certificates
      let wrong = try await h.reopen(masterKey: try SecureRandom.bytes(32))
      await #expect(throws: (any Error).self) { try await wrong.minter.start() }
      #expect(!wrong.minter.hasKeys)
      await wrong.close()
      // Nothing was rotated away: the right key still starts, with the same keys.
      let r = try await h.restarted()
      #expect(r.minter.hasKeys)
      #expect(r.publicKeys().x509Certificates == certificates)
    }
  }
}
