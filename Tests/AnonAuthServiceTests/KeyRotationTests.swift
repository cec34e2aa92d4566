import AnonAuthCrypto
import AnonAuthService
import AnonAuthWire
import Testing

@Suite("Signing-key rotation")
struct KeyRotationTests {
  func kids(_ keys: GetPublicKeysResponse) throws -> [String] {
    try #require(try jsonObject(keys.jwksJson)["keys"]?.arrayValue).compactMap { $0["kid"]?.stringValue }
  }

  @Test("RotateSigningKey: a new kid signs, the old one stays published and its tokens verify")
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
}
