import AnonAuthCrypto
import Testing

@Suite struct JWTTests {
  let claims: [String: JSONValue] = [
    "iss": "https://anonauth.local/demo-project", "aud": "demo-project", "sub": "uid1",
    "user_id": "uid1", "iat": 1_700_000_000, "exp": 1_700_003_600, "auth_time": 1_700_000_000,
    "provider_id": "anonymous",
    "firebase": ["identities": [:], "sign_in_provider": "anonymous"],
  ]

  @Test func headerIsExactlyFirebases() throws {
    let token = try JWT.sign(claims: claims, key: try TestKeys.rsa.get(), kid: "k1")
    let header = try #require(token.split(separator: ".").first.flatMap { Base64URL.decode($0) })
    #expect(String(decoding: header, as: UTF8.self) == #"{"alg":"RS256","kid":"k1","typ":"JWT"}"#)
  }

  @Test func claimsAreDeterministicWithIntegerTimes() throws {
    let key = try TestKeys.rsa.get()
    let token = try JWT.sign(claims: claims, key: key, kid: "k1")
    #expect(try JWT.sign(claims: claims, key: key, kid: "k1") == token)
    let payload = try #require(token.split(separator: ".").dropFirst().first.flatMap { Base64URL.decode($0) })
    let text = String(decoding: payload, as: UTF8.self)
    #expect(text.hasPrefix(#"{"aud":"demo-project","auth_time":1700000000,"exp":1700003600,"#))
    #expect(text.contains(#""firebase":{"identities":{},"sign_in_provider":"anonymous"}"#))
  }

  @Test func ourTokenVerifiesWithTheKeyFromOurJWK() throws {
    let key = try TestKeys.rsa.get()
    let token = try JWT.sign(claims: claims, key: key, kid: "k1")
    let jwk = key.publicKey.jwk(kid: "k1")
    let publicKey = try RSAPublicKey(jwk: try #require(jwk["n"]), e: try #require(jwk["e"]))
    let decoded = try JWT.decode(token)
    #expect(decoded.algorithm == "RS256")
    #expect(decoded.keyID == "k1")
    #expect(decoded.claims == claims)
    #expect(decoded.verify(with: publicKey))
    #expect(!decoded.verify(with: try TestKeys.otherRSA.get().publicKey))
    // An RS256 token never verifies with an EC key, whatever the signature.
    #expect(!decoded.verify(with: try TestKeys.ec.get().publicKey))
  }

  @Test func tamperedTokensFail() throws {
    let key = try TestKeys.rsa.get()
    let token = try JWT.sign(claims: claims, key: key, kid: "k1")
    let parts = token.split(separator: ".").map(String.init)
    var forged = claims
    forged["sub"] = "someone-else"
    let forgedPayload = Base64URL.encode(JSONValue.object(forged).jsonBytes)
    let swapped = try JWT.decode(parts[0] + "." + forgedPayload + "." + parts[2])
    #expect(!swapped.verify(with: key.publicKey))
  }

  @Test func es256SignedAndVerifiedByUs() throws {
    let key = try TestKeys.ec.get()
    let token = try JWT.sign(claims: claims, key: key, kid: "e1")
    let decoded = try JWT.decode(token)
    #expect(decoded.header == ["alg": "ES256", "kid": "e1", "typ": "JWT"])
    #expect(decoded.signature.count == 64)
    #expect(decoded.verify(with: key.publicKey))
    #expect(!decoded.verify(with: try ECP256SigningKey.generate().publicKey))
    #expect(!decoded.verify(with: try TestKeys.rsa.get().publicKey))
  }
}
