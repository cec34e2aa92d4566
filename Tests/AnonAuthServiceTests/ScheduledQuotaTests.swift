import AnonAuthService
import AnonAuthWire
import Testing

@Suite("Scheduled sign-up quota")
struct ScheduledQuotaTests {
  /// Signs up from `peer` until refused; returns how many got in (at most `limit`).
  func admitted(_ h: ServiceHarness, peer: String, limit: Int = 10) async throws -> Int {
    for count in 0..<limit {
      do {
        _ = try await h.signUp(peerIP: peer)
      } catch {
        #expect(error.reason == Reason.tooManyAttempts.name)
        return count
      }
    }
    return limit
  }

  @Test("a scheduled quota replaces the project's from its start for its duration")
  func window() async throws {
    try await ServiceHarness.with { h in
      try await h.setSignUpQuota(4)
      let start = h.clock.nowMs() + 10 * 60_000
      _ = try await h.admin.scheduleSignUpQuota(
        ScheduleSignUpQuotaRequest(
          projectId: h.projectID, quota: 2, startTimeMs: start, durationSeconds: 3600),
        context: h.adminContext("ScheduleSignUpQuota"))

      // Before the start, the project's quota applies.
      #expect(try await admitted(h, peer: "192.0.2.1") == 4)
      h.clock.advance(ms: start - 1 - h.clock.nowMs())
      #expect(try await admitted(h, peer: "192.0.2.2") == 4)

      // From the start, 2; the third in the window is refused.
      h.clock.advance(ms: 1)
      _ = try await h.signUp(peerIP: "192.0.2.3")
      _ = try await h.signUp(peerIP: "192.0.2.3")
      await expectRPCError(.tooManyAttempts) { () async throws(RPCError) in
        try await h.signUp(peerIP: "192.0.2.3")
      }
      // It counts against addresses that signed up before it started too.
      await expectRPCError(.tooManyAttempts) { () async throws(RPCError) in
        try await h.signUp(peerIP: "192.0.2.2")
      }
      h.clock.advance(seconds: 3599)
      #expect(try await admitted(h, peer: "192.0.2.4") == 2)

      // After the end, the project's quota again.
      h.clock.advance(seconds: 1)
      #expect(try await admitted(h, peer: "192.0.2.5") == 4)
      #expect(try await h.accountCount() == 4 + 4 + 2 + 2 + 4)
    }
  }

  @Test("retry_after_seconds waits for enough sign-ups to age out when a lower quota applies")
  func retryAfterUnderALowerQuota() async throws {
    try await ServiceHarness.with { h in
      try await h.setSignUpQuota(5)
      // Five sign-ups ten minutes apart: at t = 0, 10, 20, 30, 40 minutes.
      for i in 0..<5 {
        _ = try await h.signUp(peerIP: "192.0.2.50")
        if i < 4 { h.clock.advance(ms: 10 * 60_000) }
      }
      _ = try await h.admin.scheduleSignUpQuota(
        ScheduleSignUpQuotaRequest(projectId: h.projectID, quota: 2, startTimeMs: 0, durationSeconds: 7200),
        context: h.adminContext("ScheduleSignUpQuota"))
      // With 2 allowed, 4 of the 5 must age out: the one at 30 minutes, 50 minutes from now
      // (the oldest alone would say 20 minutes, and the client would be refused again).
      let refused = await expectRPCError(.tooManyAttempts) { () async throws(RPCError) in
        try await h.signUp(peerIP: "192.0.2.50")
      }
      #expect(refused?.details["retry_after_seconds"] == "3000")
      h.clock.advance(seconds: 3000)
      _ = try await h.signUp(peerIP: "192.0.2.50")
    }
  }
}
