import AnonAuthCrypto
import AnonAuthWire
import Foundation
import Testing

@testable import AnonAuthService

/// The OIDC verifier against a fake issuer made here: its own RSA and P-256 keys, its
/// JWKS inline. Every check has a token that fails it.
@Suite struct OIDCVerifierTests {
  static let now: Int64 = 1_800_000_000

  let issuer: FakeIssuer
  let verifier: OIDCVerifier

  init() throws {
    issuer = try FakeIssuer(issuer: "https://login.example", clientID: "client-1")
    let config = IdpConfig(
      providerId: "oidc.example", enabled: true, clientId: "client-1", issuer: "https://login.example",
      jwksJson: issuer.jwksJSON)
    verifier = OIDCVerifier(
      config: config, cache: JWKSCache(outbound: NoOutboundHTTP(), clock: ManualClock()))
  }

  func claims(_ change: (inout [String: JSONValue]) -> Void = { _ in }) -> [String: JSONValue] {
    var claims = issuer.claims(sub: "user-1", now: Self.now, email: "Una@Example.com")
    change(&claims)
    return claims
  }

  func verify(_ token: String, nonce: String = "") async throws(RPCError) -> VerifiedIdentity {
    try await verifier.verify(idToken: token, nonce: nonce, nowSeconds: Self.now)
  }

  @Test(arguments: [FakeIssuer.Signer.rsa, .ec])
  func acceptsAGoodToken(signer: FakeIssuer.Signer) async throws {
    let identity = try await verify(try issuer.sign(claims(), with: signer))
    #expect(identity.providerID == "oidc.example")
    #expect(identity.rawID == "user-1")
    #expect(identity.email == "una@example.com")
    #expect(identity.emailVerified)
    #expect(identity.displayName == "Test User")
  }

  @Test func acceptsWhatTheStandardAllows() async throws {
    // aud as an array holding us; a token without kid; skew of up to 60 s both ways;
    // email_verified as the string Google once sent.
    _ = try await verify(
      try issuer.sign(
        claims {
          $0["aud"] = ["other", "client-1"]; $0["azp"] = "client-1"
        }))
    _ = try await verify(try issuer.sign(claims { $0["aud"] = ["client-1"] }))
    // One audience (us) and another azp: Google's cross-client form (the app's client
    // id as azp, the server's as aud) is accepted, as Google's own verifiers accept it.
    _ = try await verify(try issuer.sign(claims { $0["azp"] = "android-client" }))
    _ = try await verify(
      try issuer.sign(
        claims {
          $0["aud"] = ["client-1"]; $0["azp"] = "android-client"
        }))
    _ = try await verify(try issuer.sign(claims(), kid: ""))
    _ = try await verify(try issuer.sign(claims { $0["exp"] = .int(Self.now - 59) }))
    _ = try await verify(try issuer.sign(claims { $0["iat"] = .int(Self.now + 59) }))
    _ = try await verify(try issuer.sign(claims { $0["nbf"] = .int(Self.now + 59) }))
    let stringly = try await verify(try issuer.sign(claims { $0["email_verified"] = "true" }))
    #expect(stringly.emailVerified)
    let unverified = try await verify(try issuer.sign(claims { $0["email_verified"] = nil }))
    #expect(!unverified.emailVerified)
    let badEmail = try await verify(try issuer.sign(claims { $0["email"] = "not an email" }))
    #expect(badEmail.email.isEmpty && !badEmail.emailVerified)
    // A display name is cut to 256 characters and to 1024 bytes, at a character boundary:
    // 300 characters of 4 bytes each keep 256 characters (1024 bytes); characters of
    // 40 combining marks each (81 bytes; 80 of them, the token limit is 16 KiB) keep as
    // many whole characters as 1024 bytes hold.
    let long = try await verify(
      try issuer.sign(claims { $0["name"] = .string(String(repeating: "😀", count: 300)) }))
    #expect(long.displayName.count == 256 && long.displayName.utf8.count == 1024)
    let marks = "e" + String(repeating: "\u{301}", count: 40)
    let heavy = try await verify(
      try issuer.sign(claims { $0["name"] = .string(String(repeating: marks, count: 80)) }))
    #expect(heavy.displayName.utf8.count <= 1024 && heavy.displayName.utf8.count > 1024 - marks.utf8.count)
    #expect(heavy.displayName.count == 1024 / marks.utf8.count)
  }

