import AnonAuthCrypto
import AnonAuthWire
import Foundation
import Synchronization
import Testing

@testable import AnonAuthService

/// Provider keys fetched from a jwks_url: cached per Cache-Control, refetched on an
/// unknown kid, shared between concurrent misses, kept for a while when the provider fails.
@Suite struct JWKSURLTests {
  static let url = "https://keys.test/jwks"

  let issuer: FakeIssuer
  let clock = ManualClock()
  let outbound = FakeOutbound()
  let verifier: OIDCVerifier
  let knobs = Knobs()

  /// What the fake key server answers, changed by the tests.
  final class Knobs: Sendable {
    let freshness = Mutex<Int?>(600)
    let failing = Atomic<Bool>(false)
  }

  init() throws {
    issuer = try FakeIssuer(issuer: "https://keys.test", clientID: "c")
    let config = IdpConfig(
      providerId: "oidc.keys", enabled: true, clientId: "c", issuer: "https://keys.test", jwksUrl: Self.url)
    verifier = OIDCVerifier(config: config, cache: JWKSCache(outbound: outbound, clock: clock))
    let jwks = issuer.jwksJSON
    outbound.route(Self.url) { [knobs] _ in
      if knobs.failing.load(ordering: .relaxed) { return OutboundResponse(status: 503, body: []) }
      return OutboundResponse(
        status: 200, body: Array(jwks.utf8), freshnessSeconds: knobs.freshness.withLock { $0 })
    }
  }

  func verify(kid: String? = nil) async throws(RPCError) {
    let now = clock.nowSeconds()
    let token: String
    do {
      token = try issuer.sign(issuer.claims(sub: "u", now: now), kid: kid)
    } catch {
      throw RPCError(.internalError, "signing failed")
    }
    _ = try await verifier.verify(idToken: token, nonce: "", nowSeconds: now)
  }

  @Test func cachedForMaxAge() async throws {
    try await verify()
    try await verify()
    #expect(outbound.count(Self.url) == 1)
    clock.advance(seconds: 599)
    try await verify()
    #expect(outbound.count(Self.url) == 1)
    clock.advance(seconds: 2)
    try await verify()
    #expect(outbound.count(Self.url) == 2)
  }

  @Test func withoutMaxAgeFiveMinutesAndNoStoreStillThirtySeconds() async throws {
    knobs.freshness.withLock { $0 = nil }
    try await verify()
    clock.advance(seconds: 299)
    try await verify()
    #expect(outbound.count(Self.url) == 1)
    clock.advance(seconds: 2)
    knobs.freshness.withLock { $0 = 0 }
    try await verify()
    try await verify()
    #expect(outbound.count(Self.url) == 2)
    clock.advance(seconds: 31)
    try await verify()
    #expect(outbound.count(Self.url) == 3)
  }

  @Test func unknownKidRefetchesAtMostEveryThirtySeconds() async throws {
    try await verify()
    await expectLinkError(.invalidIdpResponse) { try await verify(kid: "rotated") }
    // Within 30 s of the last fetch an unknown kid does not fetch again.
    #expect(outbound.count(Self.url) == 1)
    clock.advance(seconds: 31)
    await expectLinkError(.invalidIdpResponse) { try await verify(kid: "rotated") }
    #expect(outbound.count(Self.url) == 2)
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

  @Test func providerFailures() async throws {
    knobs.failing.store(true, ordering: .relaxed)
    await expectLinkError(.invalidIdpResponse) { try await verify() }
    knobs.failing.store(false, ordering: .relaxed)
    try await verify()
    // Expired keys are still used for up to an hour while the provider fails.
    knobs.failing.store(true, ordering: .relaxed)
    clock.advance(seconds: 601 + 3000)
    try await verify()
    clock.advance(seconds: 700)
    await expectLinkError(.invalidIdpResponse) { try await verify() }
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
