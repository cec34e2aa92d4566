import AnonAuthService
import AnonAuthStore
import AnonAuthWire
import Testing

/// The workers' loops as the daemon's service group runs them: each runs in a task the
/// group owns and ends once that task is cancelled; a clean-up pass under way then stops
/// at its next write job. The time limit only catches a loop that never ends: on a busy
/// machine the whole run of suites takes minutes, and a minute's limit failed there.
@Suite("Workers stop when their task is cancelled", .timeLimit(.minutes(5)))
struct WorkerStopTests {
  /// Mails are never delivered here: the outbox stays empty.
  struct NoMail: MailTransport {
    func deliver(_ mail: OutboxMail, _ admitted: Admitted) async throws(MailDeliveryError) {}
  }

  @Test("the clean-up loop ends at cancellation, its next run announced")
  func cleanupLoopEnds() async throws {
    try await ServiceHarness.with { h in
      let worker = CleanupWorker(environment: h.stack.env, intervalMs: 3_600_000)
      let loop = Task { await worker.run() }
      loop.cancel()
      await loop.value
      #expect(worker.nextRunAtMs >= h.clock.nowMs())
    }
  }

  @Test("the mail loop ends at cancellation while it waits for mail")
  func mailLoopEnds() async throws {
    try await ServiceHarness.with { h in
      let worker = MailWorker(
        store: h.store, transport: NoMail(), clock: h.clock, logger: .silent, metrics: ServiceMetrics(),
        masterKey: Array(repeating: 7, count: 32))
      let loop = Task { await worker.run() }
      // Let it reach its wait for mail (30 s without mail due): only cancellation ends it.
      for _ in 0..<50 { await Task.yield() }
      loop.cancel()
      await loop.value
    }
  }

  @Test("a pass in a cancelled task stops at its next write job, deleting nothing more")
  func cancelledPassStopsAtItsNextJob() async throws {
    try await ServiceHarness.with { h in
      var config = ProjectConfig()
      config.projectId = h.projectID
      config.autoCleanupEnabled = true
      try await h.updateConfig(config, mask: ["auto_cleanup_enabled"])
      for _ in 0..<20 { _ = try await h.signUp() }
      h.clock.advance(ms: 31 * 86_400_000)
      let worker = h.cleanup
      let stopped = Task { () async throws -> Int in
        withUnsafeCurrentTask { $0?.cancel() }  // the group stopped the worker
        return try await worker.runPass(projectID: nil, trigger: "schedule")
      }
      await #expect(throws: RPCError.self) { try await stopped.value }
      #expect(try await worker.runPass(projectID: nil, trigger: "test") == 20)
    }
  }
}
