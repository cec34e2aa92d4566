import AnonAuthService
import AnonAuthWire
import Testing

/// An UpdateProjectConfig that must be refused with INVALID_CONFIG.
struct BadUpdate: Sendable, CustomTestStringConvertible {
  let name: String
  let mask: [String]
  let change: @Sendable (inout ProjectConfig) -> Void

  var testDescription: String { name }

  static let all: [BadUpdate] = [
    BadUpdate(name: "an unknown field", mask: ["no_such_field"]) { _ in },
    BadUpdate(name: "a camelCase name", mask: ["anonymousEnabled"]) { $0.anonymousEnabled = false },
    BadUpdate(name: "a good field beside a bad one", mask: ["anonymous_enabled", "bogus"]) {
      $0.anonymousEnabled = false
    },
    BadUpdate(name: "the read-only auto_cleanup_enabled_at_ms", mask: ["auto_cleanup_enabled_at_ms"]) {
      $0.autoCleanupEnabledAtMs = 42
    },
    BadUpdate(name: "project_id", mask: ["project_id"]) { _ in },
    BadUpdate(name: "an empty mask", mask: []) { $0.anonymousEnabled = false },
    BadUpdate(name: "id_token_ttl_seconds 10", mask: ["id_token_ttl_seconds"]) { $0.idTokenTtlSeconds = 10 },
    BadUpdate(name: "id_token_ttl_seconds 90000", mask: ["id_token_ttl_seconds"]) {
      $0.idTokenTtlSeconds = 90_000
    },
    BadUpdate(name: "sign_up_quota_per_hour over 1000000", mask: ["sign_up_quota_per_hour"]) {
      $0.signUpQuotaPerHour = 1_000_001
    },
    BadUpdate(name: "password_min_length 5", mask: ["password_min_length"]) { $0.passwordMinLength = 5 },
    BadUpdate(name: "idps: an unknown provider", mask: ["idps"]) {
      $0.idps = [IdpConfig(providerId: "twitter.com", enabled: true, clientId: "x")]
    },
    BadUpdate(name: "idps: oidc. with no name", mask: ["idps"]) {
      $0.idps = [IdpConfig(providerId: "oidc.", enabled: false)]
    },
    BadUpdate(name: "idps: a slash in the name", mask: ["idps"]) {
      $0.idps = [IdpConfig(providerId: "oidc.a/b", enabled: false)]
    },
    BadUpdate(name: "idps: twice the same provider", mask: ["idps"]) {
      $0.idps = [IdpConfig(providerId: "google.com"), IdpConfig(providerId: "google.com")]
    },
    BadUpdate(name: "idps: enabled without client_id", mask: ["idps"]) {
      $0.idps = [IdpConfig(providerId: "google.com", enabled: true)]
    },
    BadUpdate(name: "idps: a plain-http jwks_url", mask: ["idps"]) {
      $0.idps = [IdpConfig(providerId: "oidc.corp", clientId: "c", jwksUrl: "http://corp.example/jwks")]
    },
  ]
}

@Suite("Project administration")
struct ProjectAdminTests {
  @Test("a refused UpdateProjectConfig is INVALID_CONFIG and changes nothing", arguments: BadUpdate.all)
  func invalidConfig(update: BadUpdate) async throws {
    try await ServiceHarness.with { h in
      let before = try h.config()
      var config = before
      update.change(&config)
      await expectRPCError(.invalidConfig) { () async throws(RPCError) in
        try await h.updateConfig(config, mask: update.mask)
      }
      #expect(try h.config() == before)
      // The refusal did not reach the store either.
      try await h.stack.directory.reload()
      #expect(try h.config() == before)
      #expect(try await h.signUp().isAnonymous)
    }
  }

  @Test("a valid UpdateProjectConfig changes only the masked fields, and tokens follow the new TTL")
  func validUpdate() async throws {
    try await ServiceHarness.with { h in
      var config = try h.config()
      #expect(config.signUpQuotaPerHour == 100)
      #expect(config.idTokenTtlSeconds == 3600)
      #expect(config.passwordMinLength == 6)
      config.idTokenTtlSeconds = 600
      config.emailPasswordEnabled = true
      let after = try await h.updateConfig(config, mask: ["id_token_ttl_seconds"])
      #expect(after.idTokenTtlSeconds == 600)
      #expect(!after.emailPasswordEnabled)
      #expect(after.anonymousEnabled)

      let response = try await h.signUp()
      #expect(response.expiresIn == 600)
      let verified = try await h.verify(response.idToken)
      #expect(verified.expiresAt == verified.issuedAt + 600)
    }
  }

