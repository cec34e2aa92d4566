import AnonAuthCrypto
import AnonAuthStore
import AnonAuthWire
import Foundation
import Synchronization
import Testing

@testable import AnonAuthService

/// What a fake key server answers, changed by the tests: the `max-age` it sends (nil:
/// none) and whether it fails with 503.
final class KeyServerKnobs: Sendable {
  let freshness = Mutex<Int?>(600)
  let failing = Atomic<Bool>(false)

  /// Serves `body` at `url` on `outbound` as these knobs say.
  func serve(_ body: String, at url: String, on outbound: FakeOutbound) {
    outbound.route(url) { [self] _ in
      if failing.load(ordering: .relaxed) { return OutboundResponse(status: 503, body: []) }
      return OutboundResponse(
        status: 200, body: Array(body.utf8), freshnessSeconds: freshness.withLock { $0 })
    }
  }
}

/// The caching rules every key set fetched from a URL obeys, an OIDC provider's
/// `jwks_url` and Firebase's certificate map alike: cached per Cache-Control, refetched
/// on an unknown kid at most every 30 s, kept for a while when the server fails.
@Suite struct KeyURLCachingTests {
  /// The two kinds of key URL, each behind its own verifier.
  enum Source: String, CaseIterable, Sendable {
    case oidcJWKS, firebaseCertificates
  }

  /// A verifier of `source` whose keys come from a fake server at `url`.
  struct Fixture {
    let clock = ManualClock()
    let outbound = FakeOutbound()
    let knobs = KeyServerKnobs()
    let url: String
    /// Verifies a fresh token signed with `kid` (nil: the key the server publishes).
    let verify: (_ kid: String?) async throws -> Void

    init(_ source: Source) throws {
      let clock = clock
      switch source {
      case .oidcJWKS:
        url = "https://keys.test/jwks"
        let issuer = try FakeIssuer(issuer: "https://keys.test", clientID: "c")
        let config = IdpConfig(
          providerId: "oidc.keys", enabled: true, clientId: "c", issuer: "https://keys.test", jwksUrl: url)
        let verifier = OIDCVerifier(config: config, cache: JWKSCache(outbound: outbound, clock: clock))
        knobs.serve(issuer.jwksJSON, at: url, on: outbound)
        verify = { kid in
          let now = clock.nowSeconds()
          let token = try issuer.sign(issuer.claims(sub: "u", now: now), kid: kid)
          _ = try await verifier.verify(idToken: token, nonce: "", nowSeconds: now)
        }
      case .firebaseCertificates:
        url = "https://certs.test/x509/securetoken"
        let firebase = try FakeFirebase()
        let verifier = FirebaseTokenVerifier(
          project: FirebaseCertificateURLTests.project(url: url),
          cache: JWKSCache(outbound: outbound, clock: clock))
        knobs.serve(firebase.certsJSON, at: url, on: outbound)
        verify = { kid in
          let now = clock.nowSeconds()
          let token = try firebase.sign(firebase.claims(uid: "u", now: now), kid: kid ?? FakeFirebase.kid)
          _ = try await verifier.verify(idToken: token, nowSeconds: now)
        }
      }
    }

    var fetches: Int { outbound.count(url) }
  }

  @Test(arguments: Source.allCases) func cachedForMaxAge(_ source: Source) async throws {
    let f = try Fixture(source)
    try await f.verify(nil)
    try await f.verify(nil)
    #expect(f.fetches == 1)
    f.clock.advance(seconds: 599)
    try await f.verify(nil)
    #expect(f.fetches == 1)
    f.clock.advance(seconds: 2)
    try await f.verify(nil)
    #expect(f.fetches == 2)
  }

  @Test(arguments: Source.allCases)
  func withoutMaxAgeFiveMinutesAndNoStoreStillThirtySeconds(_ source: Source) async throws {
    let f = try Fixture(source)
    f.knobs.freshness.withLock { $0 = nil }
    try await f.verify(nil)
    f.clock.advance(seconds: 299)
    try await f.verify(nil)
    #expect(f.fetches == 1)
    f.clock.advance(seconds: 2)
    f.knobs.freshness.withLock { $0 = 0 }
    try await f.verify(nil)
    try await f.verify(nil)
    #expect(f.fetches == 2)
    f.clock.advance(seconds: 31)
    try await f.verify(nil)
    #expect(f.fetches == 3)
  }

  @Test(arguments: Source.allCases)
  func unknownKidRefetchesAtMostEveryThirtySeconds(_ source: Source) async throws {
    let f = try Fixture(source)
    try await f.verify(nil)
    await expectLinkError(.invalidIdpResponse) { try await f.verify("rotated") }
    // Within 30 s of the last fetch an unknown kid does not fetch again.
    #expect(f.fetches == 1)
    f.clock.advance(seconds: 31)
    await expectLinkError(.invalidIdpResponse) { try await f.verify("rotated") }
    #expect(f.fetches == 2)
  }

  @Test(arguments: Source.allCases) func failuresAndStaleIfError(_ source: Source) async throws {
    let f = try Fixture(source)
    f.knobs.failing.store(true, ordering: .relaxed)
    await expectLinkError(.invalidIdpResponse) { try await f.verify(nil) }
    f.knobs.failing.store(false, ordering: .relaxed)
    try await f.verify(nil)
    // Expired keys are still used for up to an hour while the server fails.
    f.knobs.failing.store(true, ordering: .relaxed)
    f.clock.advance(seconds: 601 + 3000)
    try await f.verify(nil)
    f.clock.advance(seconds: 700)
    await expectLinkError(.invalidIdpResponse) { try await f.verify(nil) }
  }
}
