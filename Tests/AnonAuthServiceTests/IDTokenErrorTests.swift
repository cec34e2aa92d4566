import AnonAuthCrypto
import AnonAuthService
import AnonAuthWire
import Testing

@Suite("ID tokens that are refused")
struct IDTokenErrorTests {
  @Test("malformed tokens are INVALID_ID_TOKEN")
  func malformed() async throws {
    try await ServiceHarness.with { h in
      let valid = try await h.signUp().idToken
      let parts = valid.split(separator: ".").map(String.init)
      try #require(parts.count == 3)
      let unsigned = Base64URL.encode(Array(#"{"alg":"none","typ":"JWT"}"#.utf8)) + "." + parts[1] + "."
      let malformed = [
        "", "not-a-jwt", "a.b.c", parts[0] + "." + parts[1], valid + ".", unsigned,
        String(repeating: "A", count: 20_000),
      ]
      for token in malformed {
        await expectRPCError(.invalidIdToken, "\(token.prefix(40))") { () async throws(RPCError) in
          try await h.accountInfo(token)
        }
        await expectRPCError(.invalidIdToken, "\(token.prefix(40))") { () async throws(RPCError) in
          try await h.verify(token)
        }
      }
    }
  }

  @Test("a token with changed claims, a changed signature or a forged signature is INVALID_ID_TOKEN")
  func tampered() async throws {
    try await ServiceHarness.with { h in
      let victim = try await h.signUp()
      let attacker = try await h.signUp()
      let parts = attacker.idToken.split(separator: ".").map(String.init)
      try #require(parts.count == 3)
      let decoded = try JWT.decode(attacker.idToken)
      var claims = decoded.claims
      claims["sub"] = .string(victim.localId)
      claims["user_id"] = .string(victim.localId)
      let swappedClaims =
        parts[0] + "." + Base64URL.encode(JSONValue.object(claims).jsonBytes) + "." + parts[2]

      var signature = decoded.signature
      signature[10] ^= 0x01
      let flippedSignature = parts[0] + "." + parts[1] + "." + Base64URL.encode(signature)

      // A token signed by another key under the real kid.
      let kid = try #require(decoded.keyID)
      let forged = try JWT.sign(claims: claims, key: try RSASigningKey.generate(bits: 2048), kid: kid)
      // Under a kid nobody published.
      let unknownKid = try JWT.sign(claims: claims, key: try RSASigningKey.generate(bits: 2048), kid: "nope")

      for (name, token) in [
        ("claims", swappedClaims), ("signature", flippedSignature), ("forged", forged), ("kid", unknownKid),
      ] {
        await expectRPCError(.invalidIdToken, "\(name)") { () async throws(RPCError) in
          try await h.accountInfo(token)
        }
        await expectRPCError(.invalidIdToken, "\(name)") { () async throws(RPCError) in
          try await h.verify(token, checkRevoked: true)
        }
      }
      // Nothing happened to the victim.
      let info = try await h.accountInfo(victim.idToken)
      #expect(info.localId == victim.localId)
    }
  }

  @Test("another project's token is INVALID_ID_TOKEN, for GetAccountInfo, DeleteAccount and VerifyIdToken")
  func otherProject() async throws {
    try await ServiceHarness.with { h in
      let otherKey = try await h.makeProject("other-project")
      let other = try await h.signUp(apiKey: otherKey)
      await h.expectIDTokenCallsRefuse(other.idToken, .invalidIdToken)
      #expect(try await h.accountCount() == 1)
      // In its own project it is fine.
      let verified = try await h.verify(other.idToken, apiKey: otherKey)
      #expect(verified.uid == other.localId)
      #expect(verified.projectId == "other-project")
    }
  }

  @Test("a token is valid until its exp and TOKEN_EXPIRED from then on")
  func expired() async throws {
    try await ServiceHarness.with { h in
      let response = try await h.signUp()
      h.clock.advance(seconds: 3599)
      #expect(try await h.accountInfo(response.idToken).localId == response.localId)
      #expect(try await h.verify(response.idToken).uid == response.localId)
      h.clock.advance(seconds: 1)
      await h.expectIDTokenCallsRefuse(response.idToken, .tokenExpired)
      #expect(try await h.accountCount() == 1)
      // The refresh token still gets a fresh ID token.
      let refreshed = try await h.refresh(response.refreshToken)
      #expect(try await h.verify(refreshed.idToken).uid == response.localId)
    }
  }
}
