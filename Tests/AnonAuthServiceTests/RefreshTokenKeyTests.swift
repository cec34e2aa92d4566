import AnonAuthCrypto
import AnonAuthStore
import AnonAuthWire
import Testing

@testable import AnonAuthService

@Suite("Refresh-token keys")
struct RefreshTokenKeyTests {
  @Test(
    "a new token is 64 base64url characters: its family id, then 256 bits; its key is the id, then its SHA-256"
  )
  func shape() throws {
    let made = try RefreshTokenFactory.make(nowMs: 1_790_000_000_123)
    #expect(made.token.utf8.count == 64)
    let bytes = try #require(Base64URL.decode(made.token))
    #expect(bytes.count == 48)
    #expect(made.hash == Array(bytes.prefix(16)) + SHA256.hash(Array(made.token.utf8)))
    #expect(RefreshTokenFactory.hash(made.token) == made.hash)
    // The family id starts with the time in ms, big-endian in six bytes.
    let ms = bytes.prefix(6).reduce(Int64(0)) { $0 << 8 | Int64($1) }
    #expect(ms == 1_790_000_000_123)
    // A rotation keeps the family id and draws new secret bits.
    let next = try RefreshTokenFactory.make(familyID: Array(bytes.prefix(16)))
    #expect(next.hash.prefix(16) == made.hash.prefix(16))
    #expect(next.token != made.token && next.hash != made.hash)
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

  @Test("a refresh token of an older form still refreshes, rotating onto a new one; its replay is reuse")
  func legacyTokenStillRefreshes() async throws {
    try await ServiceHarness.with { h in
      let signedUp = try await h.signUp()
      // Rewrite the account's session as migration 8 carries over a token of the oldest
      // form: a 43-character token whose key is its SHA-256, found by legacy_key.
      let legacy = try SecureRandom.base64URL(byteCount: 32)
      let legacyKey = SHA256.hash(Array(legacy.utf8))
      let family = Array(RefreshTokenFactory.hash(signedUp.refreshToken).prefix(16))
      let localID = signedUp.localId
      try await h.store.write { db in
        try db.execute(
          "UPDATE refresh_sessions SET family_id = ?, token_hash = ?, legacy_key = ? WHERE family_id = ?",
          [.blob(Array(legacyKey.prefix(16))), .blob(legacyKey), .blob(legacyKey), .blob(family)])
        #expect(db.changes == 1)
      }
      await expectRPCError(.invalidRefreshToken, "the new token was rewritten away") {
        () async throws(RPCError) in
        try await h.refresh(signedUp.refreshToken)
      }
      let refreshed = try await h.refresh(legacy)
      #expect(refreshed.localId == localID)
      #expect(refreshed.refreshToken.utf8.count == 64)
      // Replayed within the grace window: the same successor (sealed under the old key).
      let replay = try await h.refresh(legacy)
      #expect(replay.refreshToken == refreshed.refreshToken)
      let next = try await h.refresh(refreshed.refreshToken)
      // Two rotations on, the legacy token is an older generation: reuse.
      await expectRPCError(.invalidRefreshToken) { () async throws(RPCError) in
        try await h.refresh(legacy)
      }
      await expectRPCError(.invalidRefreshToken, "the family is revoked") { () async throws(RPCError) in
        try await h.refresh(next.refreshToken)
      }
    }
  }
}
