import AnonAuthCrypto
import AnonAuthStore
import AnonAuthWire
import Foundation
import Testing

@testable import AnonAuthService

/// The Firebase ID token rules of the session exchange, each on its own, with inline
/// certificates.
@Suite struct FirebaseTokenVerifierTests {
  let firebase: FakeFirebase
  let clock = ManualClock()
  let verifier: FirebaseTokenVerifier
  var now: Int64 { clock.nowSeconds() }

  init() throws {
    firebase = try FakeFirebase()
    var project = ProjectRecord(projectID: "anonauth-project", createdAtMs: 0)
    project.firebaseProjectID = FakeFirebase.projectID
    project.firebaseCertsJSON = firebase.certsJSON
    verifier = FirebaseTokenVerifier(
      project: project, cache: JWKSCache(outbound: NoOutboundHTTP(), clock: clock))
  }

  func verify(_ token: String) async throws(RPCError) -> FirebaseIdentity {
    try await verifier.verify(idToken: token, nowSeconds: now)
  }

  /// Expects `INVALID_IDP_RESPONSE` for `token`, with a message that does not repeat it.
  func expectRefused(_ token: String, sourceLocation: SourceLocation = #_sourceLocation) async {
    let error = await expectLinkError(.invalidIdpResponse, sourceLocation: sourceLocation) {
      try await verify(token)
    }
    if let error, !token.isEmpty {
      #expect(!error.message.contains(token), sourceLocation: sourceLocation)
      #expect(error.message.count < 120, sourceLocation: sourceLocation)
    }
  }

  @Test func acceptsAFirebaseToken() async throws {
    let anonymous = try await verify(try firebase.token(uid: "anon-uid", now: now))
    #expect(anonymous.uid == "anon-uid" && anonymous.isAnonymous)
    #expect(anonymous.signInProvider == "anonymous" && anonymous.email.isEmpty)
    #expect(anonymous.authTime == now - 600)

    let google = try await verify(
      try firebase.token(
        uid: "g-uid", now: now, provider: "google.com", email: "Ada@Example.COM", name: "Ada",
        picture: "https://example.com/ada.png"))
    #expect(google.signInProvider == "google.com" && !google.isAnonymous)
    #expect(google.email == "ada@example.com" && google.emailVerified)
    #expect(google.displayName == "Ada" && google.photoURL == "https://example.com/ada.png")

    // A uid of exactly 128 characters is a Firebase uid.
    let long = String(repeating: "u", count: 128)
    #expect(try await verify(try firebase.token(uid: long, now: now)).uid == long)
  }

  @Test func allowsTheClockSkew() async throws {
    var claims = firebase.claims(uid: "u", now: now)
    claims["exp"] = .int(now - 59)
    claims["iat"] = .int(now + 59)
    claims["auth_time"] = .int(now + 59)
    #expect(try await verify(try firebase.sign(claims)).uid == "u")
  }

