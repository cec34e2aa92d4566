import AnonAuthCrypto
import AnonAuthStore
import AnonAuthWire
import Testing

@testable import AnonAuthService

@Suite("Refresh-token keys")
struct RefreshTokenKeyTests {
  @Test("a new token is 54 base64url characters; its key is its stamp, then its SHA-256")
  func stampedShape() throws {
    let made = try RefreshTokenFactory.make(nowMs: 1_790_000_000_123)
    #expect(made.token.utf8.count == 54)
    let bytes = try #require(Base64URL.decode(made.token))
    #expect(bytes.count == 40)
    #expect(made.hash == Array(bytes.prefix(8)) + SHA256.hash(Array(made.token.utf8)))
    #expect(RefreshTokenFactory.hash(made.token) == made.hash)
    // The stamp is the time in ms, big-endian in six bytes.
    let ms = bytes.prefix(6).reduce(Int64(0)) { $0 << 8 | Int64($1) }
    #expect(ms == 1_790_000_000_123)
  }

  @Test("keys and family ids sort by issue time; the same millisecond still differs")
  func ordered() throws {
    var previous: (key: [UInt8], family: String)?
    for ms in stride(from: Int64(1_790_000_000_000), to: 1_790_000_600_000, by: 7_919) {
      let key = try RefreshTokenFactory.make(nowMs: ms).hash
      let family = RefreshTokenFactory.familyID(forKey: key)
      if let previous {
        #expect(previous.key.lexicographicallyPrecedes(key))
        #expect(previous.family < family)
      }
      previous = (key, family)
    }
    let a = try RefreshTokenFactory.make(nowMs: 5)
    let b = try RefreshTokenFactory.make(nowMs: 5)
    #expect(a.hash != b.hash)
    #expect(a.token != b.token)
  }

  @Test("a token of the older form (43 characters) keys by its SHA-256 alone, as stored")
  func legacyKey() {
    let legacy = "AMf-vBx_refresh_token_43_characters_long_ab"
    #expect(legacy.utf8.count == 43)
    #expect(RefreshTokenFactory.hash(legacy) == SHA256.hash(Array(legacy.utf8)))
    // 54 characters that are not base64url of 40 bytes are keyed as junk: SHA-256 only.
    let junk = String(repeating: "*", count: 54)
    #expect(RefreshTokenFactory.hash(junk) == SHA256.hash(Array(junk.utf8)))
  }

  @Test("a refresh token issued before stamps still refreshes, rotating onto a stamped one")
  func legacyTokenStillRefreshes() async throws {
    try await ServiceHarness.with { h in
      let signedUp = try await h.signUp()
      // Rewrite the account's stored token into the older form: a 43-character token
      // whose key is its SHA-256, in a family named the older way (base64url).
      let legacy = try SecureRandom.base64URL(byteCount: 32)
      let legacyKey = SHA256.hash(Array(legacy.utf8))
      let stampedKey = RefreshTokenFactory.hash(signedUp.refreshToken)
      let localID = signedUp.localId
      try await h.store.write { db in
        try db.execute(
          "UPDATE refresh_tokens SET token_hash = ?, family_id = ? WHERE token_hash = ?",
          [.blob(legacyKey), .text(Base64URL.encode(Array(legacyKey.prefix(16)))), .blob(stampedKey)])
        #expect(db.changes == 1)
      }
      await expectRPCError(.invalidRefreshToken, "the stamped token was rewritten away") {
        () async throws(RPCError) in
        try await h.refresh(signedUp.refreshToken)
      }
      let refreshed = try await h.refresh(legacy)
      #expect(refreshed.localId == localID)
      #expect(refreshed.refreshToken.utf8.count == 54)
      // Replayed within the grace window: the same successor (sealed under the old key).
      let replay = try await h.refresh(legacy)
      #expect(replay.refreshToken == refreshed.refreshToken)
      _ = try await h.refresh(refreshed.refreshToken)
    }
  }
}
