import AnonAuthCrypto
import AnonAuthWire
import Foundation
import Testing

@testable import AnonAuthService

/// Provider keys fetched from a jwks_url: shared between concurrent misses, refused when
/// unreachable or not a JWKS (the caching rules are `KeyURLCachingTests`').
@Suite struct JWKSURLTests {
  static let url = "https://keys.test/jwks"

  let issuer: FakeIssuer
  let clock = ManualClock()
  let outbound = FakeOutbound()

  init() throws {
    issuer = try FakeIssuer(issuer: "https://keys.test", clientID: "c")
  }

  @Test func concurrentMissesShareOneFetch() async throws {
    let slow = FakeOutbound()
    let jwks = issuer.jwksJSON
    slow.route(Self.url) { _ in
      Thread.sleep(forTimeInterval: 0.2)
      return OutboundResponse(status: 200, body: Array(jwks.utf8), freshnessSeconds: 600)
    }
    let config = IdpConfig(
      providerId: "oidc.keys", enabled: true, clientId: "c", issuer: "https://keys.test", jwksUrl: Self.url)
    let shared = OIDCVerifier(config: config, cache: JWKSCache(outbound: slow, clock: clock))
    let token = try issuer.token(sub: "u", now: clock.nowSeconds())
    let now = clock.nowSeconds()
    try await withThrowingTaskGroup(of: Void.self) { group in
      for _ in 0..<10 {
        group.addTask { _ = try await shared.verify(idToken: token, nonce: "", nowSeconds: now) }
      }
      try await group.waitForAll()
    }
    #expect(slow.count(Self.url) == 1)
  }

  @Test func unreachableOrGarbage() async throws {
    let config = IdpConfig(
      providerId: "oidc.keys", enabled: true, clientId: "c", issuer: "https://keys.test",
      jwksUrl: "https://nowhere.test/")
    let cache = JWKSCache(outbound: outbound, clock: clock)
    let token = try issuer.token(sub: "u", now: clock.nowSeconds())
    await expectLinkError(.invalidIdpResponse) {
      try await OIDCVerifier(config: config, cache: cache).verify(
        idToken: token, nonce: "", nowSeconds: clock.nowSeconds())
    }
    outbound.route("https://nowhere.test/") { _ in OutboundResponse(status: 200, body: Array("<html>".utf8)) }
    await expectLinkError(.invalidIdpResponse) {
      try await OIDCVerifier(config: config, cache: cache).verify(
        idToken: token, nonce: "", nowSeconds: clock.nowSeconds())
    }
  }
}
