import AnonAuthCrypto
import Testing

/// Known-answer tests against tokens made by PyJWT (see `PyJWTFixtures`).
@Suite struct InteropTests {
  let expectedClaims: [String: JSONValue] = [
    "iss": "https://securetoken.google.com/demo-project", "aud": "demo-project", "sub": "pyjwt-user",
    "iat": 1_700_000_000, "exp": 1_700_003_600, "email_verified": true,
    "firebase": ["identities": ["email": ["a@example.com"]], "sign_in_provider": "password"],
  ]

  @Test func rs256TokenFromPyJWTVerifies() throws {
    let key = try RSAPublicKey(jwk: PyJWTFixtures.rsaN, e: PyJWTFixtures.rsaE)
    let decoded = try JWT.decode(PyJWTFixtures.rs256Token)
    #expect(decoded.keyID == "py-rsa")
    #expect(decoded.claims == expectedClaims)
    #expect(decoded.verify(with: key))
    #expect(!decoded.verify(with: try TestKeys.rsa.get().publicKey))
  }

  @Test func es256TokenFromPyJWTVerifies() throws {
    let key = try ECP256PublicKey(jwk: PyJWTFixtures.ecX, y: PyJWTFixtures.ecY)
    let decoded = try JWT.decode(PyJWTFixtures.es256Token)
    #expect(decoded.keyID == "py-ec")
    #expect(decoded.claims == expectedClaims)
    #expect(decoded.verify(with: key))
    #expect(!decoded.verify(with: try TestKeys.ec.get().publicKey))
  }

  @Test func pyJWTSignaturesDoNotMoveBetweenTokens() throws {
    let rsa = try JWT.decode(PyJWTFixtures.rs256Token)
    let ec = try JWT.decode(PyJWTFixtures.es256Token)
    let key = try ECP256PublicKey(jwk: PyJWTFixtures.ecX, y: PyJWTFixtures.ecY)
    let spliced = try JWT.decode(
      PyJWTFixtures.rs256Token.split(separator: ".").prefix(2).joined(separator: ".") + "."
        + Base64URL.encode(ec.signature))
    #expect(!spliced.verify(with: key))
    #expect(rsa.signingInput != ec.signingInput)
  }
}