  @Test func whatTheVerifierAcceptsImportsAgain() async throws {
    // The largest identity the verifier lets through (a 255-byte subject, a display name
    // of characters of many scalars each) is a row ImportAccounts takes: an export of an
    // account made from it imports again.
    let marks = "e" + String(repeating: "\u{301}", count: 40)
    let identity = try await verify(
      try issuer.sign(
        claims {
          $0["sub"] = .string(String(repeating: "s", count: 255))
          $0["name"] = .string(String(repeating: marks, count: 80))
        }))
    let row = ImportedAccount(
      localId: "uid-1", email: identity.email, emailVerified: identity.emailVerified,
      displayName: identity.displayName,
      providers: [
        ImportedProvider(
          providerId: identity.providerID, rawId: identity.rawID, email: identity.email,
          displayName: identity.displayName)
      ])
    let imported = try ImportRow.check(row, projectID: "p", hashConfigID: nil, nowMs: Self.now * 1000)
    #expect(imported.identities.first?.rawID == identity.rawID)
  }

  static func sha256Hex(_ text: String) -> String { Hex.encode(SHA256.hash(Array(text.utf8))) }

  @Test func aNonceIsTheSHA256OfTheRawNonceAndCannotBeSkipped() async throws {
    let hashed = Self.sha256Hex("raw-nonce")
    let token = try issuer.sign(claims { $0["nonce"] = .string(hashed) })
    let identity = try await verify(token, nonce: "raw-nonce")
    // The nonce to record as used: keyed by provider and claim, kept until the token
    // expires (and the skew).
    #expect(identity.nonce?.hash == SHA256.hash(Array(("oidc.example\u{0}" + hashed).utf8)))
    #expect(identity.nonce?.expiresAtMs == (Self.now + 3600 + 60) * 1000)
    // A replayed token without its raw nonce, or with the claim sent back as the raw
    // nonce (which anyone holding the token has): refused.
    await expectLinkError(.missingOrInvalidNonce) { try await verify(token) }
    await expectLinkError(.missingOrInvalidNonce) { try await verify(token, nonce: hashed) }
    await expectLinkError(.missingOrInvalidNonce) { try await verify(token, nonce: "raw-nonce2") }
    // A raw value in the token is not Firebase's form for oidc.*: its own value is refused.
    let echoed = try issuer.sign(claims { $0["nonce"] = "n-123" })
    await expectLinkError(.missingOrInvalidNonce) { try await verify(echoed, nonce: "n-123") }
    // A nonce for a token without one.
    await expectLinkError(.missingOrInvalidNonce) {
      try await verify(try issuer.sign(claims()), nonce: "n-123")
    }
    // No nonce on either side: nothing to record.
    #expect(try await verify(try issuer.sign(claims())).nonce == nil)
    // A nonce that is not a string, and a token with a nonce living over a day.
    await expectLinkError(.invalidIdpResponse) {
      try await verify(try issuer.sign(claims { $0["nonce"] = 5 }), nonce: "5")
    }
    await expectLinkError(.invalidIdpResponse) {
      try await verify(
        try issuer.sign(
          claims {
            $0["nonce"] = .string(hashed); $0["exp"] = .int(Self.now + 86_401)
          }), nonce: "raw-nonce")
    }
  }

  @Test func googleAlsoTakesTheRawValueItPutsInTheToken() async throws {
    let google = try FakeIssuer(issuer: "https://accounts.google.com", clientID: "g-client")
    let verifier = OIDCVerifier(
      config: IdpConfig(
        providerId: "google.com", enabled: true, clientId: "g-client", jwksJson: google.jwksJSON),
      cache: JWKSCache(outbound: NoOutboundHTTP(), clock: ManualClock()))
    var claims = google.claims(sub: "g", now: Self.now)
    claims["nonce"] = "n-123"
    let token = try google.sign(claims)
    _ = try await verifier.verify(idToken: token, nonce: "n-123", nowSeconds: Self.now)
    await expectLinkError(.missingOrInvalidNonce) {
      try await verifier.verify(idToken: token, nonce: "", nowSeconds: Self.now)
    }
    claims["nonce"] = .string(Self.sha256Hex("raw"))
    _ = try await verifier.verify(idToken: try google.sign(claims), nonce: "raw", nowSeconds: Self.now)
  }

