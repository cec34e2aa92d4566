import AnonAuthService
import AnonAuthWire
import Foundation
import Synchronization
import Testing

/// Identity-provider sign-ins cannot starve each other or be used to flood a provider:
/// each provider (host) has its own concurrency bound, refused tokens are remembered
/// briefly, and failures are throttled per IP.
@Suite struct ProviderIsolationTests {
  /// Facebook calls stuck at the Graph API fill only Facebook's share: past its bound and
  /// its waiting queue calls are refused at once, and a sign-in whose keys come from
  /// another host still gets its fetch.
  @Test func facebookFloodSaturatesOnlyFacebook() async throws {
    let gate = AsyncGate()
    try await LinkingHarness.with { h in
      h.outbound.hold(FakeGraphAPI.base, until: gate)
      defer { gate.open() }
      let outcomes = Outcomes()
      let flood = 40
      let tasks = (0..<flood).map { i in
        Task {
          let reason: String
          do {
            _ = try await h.signIn(LinkingHarness.facebook("junk-\(i)"), ip: "192.0.2.\(i + 1)")
            reason = "OK"
          } catch {
            reason = (error as? RPCError)?.reason ?? "\(error)"
          }
          outcomes.add(reason)
        }
      }
      // 4 run, 32 wait, the rest are refused at once.
      try await waitUntil(seconds: 120) { outcomes.all.count == flood - 36 }
      #expect(outcomes.all.allSatisfy { $0 == Reason.tooManyAttempts.name })
      #expect(gate.entered == 4)
      #expect(h.env.metrics.providerBusyRefusals.load(ordering: .relaxed) == 4)
      let answered = await answersPromptly {
        let credential = LinkingHarness.idToken(
          "oidc.remote", (try? h.remote.token(sub: "r-1", now: h.nowSeconds)) ?? "")
        return (try? await h.signIn(credential, ip: "198.51.100.200")) != nil
      }
      #expect(answered, "a jwks_url sign-in waited behind Facebook's calls")
      gate.open()
      for task in tasks { await task.value }
      let all = outcomes.all
      #expect(all.count == flood)
      #expect(all.filter { $0 == Reason.invalidIdpResponse.name }.count == 36)
    }
  }

  @Test func aRefusedFacebookTokenIsAnsweredFromTheNegativeCache() async throws {
    try await LinkingHarness.with { h in
      await expectLinkError(.invalidIdpResponse) { try await h.signIn(LinkingHarness.facebook("junk")) }
      let calls = h.outbound.count(FakeGraphAPI.base)
      #expect(calls >= 1)
      for _ in 0..<3 {
        await expectLinkError(.invalidIdpResponse) { try await h.signIn(LinkingHarness.facebook("junk")) }
      }
      #expect(h.outbound.count(FakeGraphAPI.base) == calls)
      // Another token is asked about.
      await expectLinkError(.invalidIdpResponse) { try await h.signIn(LinkingHarness.facebook("junk-2")) }
      #expect(h.outbound.count(FakeGraphAPI.base) > calls)
      // After a minute the refusal is forgotten.
      let later = h.outbound.count(FakeGraphAPI.base)
      h.clock.advance(seconds: 61)
      await expectLinkError(.invalidIdpResponse) { try await h.signIn(LinkingHarness.facebook("junk")) }
      #expect(h.outbound.count(FakeGraphAPI.base) > later)
    }
  }

  @Test func failedProviderSignInsAreThrottledPerIP() async throws {
    try await LinkingHarness.with { h in
      for i in 0..<30 {
        await expectLinkError(.invalidIdpResponse) {
          try await h.signIn(LinkingHarness.idToken("google.com", "junk-\(i)"), ip: "203.0.113.5")
        }
      }
      let refused = await expectLinkError(.tooManyAttempts) {
        try await h.signIn(try h.googleCredential(sub: "g-1"), ip: "203.0.113.5")
      }
      #expect(refused?.details["retry_after_seconds"] == "600")
      let anonymous = try await h.anonymous(ip: "203.0.113.5")
      await expectLinkError(.tooManyAttempts) {
        try await h.accounts.linkWithCredential(
          LinkWithCredentialRequest(
            idToken: anonymous.idToken, credential: try h.googleCredential(sub: "g-2")),
          context: h.context("LinkWithCredential", ip: "203.0.113.5"))
      }
      #expect(h.env.metrics.idpThrottled.load(ordering: .relaxed) == 2)
      // Another address is not affected.
      _ = try await h.signIn(try h.googleCredential(sub: "g-1"), ip: "203.0.113.6")
    }
  }
}

extension ProviderIsolationTests {
  /// Only a judged token counts against the per-IP identity-provider throttle: calls to
  /// a provider that is off for the project never reach a verdict.
  @Test func callsToADisabledProviderAreNotCountedAsFailures() async throws {
    try await LinkingHarness.with { h in
      for i in 0..<40 {
        await expectLinkError(.operationNotAllowed) {
          try await h.signIn(LinkingHarness.idToken("oidc.off", "off-\(i)"), ip: "203.0.113.9")
        }
      }
      #expect(h.env.metrics.idpThrottled.load(ordering: .relaxed) == 0)
      _ = try await h.signIn(try h.googleCredential(sub: "g-9"), ip: "203.0.113.9")
    }
  }
}

/// What concurrent calls answered.
final class Outcomes: Sendable {
  private let list = Mutex<[String]>([])
  var all: [String] { list.withLock { $0 } }
  func add(_ reason: String) { list.withLock { $0.append(reason) } }
}

extension ProviderIsolationTests {
  /// A call cancelled while it waits for its provider leaves the queue at once, so its
  /// place can be taken.
  @Test func aCancelledWaiterLeavesTheQueue() async throws {
    let gate = AsyncGate()
    let fake = FakeOutbound()
    fake.route("https://slow.test/") { _ in OutboundResponse(status: 200, body: []) }
    fake.hold("https://slow.test/", until: gate)
    let outbound = GatedOutbound(fake, maxConcurrent: 1, maxWaiting: 1)
    defer { gate.open() }
    let running = Task { try await outbound.get("https://slow.test/a") }
    try await waitUntil { gate.entered == 1 }
    let left = RanFlag()
    let waiting = Task {
      defer { left.set() }
      return try await outbound.get("https://slow.test/b")
    }
    try await Task.sleep(for: .milliseconds(200))  // b takes the one waiting place
    await #expect(throws: RPCError.self) { try await outbound.get("https://slow.test/c") }
    waiting.cancel()
    try await waitUntil { left.isSet }
    // The queue has a place again: d waits instead of being refused.
    let next = Task { try await outbound.get("https://slow.test/d") }
    try await Task.sleep(for: .milliseconds(200))
    gate.open()
    let ended = try? await waiting.value
    #expect(ended == nil)
    #expect(try await running.value.status == 200)
    #expect(try await next.value.status == 200)
  }
}
