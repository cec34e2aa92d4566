import AnonAuthCrypto
import AnonAuthWire
import Foundation
import Synchronization
import Testing

@testable import AnonAuthService

/// Apple's token and revoke endpoints played in-process: what `AppleRevocation` sends,
/// its client secret, its retries and its refusals.
@Suite struct AppleRevocationTests {
  /// Answers POSTs with `answer`, keeping each request's URL and form.
  final class FakeApple: OutboundHTTP {
    let seen = Mutex<[(url: String, form: [String: String])]>([])
    let answer: @Sendable (String, [String: String], Int) throws -> OutboundResponse

    init(_ answer: @escaping @Sendable (String, [String: String], Int) throws -> OutboundResponse) {
      self.answer = answer
    }

    func get(_ url: String) async throws -> OutboundResponse { OutboundResponse(status: 404, body: []) }

    func post(_ url: String, form: [(String, String)]) async throws -> OutboundResponse {
      let fields = Dictionary(form, uniquingKeysWith: { a, _ in a })
      let count = seen.withLock {
        $0.append((url, fields))
        return $0.count
      }
      return try answer(url, fields, count)
    }
  }

  struct Unreachable: Error {}

  static func json(_ value: JSONValue, status: Int = 200) -> OutboundResponse {
    OutboundResponse(status: status, body: value.jsonBytes)
  }

  static let tokens = json(["access_token": "at-1", "refresh_token": "rt-1", "token_type": "Bearer"])

  let key: ECP256SigningKey
  let pem: String

  init() throws {
    pem = try AppleSignInTests.p8PEM()
    key = try ECP256SigningKey(pkcs8PEM: pem)
  }

  func config(_ clientIDs: [String] = ["com.example.app"]) -> IdpConfig {
    IdpConfig(
      providerId: "apple.com", enabled: true, apiBaseUrl: "https://apple.test", clientIds: clientIDs,
      teamId: "TEAM1", keyId: "KEY1", privateKey: pem)
  }

  @Test func exchangesTheCodeThenRevokesTheRefreshTokenWithASignedClientSecret() async throws {
    let apple = FakeApple { url, _, _ in url.hasSuffix("/auth/token") ? Self.tokens : Self.json([:]) }
    let outcome = try await AppleRevocation(config: config(), outbound: apple, backoffMs: [0, 0])
      .revoke(authorizationCode: "code-1", nowSeconds: 1_800_000_000, .internalWork(.standalone))
    #expect(outcome.clientID == "com.example.app" && outcome.attempts == 2)
    let seen = apple.seen.withLock { $0 }
    #expect(seen.map(\.url) == ["https://apple.test/auth/token", "https://apple.test/auth/revoke"])
    #expect(seen[0].form["code"] == "code-1" && seen[0].form["grant_type"] == "authorization_code")
    #expect(seen[1].form["token"] == "rt-1" && seen[1].form["token_type_hint"] == "refresh_token")
    // The client secret: ES256 under the team's key, as Apple documents it.
    let secret = try #require(seen[0].form["client_secret"])
    let jwt = try JWT.decode(secret)
    #expect(jwt.algorithm == "ES256" && jwt.keyID == "KEY1" && jwt.verify(with: key.publicKey))
    #expect(jwt.claims["iss"] == "TEAM1" && jwt.claims["sub"] == "com.example.app")
    #expect(jwt.claims["aud"] == "https://appleid.apple.com")
    #expect(jwt.claims["iat"] == .int(1_800_000_000) && jwt.claims["exp"] == .int(1_800_000_300))
  }

