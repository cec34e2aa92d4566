import AnonAuthService
import AnonAuthWire
import Testing

/// Extreme numbers in admin requests: refused with INVALID_ARGUMENT or INVALID_CONFIG,
/// never an arithmetic trap that would take the daemon down.
@Suite("Request numbers at their extremes")
struct RequestNumberBoundsTests {
  func schedule(_ h: ServiceHarness, start: Int64, duration: Int64, quota: UInt32 = 5) async throws(RPCError)
  {
    _ = try await h.admin.scheduleSignUpQuota(
      ScheduleSignUpQuotaRequest(
        projectId: h.projectID, quota: quota, startTimeMs: start, durationSeconds: duration),
      context: h.adminContext("ScheduleSignUpQuota"))
  }

  static let badSchedules: [(start: Int64, duration: Int64)] = [
    (Int64.max, Int64.max), (Int64.max, 1), (Int64.max, 366 * 86_400), (Int64.max - 1000, 1),
    (253_402_300_800_000, 1), (Int64.min, 1), (-1, 1), (1, Int64.max), (1, Int64.min), (1, 0), (1, -1),
    (0, Int64.max), (0, Int64.min),
  ]

  @Test(
    "ScheduleSignUpQuota with extreme start_time_ms and duration_seconds is refused", arguments: badSchedules)
  func scheduleExtremes(bad: (start: Int64, duration: Int64)) async throws {
    try await ServiceHarness.with { h in
      _ = await expectRPCError(.invalidArgument) { () async throws(RPCError) in
        try await schedule(h, start: bad.start, duration: bad.duration)
      }
    }
  }

  @Test("the latest start accepted, with the longest duration, is scheduled")
  func latestStart() async throws {
    try await ServiceHarness.with { h in
      try await schedule(h, start: 253_402_300_799_999, duration: 366 * 86_400)
    }
  }

  @Test(
    "UpdateProjectConfig with UInt32.max ttl, quota and minimum length is refused",
    arguments: ["sign_up_quota_per_hour", "id_token_ttl_seconds", "password_min_length"])
  func configExtremes(field: String) async throws {
    try await ServiceHarness.with { h in
      var config = ProjectConfig()
      config.projectId = h.projectID
      config.signUpQuotaPerHour = .max
      config.idTokenTtlSeconds = .max
      config.passwordMinLength = .max
      _ = await expectRPCError(.invalidConfig) { () async throws(RPCError) in
        try await h.admin.updateProjectConfig(
          UpdateProjectConfigRequest(config: config, updateMask: [field]),
          context: h.adminContext("UpdateProjectConfig"))
      }
    }
  }

  @Test("ListAccounts with page_size UInt32.max is refused; RunCleanup with max_accounts UInt32.max runs")
  func listAndCleanupExtremes() async throws {
    try await ServiceHarness.with { h in
      await expectRPCError(.invalidArgument) { () async throws(RPCError) in
        try await h.admin.listAccounts(
          ListAccountsRequest(projectId: h.projectID, pageSize: .max), context: h.adminContext("ListAccounts")
        )
      }
      _ = try await h.signUp(peerIP: "192.0.2.9")
      let response = try await h.admin.runCleanup(
        RunCleanupRequest(projectId: h.projectID, maxAccounts: .max), context: h.adminContext("RunCleanup"))
      #expect(response.deleted == 0)
    }
  }
}