  /// One rule broken per case.
  static let claimRejections: [(String, @Sendable (inout [String: JSONValue], Int64) -> Void)] = [
    ("wrong iss", { c, _ in c["iss"] = "https://securetoken.google.com/other-project" }),
    ("iss of accounts.google.com", { c, _ in c["iss"] = "https://accounts.google.com" }),
    ("no iss", { c, _ in c["iss"] = nil }),
    ("wrong aud", { c, _ in c["aud"] = "other-project" }),
    ("aud as a list", { c, _ in c["aud"] = [.string(FakeFirebase.projectID)] }),
    ("expired", { c, now in c["exp"] = .int(now - 61) }),
    ("no exp", { c, _ in c["exp"] = nil }),
    ("iat in the future", { c, now in c["iat"] = .int(now + 61) }),
    ("no iat", { c, _ in c["iat"] = nil }),
    ("auth_time in the future", { c, now in c["auth_time"] = .int(now + 61) }),
    ("no auth_time", { c, _ in c["auth_time"] = nil }),
    ("exp as a string", { c, now in c["exp"] = .string(String(now + 600)) }),
    ("empty sub", { c, _ in c["sub"] = "" }),
    ("no sub", { c, _ in c["sub"] = nil }),
    ("sub as a number", { c, _ in c["sub"] = 42 }),
    ("sub over 128 characters", { c, _ in c["sub"] = .string(String(repeating: "u", count: 129)) }),
    // The uid becomes the account's: what ImportAccounts takes (128 bytes, no controls).
    ("sub over 128 bytes", { c, _ in c["sub"] = .string(String(repeating: "é", count: 65)) }),
    (
      "sub with NUL",
      { c, _ in
        c["sub"] = "uid\u{0}1"; c["user_id"] = "uid\u{0}1"
      }
    ),
    ("email with a newline", { c, _ in c["email"] = "ann@example.com\n" }),
    ("name with NUL", { c, _ in c["name"] = "Ann\u{0}" }),
    ("picture with a tab", { c, _ in c["picture"] = "https://p.example/a\tb" }),
    ("user_id not sub", { c, _ in c["user_id"] = "someone-else" }),
    ("no sign_in_provider", { c, _ in c["firebase"] = ["identities": [:]] }),
    ("odd sign_in_provider", { c, _ in c["firebase"] = ["sign_in_provider": "a b\"c"] }),
  ]

  @Test(arguments: claimRejections.indices)
  func refusesClaims(_ index: Int) async throws {
    let (_, breakRule) = Self.claimRejections[index]
    var claims = firebase.claims(uid: "u", now: now)
    breakRule(&claims, now)
    await expectRefused(try firebase.sign(claims))
  }

  @Test func refusesKeysAndSignatures() async throws {
    let claims = firebase.claims(uid: "u", now: now)
    // Unknown kid, no kid, empty kid.
    await expectRefused(try firebase.sign(claims, kid: "unknown-kid"))
    await expectRefused(
      try Self.unsigned(header: ["alg": "RS256", "typ": "JWT"], claims: claims, signature: [1]))
    await expectRefused(try firebase.sign(claims, kid: ""))
    // Another key under the published kid; a signature cut short; a changed payload.
    await expectRefused(try firebase.sign(claims, forged: true))
    let good = try firebase.sign(claims)
    await expectRefused(String(good.dropLast(4)))
    var changed = claims
    changed["sub"] = "someone-else"
    let parts = good.split(separator: ".")
    let swapped = try firebase.sign(changed).split(separator: ".")
    await expectRefused([parts[0], swapped[1], parts[2]].joined(separator: "."))
  }

  @Test func refusesOtherAlgorithms() async throws {
    let claims = firebase.claims(uid: "u", now: now)
    // ES256 by a key the test holds, under the published kid.
    let ec = try #require(LinkingTestKeys.ec)
    await expectRefused(try JWT.sign(claims: claims, key: ec, kid: FakeFirebase.kid))
    // HS256 keyed with the certificate (the classic confusion attack), and none.
    let header: [String: JSONValue] = ["alg": "HS256", "kid": .string(FakeFirebase.kid), "typ": "JWT"]
    let input = Self.input(header: header, claims: claims)
    let mac = HMACSHA256.authenticationCode(
      key: Array(firebase.certificatePEM.utf8), message: Array(input.utf8))
    await expectRefused(input + "." + Base64URL.encode(mac))
    await expectRefused(
      Self.input(header: ["alg": "none", "kid": .string(FakeFirebase.kid)], claims: claims) + ".")
    await expectRefused(
      try Self.unsigned(
        header: ["alg": "RS512", "kid": .string(FakeFirebase.kid)], claims: claims, signature: [1]))
  }

  @Test(arguments: ["", "garbage", "a.b.c", "....", String(repeating: "A", count: 20_000)])
  func refusesGarbage(_ token: String) async {
    await expectRefused(token)
  }

