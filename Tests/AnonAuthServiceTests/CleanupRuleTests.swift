import AnonAuthService
import AnonAuthStore
import AnonAuthWire
import Testing

/// docs/protocol.md §5.5, rule by rule, with the clock moved by hand.
@Suite("Automatic clean-up rules")
struct CleanupRuleTests {
  static let day: Int64 = 86_400_000
  static let thirtyDays: Int64 = 30 * day

  func setCleanup(_ h: ServiceHarness, _ on: Bool) async throws {
    var config = ProjectConfig()
    config.projectId = h.projectID
    config.autoCleanupEnabled = on
    try await h.updateConfig(config, mask: ["auto_cleanup_enabled"])
  }

  func preview(_ h: ServiceHarness) async throws -> PreviewCleanupResponse {
    try await h.admin.previewCleanup(
      PreviewCleanupRequest(projectId: h.projectID), context: h.adminContext("PreviewCleanup"))
  }

  @Test("off by default: nothing is scheduled and nothing is deleted, however old")
  func offByDefault() async throws {
    try await ServiceHarness.with { h in
      let user = try await h.signUp()
      #expect(try await h.account(user.localId)?.scheduledDeletionAtMs == 0)
      #expect(try h.config().autoCleanupEnabled == false)
      h.clock.advance(ms: 365 * Self.day)
      #expect(try await h.cleanup.runPass(projectID: nil, trigger: "test") == 0)
      #expect(try await h.account(user.localId) != nil)
      #expect(try await preview(h).scheduledTotal == 0)
    }
  }

  @Test("on: existing accounts at enabled_at + 30 days, new ones at created_at + 30 days")
  func scheduling() async throws {
    try await ServiceHarness.with { h in
      let old = try await h.signUp()
      let oldCreated = try #require(try await h.account(old.localId)).createdAtMs
      h.clock.advance(ms: 5 * Self.day)
      let enabledAt = h.clock.nowMs()
      try await setCleanup(h, true)
      #expect(try h.config().autoCleanupEnabledAtMs == enabledAt)
      #expect(try await h.account(old.localId)?.scheduledDeletionAtMs == enabledAt + Self.thirtyDays)
      #expect(enabledAt + Self.thirtyDays > oldCreated + Self.thirtyDays)

      h.clock.advance(ms: Self.day)
      let fresh = try await h.signUp()
      let created = try #require(try await h.account(fresh.localId)).createdAtMs
      #expect(try await h.account(fresh.localId)?.scheduledDeletionAtMs == created + Self.thirtyDays)
      #expect(fresh.account?.scheduledDeletionAtMs == created + Self.thirtyDays)

      let counts = try await preview(h)
      #expect(counts.scheduledTotal == 2)
      #expect(counts.eligibleNow == 0)
      #expect(counts.scheduledNext30Days == 2)
    }
  }

  @Test("only due anonymous accounts are deleted, with their refresh tokens")
  func deletesOnlyDue() async throws {
    try await ServiceHarness.with { h in
      try await setCleanup(h, true)
      let first = try await h.signUp()
      h.clock.advance(ms: 10 * Self.day)
      let second = try await h.signUp()
      h.clock.advance(ms: 20 * Self.day + 1)  // first is due, second has 10 days left
      #expect(try await preview(h).eligibleNow == 1)
      #expect(try await h.cleanup.runPass(projectID: nil, trigger: "test") == 1)
      #expect(try await h.account(first.localId) == nil)
      #expect(try await h.account(second.localId) != nil)
      await expectRPCError(.invalidRefreshToken) { () async throws(RPCError) in
        try await h.refresh(first.refreshToken)
      }
      _ = try await h.refresh(second.refreshToken)
    }
  }

  @Test("permanent accounts are never deleted, even with a schedule in the row")
  func permanentNeverDeleted() async throws {
    try await ServiceHarness.with { h in
      try await setCleanup(h, true)
      let user = try await h.signUp()
      try await h.updateAccount(user.localId) { $0.isAnonymous = false }
      h.clock.advance(ms: 400 * Self.day)
      #expect(try await h.cleanup.runPass(projectID: nil, trigger: "test") == 0)
      #expect(try await h.account(user.localId) != nil)
    }
  }

  @Test("off: nothing new is scheduled, scheduled deletions are kept and carried out")
  func offKeepsSchedule() async throws {
    try await ServiceHarness.with { h in
      try await setCleanup(h, true)
      let scheduled = try await h.signUp()
      try await setCleanup(h, false)
      let unscheduled = try await h.signUp()
      #expect(try await h.account(unscheduled.localId)?.scheduledDeletionAtMs == 0)
      #expect(try await h.account(scheduled.localId)?.scheduledDeletionAtMs ?? 0 > 0)
      h.clock.advance(ms: Self.thirtyDays + 1)
      let run = try await h.admin.runCleanup(
        RunCleanupRequest(projectId: h.projectID), context: h.adminContext("RunCleanup"))
      #expect(run.deleted == 1)
      #expect(try await h.account(scheduled.localId) == nil)
      #expect(try await h.account(unscheduled.localId) != nil)
    }
  }