  @Test("GetProjectConfig and the other per-project calls of an unknown project are PROJECT_NOT_FOUND")
  func projectNotFound() async throws {
    try await ServiceHarness.with { h in
      expectRPCError(.projectNotFound, sync: { () throws(RPCError) in try h.config("no-such-project") })
      var config = ProjectConfig()
      config.projectId = "no-such-project"
      config.anonymousEnabled = true
      await expectRPCError(.projectNotFound) { () async throws(RPCError) in
        try await h.updateConfig(config, mask: ["anonymous_enabled"])
      }
      await expectRPCError(.projectNotFound) { () async throws(RPCError) in
        try await h.admin.createApiKey(
          CreateApiKeyRequest(projectId: "no-such-project"), context: h.adminContext("CreateApiKey"))
      }
      await expectRPCError(.projectNotFound) { () async throws(RPCError) in
        try await h.admin.scheduleSignUpQuota(
          ScheduleSignUpQuotaRequest(projectId: "no-such-project", quota: 5, durationSeconds: 60),
          context: h.adminContext("ScheduleSignUpQuota"))
      }
      expectRPCError(.projectNotFound, sync: { () throws(RPCError) in try h.config("no-such-project") })
    }
  }

  @Test("CreateProject of an existing id is PROJECT_EXISTS and keeps the project as it was")
  func projectExists() async throws {
    try await ServiceHarness.with { h in
      let before = try h.config()
      #expect(before.anonymousEnabled)
      await expectRPCError(.projectExists) { () async throws(RPCError) in
        try await h.admin.createProject(
          CreateProjectRequest(projectId: h.projectID), context: h.adminContext("CreateProject"))
      }
      #expect(try h.config() == before)
      #expect(try await h.signUp().isAnonymous)
    }
  }

  @Test("a new project has every sign-in method off; bad project ids are INVALID_CONFIG")
  func createProject() async throws {
    try await ServiceHarness.with { h in
      let made = try await h.admin.createProject(
        CreateProjectRequest(projectId: "fresh-1"), context: h.adminContext("CreateProject"))
      #expect(made.projectId == "fresh-1")
      #expect(!made.anonymousEnabled)
      #expect(!made.emailPasswordEnabled)
      #expect(made.idps.isEmpty)
      for id in [
        "", "abc", "Upper-case", "1starts-with-digit", "under_score", String(repeating: "a", count: 31),
      ] {
        await expectRPCError(.invalidConfig, "\(id)") { () async throws(RPCError) in
          try await h.admin.createProject(
            CreateProjectRequest(projectId: id), context: h.adminContext("CreateProject"))
        }
        expectRPCError(.projectNotFound, "\(id)", sync: { () throws(RPCError) in try h.config(id) })
      }
    }
  }

  @Test("ScheduleSignUpQuota with quota 0 or no duration is INVALID_ARGUMENT and schedules nothing")
  func scheduleRefused() async throws {
    try await ServiceHarness.with { h in
      let bad = [
        ScheduleSignUpQuotaRequest(projectId: h.projectID, quota: 0, durationSeconds: 3600),
        ScheduleSignUpQuotaRequest(projectId: h.projectID, quota: 1_000_001, durationSeconds: 3600),
        ScheduleSignUpQuotaRequest(projectId: h.projectID, quota: 1, durationSeconds: 0),
        ScheduleSignUpQuotaRequest(projectId: h.projectID, quota: 1, startTimeMs: -5, durationSeconds: 60),
      ]
      for request in bad {
        await expectRPCError(.invalidArgument, "\(request)") { () async throws(RPCError) in
          try await h.admin.scheduleSignUpQuota(request, context: h.adminContext("ScheduleSignUpQuota"))
        }
      }
      let scheduled = try await h.store.read { db in
        try db.queryOne("SELECT count(*) FROM scheduled_quotas")?.int64(0)
      }
      #expect(scheduled == 0)
      // So the project's quota still applies: a second sign-up from one address is fine.
      try await h.setSignUpQuota(2)
      _ = try await h.signUp()
      _ = try await h.signUp()
    }
  }
}
