import AnonAuthCrypto
import AnonAuthService
import AnonAuthWire
import Testing

@Suite("RefreshToken")
struct RefreshTests {
  @Test("a refresh rotates the refresh token and keeps auth_time")
  func rotates() async throws {
    try await ServiceHarness.with { h in
      let signedUp = try await h.signUp()
      let authTime = h.clock.nowSeconds()
      h.clock.advance(seconds: 600)

      let refreshed = try await h.refresh(signedUp.refreshToken)
      #expect(refreshed.localId == signedUp.localId)
      #expect(refreshed.refreshToken != signedUp.refreshToken)
      #expect(refreshed.refreshToken.count >= 43)
      #expect(refreshed.idToken != signedUp.idToken)
      #expect(!refreshed.isNewUser)
      #expect(refreshed.isAnonymous)
      #expect(refreshed.signInProvider == "anonymous")
      #expect(refreshed.account?.lastRefreshAtMs == h.clock.nowMs())

      let claims = try h.minter.verify(refreshed.idToken, projectID: h.projectID)
      #expect(claims["auth_time"]?.int64Value == authTime)
      #expect(claims["iat"]?.int64Value == authTime + 600)
      #expect(claims["exp"]?.int64Value == authTime + 600 + 3600)
      #expect(claims["sub"]?.stringValue == signedUp.localId)
      #expect(claims["firebase"]?["sign_in_provider"]?.stringValue == "anonymous")

      // The successor refreshes in turn, with the same auth_time.
      h.clock.advance(seconds: 600)
      let next = try await h.refresh(refreshed.refreshToken)
      #expect(next.refreshToken != refreshed.refreshToken)
      let nextClaims = try h.minter.verify(next.idToken, projectID: h.projectID)
      #expect(nextClaims["auth_time"]?.int64Value == authTime)
    }
  }

  @Test("the old token within 10 s gives the same successor; after that it revokes the family")
  func reuse() async throws {
    try await ServiceHarness.with { h in
      let signedUp = try await h.signUp()
      let other = try await h.signUp()
      let first = try await h.refresh(signedUp.refreshToken)

      h.clock.advance(seconds: 5)
      let replay = try await h.refresh(signedUp.refreshToken)
      #expect(replay.refreshToken == first.refreshToken)
      #expect(replay.localId == signedUp.localId)
      _ = try h.minter.verify(replay.idToken, projectID: h.projectID)

      h.clock.advance(seconds: 6)
      await expectRPCError(.invalidRefreshToken) { () async throws(RPCError) in
        try await h.refresh(signedUp.refreshToken)
      }
      await expectRPCError(.invalidRefreshToken, "the successor is revoked with its family") {
        () async throws(RPCError) in
        try await h.refresh(first.refreshToken)
      }
      await expectRPCError(.invalidRefreshToken, "and stays so") { () async throws(RPCError) in
        try await h.refresh(signedUp.refreshToken)
      }
      // Another account is not affected; this account's ID tokens are revoked with the
      // family (valid_since moved: RevocationTests).
      _ = try await h.refresh(other.refreshToken)
      await expectRPCError(.tokenExpired) { () async throws(RPCError) in
        try await h.accountInfo(first.idToken)
      }
    }
  }

  @Test("a token two rotations old is reuse even inside the grace window")
  func olderGeneration() async throws {
    try await ServiceHarness.with { h in
      let signedUp = try await h.signUp()
      let first = try await h.refresh(signedUp.refreshToken)
      let second = try await h.refresh(first.refreshToken)
      h.clock.advance(seconds: 1)
      await expectRPCError(.invalidRefreshToken) { () async throws(RPCError) in
        try await h.refresh(signedUp.refreshToken)
      }
      for token in [first.refreshToken, second.refreshToken] {
        await expectRPCError(.invalidRefreshToken, "the whole family is revoked") {
          () async throws(RPCError) in
          try await h.refresh(token)
        }
      }
    }
  }

  @Test(
    "the grace window re-issues a successor at most 5 times, then TOO_MANY_ATTEMPTS_TRY_LATER; the family lives"
  )
  func graceReissuesAreLimited() async throws {
    try await ServiceHarness.with { h in
      let signedUp = try await h.signUp()
      let first = try await h.refresh(signedUp.refreshToken)
      for _ in 0..<5 {
        #expect(try await h.refresh(signedUp.refreshToken).refreshToken == first.refreshToken)
      }
      let writes = h.store.metrics.transactions
      for _ in 0..<10 {
        let refused = await expectRPCError(.tooManyAttempts) { () async throws(RPCError) in
          try await h.refresh(signedUp.refreshToken)
        }
        #expect(refused?.details["retry_after_seconds"] == "1")
      }
      #expect(h.store.metrics.transactions == writes, "refused from a read: the writer is not taken")
      // Not reuse: the successor the first call handed out still refreshes, and its own
      // rotation gets a fresh allowance.
      let second = try await h.refresh(first.refreshToken)
      #expect(try await h.refresh(first.refreshToken).refreshToken == second.refreshToken)
      _ = try await h.refresh(second.refreshToken)
    }
  }

  @Test("the grace window ends at 10 s")
  func graceBoundary() async throws {
    try await ServiceHarness.with { h in
      let signedUp = try await h.signUp()
      let first = try await h.refresh(signedUp.refreshToken)
      h.clock.advance(ms: 10_000)
      #expect(try await h.refresh(signedUp.refreshToken).refreshToken == first.refreshToken)
      h.clock.advance(ms: 1)
      await expectRPCError(.invalidRefreshToken) { () async throws(RPCError) in
        try await h.refresh(signedUp.refreshToken)
      }
    }
  }

  @Test("unknown, empty and oversized tokens are INVALID_REFRESH_TOKEN")
  func unknown() async throws {
    try await ServiceHarness.with { h in
      let signedUp = try await h.signUp()
      let random = try SecureRandom.base64URL(byteCount: 32)
      for token in [
        random, "", String(repeating: "x", count: 600), signedUp.idToken, signedUp.refreshToken + "A",
      ] {
        await expectRPCError(.invalidRefreshToken, "\(token.prefix(20))") { () async throws(RPCError) in
          try await h.refresh(token)
        }
      }
      // None of that hurt the real token, or took the writer: the unknown tokens were
      // refused from a read.
      let writes = h.store.metrics.transactions
      for _ in 0..<20 {
        let junk = try SecureRandom.base64URL(byteCount: 48)  // the shape of a token, no session
        await expectRPCError(.invalidRefreshToken) { () async throws(RPCError) in try await h.refresh(junk) }
      }
      #expect(h.store.metrics.transactions == writes)
      _ = try await h.refresh(signedUp.refreshToken)
    }
  }

  @Test("a refresh token of project A with project B's API key is INVALID_REFRESH_TOKEN")
  func otherProject() async throws {
    try await ServiceHarness.with { h in
      let otherKey = try await h.makeProject("other-project")
      let signedUp = try await h.signUp()
      await expectRPCError(.invalidRefreshToken) { () async throws(RPCError) in
        try await h.refresh(signedUp.refreshToken, apiKey: otherKey)
      }
      // Not rotated by the refused call.
      let refreshed = try await h.refresh(signedUp.refreshToken)
      h.clock.advance(seconds: 60)
      _ = try await h.refresh(refreshed.refreshToken)
    }
  }
}