  @Test("turning it on again schedules from the new enabled_at and keeps earlier schedules")
  func reEnable() async throws {
    try await ServiceHarness.with { h in
      try await setCleanup(h, true)
      let early = try await h.signUp()
      let earlySchedule = try #require(try await h.account(early.localId)).scheduledDeletionAtMs
      try await setCleanup(h, false)
      let between = try await h.signUp()
      h.clock.advance(ms: 3 * Self.day)
      try await setCleanup(h, true)
      let enabledAt = h.clock.nowMs()
      #expect(try await h.account(early.localId)?.scheduledDeletionAtMs == earlySchedule)
      #expect(try await h.account(between.localId)?.scheduledDeletionAtMs == enabledAt + Self.thirtyDays)
    }
  }

  @Test("deletes in batches until none is due, and counts them")
  func batches() async throws {
    try await ServiceHarness.with { h in
      try await setCleanup(h, true)
      try await h.setSignUpQuota(1000)
      for _ in 0..<20 { _ = try await h.signUp() }
      h.clock.advance(ms: Self.thirtyDays + 1)
      // The harness's worker deletes 7 per batch: 3 batches.
      #expect(try await h.cleanup.runPass(projectID: h.projectID, trigger: "test") == 20)
      #expect(try await h.accountCount() == 0)
      let usage = try await h.admin.getUsage(
        GetUsageRequest(projectId: h.projectID), context: h.adminContext("GetUsage"))
      #expect(usage.cleanedUpTotal == 20)
    }
  }

  @Test("max_accounts stops a pass early so callers can show progress")
  func maxAccounts() async throws {
    try await ServiceHarness.with { h in
      try await setCleanup(h, true)
      try await h.setSignUpQuota(1000)
      for _ in 0..<10 { _ = try await h.signUp() }
      h.clock.advance(ms: Self.thirtyDays + 1)
      var request = RunCleanupRequest()
      request.maxAccounts = 4
      let first = try await h.admin.runCleanup(request, context: h.adminContext("RunCleanup"))
      #expect(first.deleted == 4)
      #expect(try await h.accountCount() == 6)
    }
  }

  @Test("the schedule survives a restart")
  func survivesRestart() async throws {
    try await ServiceHarness.with { h in
      try await setCleanup(h, true)
      let user = try await h.signUp()
      let next = try await h.restarted()
      next.clock.advance(ms: Self.thirtyDays + 1)
      #expect(try await next.cleanup.runPass(projectID: nil, trigger: "test") == 1)
      #expect(try await next.account(user.localId) == nil)
    }
  }
}

@Suite("Clean-up also bounds the sign-up quota's table")
struct QuotaEventPruneTests {
  @Test("events of IPs that never come back are gone after the window, the quota still holds")
  func pruned() async throws {
    try await ServiceHarness.with { h in
      try await h.setSignUpQuota(1)
      for i in 1...12 { _ = try await h.signUp(peerIP: "198.51.100.\(i)") }
      #expect(try await h.countedIPKeys().count == 12)
      h.clock.advance(ms: 30 * 60_000)
      _ = try await h.signUp(peerIP: "198.51.100.200")
      await expectRPCError(.tooManyAttempts) { () async throws(RPCError) in
        try await h.signUp(peerIP: "198.51.100.200")
      }
      h.clock.advance(ms: 30 * 60_000 + 1)
      _ = try await h.cleanup.runPass(projectID: nil, trigger: "test")
      // The twelve are an hour old and gone; the one from half an hour ago still counts.
      #expect(try await h.countedIPKeys() == ["198.51.100.200"])
      await expectRPCError(.tooManyAttempts) { () async throws(RPCError) in
        try await h.signUp(peerIP: "198.51.100.200")
      }
    }
  }
}

@Suite("Clean-up forgets the sealed successors")
struct RotatedTokenPruneTests {
  func rows(_ h: ServiceHarness) async throws -> (total: Int64, sealed: Int64) {
    try await h.store.read { db in
      let row = try db.queryOne("SELECT count(*), count(successor_sealed) FROM refresh_sessions")
      return (try row?.int64(0) ?? -1, try row?.int64(1) ?? -1)
    }
  }

  @Test(
    "a session is one row however often it refreshed; its sealed successor goes a minute after the grace window"
  )
  func pruned() async throws {
    try await ServiceHarness.with { h in
      let user = try await h.signUp()
      var token = try await h.refresh(user.refreshToken).refreshToken
      #expect(try await rows(h) == (1, 1))
      for _ in 0..<20 { token = try await h.refresh(token).refreshToken }
      #expect(try await rows(h) == (1, 1))
      h.clock.advance(seconds: 11)
      _ = try await h.cleanup.runPass(projectID: nil, trigger: "test")
      #expect(try await rows(h) == (1, 1))  // within the margin: kept
      h.clock.advance(seconds: 60)
      _ = try await h.cleanup.runPass(projectID: nil, trigger: "test")
      #expect(try await rows(h) == (1, 0))  // the successor is no longer kept sealed
      // The live token still refreshes; a replay of an old one is still reuse.
      let next = try await h.refresh(token)
      h.clock.advance(seconds: 11)
      await expectRPCError(.invalidRefreshToken) { () async throws(RPCError) in
        try await h.refresh(user.refreshToken)
      }
      await expectRPCError(.invalidRefreshToken) { () async throws(RPCError) in
        try await h.refresh(next.refreshToken)
      }
      #expect(try await rows(h) == (0, 0))
    }
  }
}