  @Test func appleDefaultsClientIDListsAndTokenForms() async throws {
    let apple = try FakeIssuer(issuer: "https://appleid.apple.com", clientID: "com.example.app")
    let cache = JWKSCache(outbound: NoOutboundHTTP(), clock: ManualClock())
    // Apple's issuer and keys by default.
    let bare = OIDCVerifier(
      config: IdpConfig(providerId: "apple.com", clientIds: ["com.example.app"]), cache: cache)
    #expect(bare.keySource == .url("https://appleid.apple.com/auth/keys"))
    #expect(bare.issuers == ["https://appleid.apple.com"])
    let verifier = OIDCVerifier(
      config: IdpConfig(
        providerId: "apple.com", enabled: true, jwksJson: apple.jwksJSON,
        clientIds: ["com.example.app", "com.example.web"]),
      cache: cache)
    func verify(_ change: (inout [String: JSONValue]) -> Void) async throws(RPCError) -> VerifiedIdentity {
      var claims = apple.claims(sub: "001234.abcdef.0042", now: Self.now)
      claims["name"] = nil
      claims["nonce"] = .string(Self.sha256Hex("raw"))
      change(&claims)
      let token: String
      do { token = try apple.sign(claims) } catch { throw RPCError(.internalError, "signing") }
      return try await verifier.verify(idToken: token, nonce: "raw", nowSeconds: Self.now)
    }
    // The bundle id and the Services ID are both audiences of the app.
    for audience in ["com.example.app", "com.example.web"] {
      _ = try await verify { $0["aud"] = .string(audience) }
    }
    // Another app's bundle id is refused.
    await expectLinkError(.invalidIdpResponse) { try await verify { $0["aud"] = "com.other.app" } }
    // A private-relay email, with email_verified and is_private_email as strings...
    let relay = try await verify {
      $0["email"] = "x7kq2@privaterelay.appleid.com"; $0["email_verified"] = "true"
      $0["is_private_email"] = "true"
    }
    #expect(relay.email == "x7kq2@privaterelay.appleid.com" && relay.emailVerified)
    #expect(
      relay.providerID == "apple.com" && relay.rawID == "001234.abcdef.0042" && relay.displayName.isEmpty)
    // ...or booleans; and no email at all on a later sign-in: the identity is the sub.
    let booleans = try await verify {
      $0["email"] = "a@example.com"; $0["email_verified"] = true; $0["is_private_email"] = false
    }
    #expect(booleans.emailVerified)
    let later = try await verify { $0["email"] = nil }
    #expect(later.rawID == "001234.abcdef.0042" && later.email.isEmpty && !later.emailVerified)
    let unverified = try await verify {
      $0["email"] = "b@example.com"; $0["email_verified"] = "false"
    }
    #expect(!unverified.emailVerified)
  }

  static let rejections: [(String, @Sendable (inout [String: JSONValue]) -> Void)] = [
    ("wrong issuer", { $0["iss"] = "https://evil.example" }),
    ("issuer missing", { $0["iss"] = nil }),
    ("issuer not a string", { $0["iss"] = 1 }),
    ("wrong audience", { $0["aud"] = "client-2" }),
    ("audience missing", { $0["aud"] = nil }),
    ("audience list without us", { $0["aud"] = ["a", "b"] }),
    (
      "several audiences, another azp",
      {
        $0["aud"] = ["client-1", "b"]; $0["azp"] = "b"
      }
    ),
    ("expired beyond the skew", { $0["exp"] = .int(now - 61) }),
    ("exp missing", { $0["exp"] = nil }),
    ("exp not a number", { $0["exp"] = "soon" }),
    ("issued in the future beyond the skew", { $0["iat"] = .int(now + 61) }),
    ("iat missing", { $0["iat"] = nil }),
    ("not valid yet", { $0["nbf"] = .int(now + 61) }),
    ("nbf not a number", { $0["nbf"] = "x" }),
    ("sub missing", { $0["sub"] = nil }),
    ("sub empty", { $0["sub"] = "" }),
    ("sub not a string", { $0["sub"] = 42 }),
    ("sub too long", { $0["sub"] = .string(String(repeating: "s", count: 256)) }),
    // Several audiences need azp, and azp must be us (OIDC Core 3.1.3.7).
    ("several audiences, no azp", { $0["aud"] = ["client-1", "b"] }),
    (
      "several audiences, azp not a string",
      {
        $0["aud"] = ["client-1", "b"]; $0["azp"] = 1
      }
    ),
    // Control characters are refused at the door: ImportAccounts would refuse the account.
    ("sub with NUL", { $0["sub"] = "user\u{0}1" }),
    ("sub with a newline", { $0["sub"] = "user\n1" }),
    ("sub with a C1 control", { $0["sub"] = "user\u{85}1" }),
    ("email with NUL", { $0["email"] = "una\u{0}@example.com" }),
    ("name with DEL", { $0["name"] = "Una\u{7F}" }),
  ]

  @Test(arguments: rejections.indices)
  func refusesBadClaims(index: Int) async throws {
    let (name, change) = Self.rejections[index]
    let error = await expectLinkError(.invalidIdpResponse) {
      try await verify(try issuer.sign(claims(change)))
    }
    #expect(error != nil, "\(name)")
  }

  @Test func refusesBadSignaturesAndAlgorithms() async throws {
    let good = try issuer.sign(claims())
    var parts = good.split(separator: ".").map(String.init)
    // Another key under the same kid, RSA and EC.
    await expectLinkError(.invalidIdpResponse) {
      try await verify(try issuer.sign(claims(), with: .otherRSA))
    }
    await expectLinkError(.invalidIdpResponse) { try await verify(try issuer.sign(claims(), with: .otherEC)) }
    // A kid the provider does not have.
    await expectLinkError(.invalidIdpResponse) { try await verify(try issuer.sign(claims(), kid: "rsa-9")) }
    // The EC key's kid on an RS256 token (algorithm confusion).
    await expectLinkError(.invalidIdpResponse) {
      try await verify(try issuer.sign(claims(), kid: FakeIssuer.ecKID))
    }
    // Claims changed after signing.
    let forged = Base64URL.encode(JSONValue.object(claims { $0["sub"] = "admin" }).jsonBytes)
    await expectLinkError(.invalidIdpResponse) {
      try await verify([parts[0], forged, parts[2]].joined(separator: "."))
    }
    // alg none, HS256 and an unsupported one.
    for alg in ["none", "HS256", "PS256", "ES512"] {
      parts[0] = Base64URL.encode(JSONValue.object(["alg": .string(alg), "kid": "rsa-1"]).jsonBytes)
      await expectLinkError(.invalidIdpResponse) { try await verify(parts.joined(separator: ".")) }
    }
    // Not a JWT at all; oversize.
    for junk in ["", "abc", "a.b.c", "a.b", String(repeating: "a", count: 20_000)] {
      await expectLinkError(.invalidIdpResponse) { try await verify(junk) }
    }
  }

  @Test func googleDefaultsAndConfigurationProblems() async throws {
    let google = try FakeIssuer(issuer: "https://accounts.google.com", clientID: "g-client")
    let cache = JWKSCache(outbound: NoOutboundHTTP(), clock: ManualClock())
    let config = IdpConfig(
      providerId: "google.com", enabled: true, clientId: "g-client", jwksJson: google.jwksJSON)
    let verifier = OIDCVerifier(config: config, cache: cache)
    for iss in ["https://accounts.google.com", "accounts.google.com"] {
      var claims = google.claims(sub: "g", now: Self.now)
      claims["iss"] = .string(iss)
      _ = try await verifier.verify(idToken: try google.sign(claims), nonce: "", nowSeconds: Self.now)
    }
    // Without keys configured, google.com uses Google's published keys.
    #expect(
      OIDCVerifier(config: IdpConfig(providerId: "google.com", clientId: "g"), cache: cache).keySource
        == .url("https://www.googleapis.com/oauth2/v3/certs"))
    // An oidc.* provider needs an issuer and keys.
    let token = try google.sign(google.claims(sub: "g", now: Self.now))
    for broken in [
      IdpConfig(providerId: "oidc.x", enabled: true, clientId: "g-client", jwksJson: google.jwksJSON),
      IdpConfig(
        providerId: "oidc.x", enabled: true, clientId: "g-client", issuer: "https://accounts.google.com"),
    ] {
      await expectLinkError(.operationNotAllowed) {
        try await OIDCVerifier(config: broken, cache: cache).verify(
          idToken: token, nonce: "", nowSeconds: Self.now)
      }
    }
    // Keys that hold nothing usable.
    for jwks in ["{}", "{\"keys\":[]}", "{\"keys\":[{\"kty\":\"oct\",\"k\":\"AAAA\"}]}", "not json"] {
      let bad = IdpConfig(providerId: "google.com", enabled: true, clientId: "g-client", jwksJson: jwks)
      await expectLinkError(.invalidIdpResponse) {
        try await OIDCVerifier(config: bad, cache: cache).verify(
          idToken: token, nonce: "", nowSeconds: Self.now)
      }
    }
  }
}
