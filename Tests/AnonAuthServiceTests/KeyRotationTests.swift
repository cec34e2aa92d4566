import AnonAuthCrypto
import AnonAuthService
import AnonAuthWire
import Testing

@Suite("Signing-key rotation")
struct KeyRotationTests {
  func kids(_ keys: GetPublicKeysResponse) throws -> [String] { try kids(jwks: keys.jwksJson) }

  func kids(jwks: String) throws -> [String] {
    try #require(try jsonObject(jwks)["keys"]?.arrayValue).compactMap { $0["kid"]?.stringValue }
  }

  @Test("RotateSigningKey: a new kid is published at once and signs once caches hold it")
  func rotate() async throws {
    try await ServiceHarness.with { h in
      let before = try await h.signUp()
      let oldKid = try #require(try JWT.decode(before.idToken).keyID)
      #expect(try kids(h.publicKeys()) == [oldKid])

      // A minute later (the JWKS lists keys oldest first, by creation time).
      h.clock.advance(seconds: 60)
      let rotated = try await h.admin.rotateSigningKey(
        RotateSigningKeyRequest(), context: h.adminContext("RotateSigningKey"))
      let newKid = rotated.kid
      #expect(!newKid.isEmpty)
      #expect(newKid != oldKid)

      // Published ahead: the key set holds it while the old key still signs, until every
      // cache (max-age, twice over through a shared cache) has fetched it.
      #expect(try kids(h.publicKeys()) == [oldKid, newKid])
      #expect(TokenMinter.publishAheadSeconds >= 2 * TokenMinter.publicKeysMaxAgeSeconds)
      h.clock.advance(seconds: TokenMinter.publishAheadSeconds - 1)
      let ahead = try await h.signUp()
      #expect(try JWT.decode(ahead.idToken).keyID == oldKid)
      h.clock.advance(seconds: 1)

      let after = try await h.signUp()
      #expect(try JWT.decode(after.idToken).keyID == newKid)
      let refreshed = try await h.refresh(before.refreshToken)
      #expect(try JWT.decode(refreshed.idToken).keyID == newKid)

      #expect(try await h.verify(before.idToken, checkRevoked: true).uid == before.localId)
      #expect(try await h.accountInfo(before.idToken).localId == before.localId)
      #expect(try await h.verify(after.idToken).uid == after.localId)

      let keys = h.publicKeys()
      #expect(try kids(keys) == [oldKid, newKid])
      #expect(Set(keys.x509Certificates.keys) == [oldKid, newKid])
      let oldPEM = try #require(keys.x509Certificates[oldKid])
      #expect(try JWT.decode(before.idToken).verify(with: try RSAPublicKey(pem: oldPEM)))
      let newPEM = try #require(keys.x509Certificates[newKid])
      #expect(try JWT.decode(after.idToken).verify(with: try RSAPublicKey(pem: newPEM)))
      #expect(try !JWT.decode(after.idToken).verify(with: try RSAPublicKey(pem: oldPEM)))
    }
  }

  @Test("a restart during the publish-ahead time keeps the old key signing, then the new one")
  func restartWhileAhead() async throws {
    try await ServiceHarness.with { h in
      let oldKid = try #require(try JWT.decode(try await h.signUp().idToken).keyID)
      let newKid = try await h.minter.rotate()
      let again = TokenMinter(
        store: h.store, clock: h.clock, masterKey: h.masterKey, issuerPrefix: ServiceHarness.issuerPrefix,
        pool: h.stack.pool)
      try await again.start()
      #expect(Set(try kids(jwks: again.publicKeys().jwks)) == [oldKid, newKid])
      let signedAhead = try await again.sign(["sub": "a"], .internalWork(.standalone))
      #expect(try JWT.decode(signedAhead).keyID == oldKid)
      h.clock.advance(seconds: TokenMinter.publishAheadSeconds)
      let signedAfter = try await again.sign(["sub": "a"], .internalWork(.standalone))
      #expect(try JWT.decode(signedAfter).keyID == newKid)
    }
  }

  @Test("the leaked-key runbook: the old key's row deleted, the new key signs at the next start")
  func leakedKeyDeleted() async throws {
    try await ServiceHarness.with { h in
      let oldKid = try #require(try JWT.decode(try await h.signUp().idToken).keyID)
      let newKid = try await h.minter.rotate()
      try await h.store.write { db in
        try db.execute("DELETE FROM signing_keys WHERE kid = ?", [.text(oldKid)])
      }
      let again = TokenMinter(
        store: h.store, clock: h.clock, masterKey: h.masterKey, issuerPrefix: ServiceHarness.issuerPrefix,
        pool: h.stack.pool)
      try await again.start()
      #expect(try kids(jwks: again.publicKeys().jwks) == [newKid])
      #expect(try JWT.decode(try await again.sign(["sub": "a"], .internalWork(.standalone))).keyID == newKid)
    }
  }

  @Test("a public URL names new tokens' issuer; tokens of the issuer prefix keep verifying")
  func publicURLIssuer() async throws {
    try await ServiceHarness.with { h in
      let before = try await h.signUp()
      #expect(
        try JWT.decode(before.idToken).claims["iss"]?.stringValue == ServiceHarness.issuerPrefix + h.projectID
      )
      h.minter.setPublicURL("https://auth.example.test/base")
      #expect(h.minter.issuer(for: h.projectID) == "https://auth.example.test/base/" + h.projectID)
      let after = try await h.signUp()
      #expect(
        try JWT.decode(after.idToken).claims["iss"]?.stringValue == "https://auth.example.test/base/"
          + h.projectID)
      #expect(try await h.verify(before.idToken).uid == before.localId)
      #expect(try await h.verify(after.idToken).uid == after.localId)
      // After another change of address, both earlier issuers' tokens still verify.
      h.minter.setPublicURL("https://moved.example.test")
      #expect(try await h.verify(before.idToken).uid == before.localId)
      #expect(try await h.verify(after.idToken).uid == after.localId)
      // Another project's issuer under the same URL is refused.
      let claims = try h.minter.verify(after.idToken, projectID: h.projectID)
      #expect(claims["aud"]?.stringValue == h.projectID)
      #expect(throws: RPCError.self) { try h.minter.verify(after.idToken, projectID: "other-project") }
    }
  }
}