  @Test func refusesUnusableCertificates() async throws {
    var project = ProjectRecord(projectID: "p", createdAtMs: 0)
    project.firebaseProjectID = FakeFirebase.projectID
    let token = try firebase.token(uid: "u", now: now)
    for certs in [
      "", "{}", "[]", "not json", #"{"k":"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----"}"#,
    ] {
      project.firebaseCertsJSON = certs
      // An empty inline set means "fetch", and this cache has no network.
      let verifier = FirebaseTokenVerifier(
        project: project, cache: JWKSCache(outbound: NoOutboundHTTP(), clock: clock))
      await expectLinkError(.invalidIdpResponse) {
        try await verifier.verify(idToken: token, nowSeconds: now)
      }
    }
  }

  static func input(header: [String: JSONValue], claims: [String: JSONValue]) -> String {
    Base64URL.encode(JSONValue.object(header).jsonBytes) + "."
      + Base64URL.encode(JSONValue.object(claims).jsonBytes)
  }

  static func unsigned(header: [String: JSONValue], claims: [String: JSONValue], signature: [UInt8]) throws
    -> String
  {
    input(header: header, claims: claims) + "." + Base64URL.encode(signature)
  }
}

/// Google's certificate map fetched from a URL: where it is fetched from, and kept apart
/// from a JWKS at the same URL (the caching rules it shares with a `jwks_url` are
/// `KeyURLCachingTests`').
@Suite struct FirebaseCertificateURLTests {
  static let url = "https://certs.test/x509/securetoken"

  let firebase: FakeFirebase
  let clock = ManualClock()
  let outbound = FakeOutbound()
  let cache: JWKSCache
  let verifier: FirebaseTokenVerifier

  init() throws {
    firebase = try FakeFirebase()
    KeyServerKnobs().serve(firebase.certsJSON, at: Self.url, on: outbound)
    cache = JWKSCache(outbound: outbound, clock: clock)
    verifier = FirebaseTokenVerifier(project: Self.project(url: Self.url), cache: cache)
  }

  static func project(url: String) -> ProjectRecord {
    var project = ProjectRecord(projectID: "p", createdAtMs: 0)
    project.firebaseProjectID = FakeFirebase.projectID
    project.firebaseCertsURL = url
    return project
  }

  func verify(with verifier: FirebaseTokenVerifier? = nil) async throws {
    let now = clock.nowSeconds()
    _ = try await (verifier ?? self.verifier).verify(
      idToken: try firebase.sign(firebase.claims(uid: "u", now: now)), nowSeconds: now)
  }

  @Test func googlesURLByDefault() async throws {
    let project = Self.project(url: "")
    let verifier = FirebaseTokenVerifier(project: project, cache: cache)
    #expect(verifier.source == .url(FirebaseTokenVerifier.defaultCertsURL))
    let certs = firebase.certsJSON
    outbound.route(FirebaseTokenVerifier.defaultCertsURL) { _ in
      OutboundResponse(status: 200, body: Array(certs.utf8), freshnessSeconds: 600)
    }
    try await verify(with: verifier)
    #expect(outbound.urls == [FirebaseTokenVerifier.defaultCertsURL])
    // Inline certificates win over any URL.
    var inline = project
    inline.firebaseCertsJSON = certs
    inline.firebaseCertsURL = Self.url
    #expect(FirebaseTokenVerifier(project: inline, cache: cache).source == .inline(certs))
  }

  @Test func aJWKSAtTheSameURLIsCachedApart() async throws {
    try await verify()
    // The certificate map is no JWKS: read as one, it is fetched again and refused.
    await expectLinkError(.invalidIdpResponse) { try await cache.keys(url: Self.url, refresh: false) }
    #expect(outbound.count(Self.url) == 2)
    try await verify()
    #expect(outbound.count(Self.url) == 2)
  }
}