  @Test func triesAgainWhenAppleStumblesButNotWhenItRefuses() async throws {
    // No answer, then a 503: the third try goes through.
    let flaky = FakeApple { url, _, count in
      if count == 1 { throw Unreachable() }
      if count == 2 { return Self.json(["error": "temporarily_unavailable"], status: 503) }
      return url.hasSuffix("/auth/token") ? Self.tokens : Self.json([:])
    }
    let outcome = try await AppleRevocation(config: config(), outbound: flaky, backoffMs: [0, 0])
      .revoke(authorizationCode: "c", nowSeconds: 1, .internalWork(.standalone))
    #expect(outcome.attempts == 4)
    // Always down: three tries, then INVALID_IDP_RESPONSE.
    let down = FakeApple { _, _, _ in Self.json([:], status: 502) }
    await expectLinkError(.invalidIdpResponse) {
      try await AppleRevocation(config: config(), outbound: down, backoffMs: [0, 0])
        .revoke(authorizationCode: "c", nowSeconds: 1, .internalWork(.standalone))
    }
    #expect(down.seen.withLock { $0.count } == 3)
    // A refusal is not retried; a code of the second client id is tried with it.
    let perClient = FakeApple { url, form, _ in
      guard form["client_id"] == "com.example.web" else {
        return Self.json(["error": "invalid_grant"], status: 400)
      }
      return url.hasSuffix("/auth/token") ? Self.tokens : Self.json([:])
    }
    let web = try await AppleRevocation(
      config: config(["com.example.app", "com.example.web"]), outbound: perClient, backoffMs: [0, 0]
    ).revoke(authorizationCode: "c", nowSeconds: 1, .internalWork(.standalone))
    #expect(web.clientID == "com.example.web" && web.attempts == 3)
    let refused = await expectLinkError(.invalidIdpResponse) {
      try await AppleRevocation(config: config(), outbound: perClient, backoffMs: [0, 0])
        .revoke(authorizationCode: "c", nowSeconds: 1, .internalWork(.standalone))
    }
    #expect(refused?.message.contains("invalid_grant") == true)
  }

  @Test func withoutTheKeyNothingIsSent() async throws {
    let apple = FakeApple { _, _, _ in Self.tokens }
    var bare = config()
    bare.privateKey = ""
    await expectLinkError(.operationNotAllowed) {
      try await AppleRevocation(config: bare, outbound: apple).revoke(
        authorizationCode: "c", nowSeconds: 1, .internalWork(.standalone))
    }
    #expect(apple.seen.withLock { $0.isEmpty })
  }

  @Test func aP8KeyIsReadAndOtherPEMIsNot() throws {
    #expect(throws: CryptoError.self) {
      try ECP256SigningKey(pkcs8PEM: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----")
    }
    #expect(throws: CryptoError.self) {
      try ECP256SigningKey(pkcs8PEM: pem.replacingOccurrences(of: "PRIVATE KEY", with: "PUBLIC KEY"))
    }
    #expect(throws: CryptoError.self) { try ECP256SigningKey(pkcs8PEM: "") }
    // CRLF line ends, as a file edited on Windows has them.
    let crlf = try ECP256SigningKey(pkcs8PEM: pem.replacingOccurrences(of: "\n", with: "\r\n"))
    #expect(crlf.jwk(kid: "k") == key.jwk(kid: "k"))
    // Apple's keys are P-256: a P-384 key is refused.
    #expect(throws: CryptoError.self) {
      try ECP256SigningKey(pkcs8PEM: try AppleSignInTests.p8PEM(curve: "P-384"))
    }
  }
}

/// `RevokeToken` through the service: the request's checks, and Apple's refusals counted
/// by the per-IP identity-provider throttle.
@Suite struct RevokeTokenServiceTests {
  @Test func refusesWhatItCannotRevokeAndThrottlesRefusedCodes() async throws {
    try await AppleSignInTests.withApple { h, apple in
      let key = try AppleSignInTests.p8PEM()
      try await h.updateConfig(
        {
          $0.idps = [
            IdpConfig(
              providerId: "apple.com", enabled: true, jwksJson: apple.jwksJSON,
              apiBaseUrl: "https://apple.test",
              clientIds: [AppleSignInTests.bundleID], teamId: "TEAM1", keyId: "KEY1", privateKey: key)
          ]
        }, mask: ["idps"])
      // Apple refuses every code.
      h.outbound.route("https://apple.test/") { _ in
        OutboundResponse(status: 400, body: Array(#"{"error":"invalid_grant"}"#.utf8))
      }
      let user = try await h.anonymous()
      func revoke(_ provider: String = "apple.com", type: Int32 = 3, token: String = "code")
        async throws(RPCError) -> RevokeTokenResponse
      {
        try await h.accounts.revokeToken(
          RevokeTokenRequest(idToken: user.idToken, providerId: provider, tokenType: type, token: token),
          context: h.context("RevokeToken"))
      }
      await expectLinkError(.invalidArgument) { try await revoke("google.com") }
      await expectLinkError(.invalidArgument) { try await revoke(type: 1) }
      await expectLinkError(.invalidArgument) { try await revoke(token: "") }
      // Refused codes count as failed attempts of the caller's IP.
      for _ in 0..<30 { await expectLinkError(.invalidIdpResponse) { try await revoke() } }
      await expectLinkError(.tooManyAttempts) { try await revoke() }
    }
  }
}
