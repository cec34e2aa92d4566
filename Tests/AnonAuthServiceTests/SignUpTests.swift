import AnonAuthCrypto
import AnonAuthService
import AnonAuthWire
import Testing

@Suite("Anonymous sign-up")
struct SignUpTests {
  @Test("the response: a 28-character uid, a base64url refresh token, anonymous and new")
  func response() async throws {
    try await ServiceHarness.with { h in
      let response = try await h.signUp()
      #expect(response.localId.count == 28)
      #expect(response.localId.allSatisfy { $0.isASCIIAlphanumeric })
      #expect(response.refreshToken.count >= 43)
      #expect(response.refreshToken.allSatisfy { $0.isBase64URL })
      // A 16-byte family id (starting with an issue stamp), then the 256 random bits.
      #expect(Base64URL.decode(response.refreshToken)?.count == 48)
      #expect(response.isAnonymous)
      #expect(response.isNewUser)
      #expect(response.signInProvider == "anonymous")
      #expect(response.expiresIn == 3600)
      let account = try #require(response.account)
      #expect(account.localId == response.localId)
      #expect(account.isAnonymous)
      #expect(account.providers.isEmpty)
      #expect(account.createdAtMs == h.clock.nowMs())

      let stored = try #require(try await h.account(response.localId))
      #expect(stored.isAnonymous)
      #expect(try await h.accountCount() == 1)

      let other = try await h.signUp()
      #expect(other.localId != response.localId)
      #expect(other.refreshToken != response.refreshToken)
      #expect(try await h.accountCount() == 2)
    }
  }

  @Test("the ID token verifies and has the claims of a Firebase anonymous ID token")
  func idTokenClaims() async throws {
    try await ServiceHarness.with { h in
      let response = try await h.signUp()
      let uid = response.localId
      let now = h.clock.nowSeconds()

      let verified = try h.minter.verify(response.idToken, projectID: h.projectID)
      let jwt = try JWT.decode(response.idToken)
      #expect(verified == jwt.claims)
      let claims = jwt.claims
      #expect(claims["iss"]?.stringValue == "https://securetoken.google.com/test-project")
      #expect(claims["aud"]?.stringValue == "test-project")
      #expect(claims["sub"]?.stringValue == uid)
      #expect(claims["user_id"]?.stringValue == uid)
      #expect(claims["iat"]?.int64Value == now)
      #expect(claims["exp"]?.int64Value == now + 3600)
      #expect(claims["auth_time"]?.int64Value == now)
      #expect(claims["firebase"] == .object(["identities": .object([:]), "sign_in_provider": "anonymous"]))
      #expect(claims["provider_id"]?.stringValue == "anonymous")
      #expect(claims["email"] == nil)
      #expect(claims["email_verified"] == nil)
      #expect(
        Set(claims.keys) == [
          "iss", "aud", "sub", "user_id", "iat", "exp", "auth_time", "firebase", "provider_id",
        ])

      #expect(jwt.header["alg"]?.stringValue == "RS256")
      #expect(jwt.header["typ"]?.stringValue == "JWT")
      let kid = try #require(jwt.keyID)

      let keys = h.publicKeys()
      let jwks = try jsonObject(keys.jwksJson)
      let published = try #require(jwks["keys"]?.arrayValue)
      let jwk = try #require(published.first { $0["kid"]?.stringValue == kid })
      #expect(jwk["kty"]?.stringValue == "RSA")
      #expect(jwk["alg"]?.stringValue == "RS256")
      #expect(jwk["use"]?.stringValue == "sig")
      let n = try #require(jwk["n"]?.stringValue)
      let e = try #require(jwk["e"]?.stringValue)
      #expect(jwt.verify(with: try RSAPublicKey(jwk: n, e: e)))
      let pem = try #require(keys.x509Certificates[kid])
      #expect(pem.hasPrefix("-----BEGIN CERTIFICATE-----"))
      #expect(jwt.verify(with: try RSAPublicKey(pem: pem)))
      #expect(keys.maxAgeSeconds > 0)
    }
  }

  @Test("VerifyIdToken reads the token back")
  func verifyIdToken() async throws {
    try await ServiceHarness.with { h in
      let response = try await h.signUp()
      let now = h.clock.nowSeconds()
      h.clock.advance(seconds: 90)
      let verified = try await h.verify(response.idToken, checkRevoked: true)
      #expect(verified.uid == response.localId)
      #expect(verified.projectId == h.projectID)
      #expect(verified.isAnonymous)
      #expect(verified.signInProvider == "anonymous")
      #expect(verified.authTime == now)
      #expect(verified.issuedAt == now)
      #expect(verified.expiresAt == now + 3600)
      let claims = try jsonObject(verified.claimsJson)
      #expect(claims["sub"]?.stringValue == response.localId)
      // The text is handed on as signed; it must still be the canonical encoding.
      #expect(verified.claimsJson == JSONValue.object(claims).jsonText)
    }
  }
}
