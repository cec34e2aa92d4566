import AnonAuthCrypto
import AnonAuthService
import AnonAuthStore
import AnonAuthWire
import Testing

@Suite("AdminService: accounts, claims, usage, backup")
struct AdminAccountTests {
  @Test("ListAccounts pages are stable, filtered and counted")
  func listAccounts() async throws {
    try await ServiceHarness.with { h in
      try await h.setSignUpQuota(1000)
      var all: [String] = []
      for _ in 0..<25 { all.append(try await h.signUp().localId) }
      for id in all.prefix(5) { try await h.updateAccount(id) { $0.isAnonymous = false } }
      var seen: [String] = []
      var token = ""
      repeat {
        var request = ListAccountsRequest()
        request.projectId = h.projectID
        request.pageSize = 10
        request.pageToken = token
        let page = try await h.admin.listAccounts(request, context: h.adminContext("ListAccounts"))
        #expect(page.total == 25)
        #expect(page.accounts.count <= 10)
        seen += page.accounts.map(\.localId)
        token = page.nextPageToken
      } while !token.isEmpty
      #expect(seen == all.sorted())

      var anonymous = ListAccountsRequest()
      anonymous.projectId = h.projectID
      anonymous.filter = .anonymous
      anonymous.pageSize = 1000
      let anon = try await h.admin.listAccounts(anonymous, context: h.adminContext("ListAccounts"))
      #expect(anon.total == 20)
      #expect(anon.accounts.allSatisfy { $0.isAnonymous })
      var permanent = anonymous
      permanent.filter = .permanent
      let perm = try await h.admin.listAccounts(permanent, context: h.adminContext("ListAccounts"))
      #expect(perm.total == 5)
      #expect(Set(perm.accounts.map(\.localId)) == Set(all.prefix(5)))
    }
  }

  @Test("ListAccounts refuses a bad page token, page size or filter")
  func listAccountsErrors() async throws {
    try await ServiceHarness.with { h in
      for change in [
        { (r: inout ListAccountsRequest) in r.pageToken = "***" },
        { (r: inout ListAccountsRequest) in r.pageSize = 1001 },
        { (r: inout ListAccountsRequest) in r.filter = AccountFilter(rawValue: 9) },
      ] {
        var request = ListAccountsRequest()
        request.projectId = h.projectID
        change(&request)
        await expectRPCError(.invalidArgument) { () async throws(RPCError) in
          try await h.admin.listAccounts(request, context: h.adminContext("ListAccounts"))
        }
      }
      var missing = ListAccountsRequest()
      missing.projectId = "no-such-project"
      await expectRPCError(.projectNotFound) { () async throws(RPCError) in
        try await h.admin.listAccounts(missing, context: h.adminContext("ListAccounts"))
      }
    }
  }

  @Test("DisableAccount stops refresh (USER_DISABLED); enabling again lets it work")
  func disable() async throws {
    try await ServiceHarness.with { h in
      let user = try await h.signUp()
      var request = DisableAccountRequest()
      request.projectId = h.projectID
      request.localId = user.localId
      request.disabled = true
      let info = try await h.admin.disableAccount(request, context: h.adminContext("DisableAccount"))
      #expect(info.disabled)
      await expectRPCError(.userDisabled) { () async throws(RPCError) in
        try await h.refresh(user.refreshToken)
      }
      await expectRPCError(.userDisabled) { () async throws(RPCError) in
        try await h.verify(user.idToken, checkRevoked: true)
      }
      request.disabled = false
      _ = try await h.admin.disableAccount(request, context: h.adminContext("DisableAccount"))
      _ = try await h.refresh(user.refreshToken)
      request.localId = "nobody"
      await expectRPCError(.userNotFound) { () async throws(RPCError) in
        try await h.admin.disableAccount(request, context: h.adminContext("DisableAccount"))
      }
    }
  }

  @Test("DeleteAccounts deletes up to 1000, skips unknown ids, refuses more")
  func deleteAccounts() async throws {
    try await ServiceHarness.with { h in
      let a = try await h.signUp()
      let b = try await h.signUp()
      var request = DeleteAccountsRequest()
      request.projectId = h.projectID
      request.localIds = [a.localId, "unknown", b.localId]
      let result = try await h.admin.deleteAccounts(request, context: h.adminContext("DeleteAccounts"))
      #expect(result.deleted == 2)
      #expect(try await h.accountCount() == 0)
      request.localIds = Array(repeating: "x", count: 1001)
      await expectRPCError(.invalidArgument) { () async throws(RPCError) in
        try await h.admin.deleteAccounts(request, context: h.adminContext("DeleteAccounts"))
      }
    }
  }

  @Test("RevokeRefreshTokens revokes refresh tokens and earlier ID tokens")
  func revoke() async throws {
    try await ServiceHarness.with { h in
      let user = try await h.signUp()
      h.clock.advance(seconds: 2)
      var request = RevokeRefreshTokensRequest()
      request.projectId = h.projectID
      request.localId = user.localId
      _ = try await h.admin.revokeRefreshTokens(request, context: h.adminContext("RevokeRefreshTokens"))
      await expectRPCError(.invalidRefreshToken) { () async throws(RPCError) in
        try await h.refresh(user.refreshToken)
      }
      await expectRPCError(.tokenExpired) { () async throws(RPCError) in
        try await h.verify(user.idToken, checkRevoked: true)
      }
      _ = try await h.verify(user.idToken, checkRevoked: false)
    }
  }

  @Test("SetCustomClaims: in the next ID token; reserved names, size and shape refused")
  func customClaims() async throws {
    try await ServiceHarness.with { h in
      let user = try await h.signUp()
      var request = SetCustomClaimsRequest()
      request.projectId = h.projectID
      request.localId = user.localId
      request.customClaimsJson = #"{"admin":true,"tier":"gold"}"#
      let info = try await h.admin.setCustomClaims(request, context: h.adminContext("SetCustomClaims"))
      #expect(info.customClaimsJson == request.customClaimsJson)
      let next = try await h.refresh(user.refreshToken)
      let claims = try #require(try? JWT.decode(next.idToken)).claims
      #expect(claims["admin"]?.boolValue == true)
      #expect(claims["tier"]?.stringValue == "gold")

      for bad in [
        #"{"sub":"x"}"#, #"{"firebase":1}"#, "[1,2]", "not json",
        "{\"a\":\"" + String(repeating: "x", count: 1000) + "\"}",
      ] {
        request.customClaimsJson = bad
        await expectRPCError(.forbiddenClaim, "\(bad.prefix(20))") { () async throws(RPCError) in
          try await h.admin.setCustomClaims(request, context: h.adminContext("SetCustomClaims"))
        }
      }
      #expect(try await h.account(user.localId)?.customClaimsJSON == #"{"admin":true,"tier":"gold"}"#)
    }
  }

  @Test("GetUsage: anonymous accounts are not billable while clean-up is on")
  func usage() async throws {
    try await ServiceHarness.with { h in
      let a = try await h.signUp()
      _ = try await h.signUp()
      try await h.updateAccount(a.localId) { $0.isAnonymous = false }
      func usage() async throws -> GetUsageResponse {
        try await h.admin.getUsage(
          GetUsageRequest(projectId: h.projectID), context: h.adminContext("GetUsage"))
      }
      var u = try await usage()
      #expect(u.totalAccounts == 2 && u.anonymousAccounts == 1 && u.billableAccounts == 2)
      #expect(u.signUpsByDay.first?.byProvider["anonymous"] == 2)
      var config = ProjectConfig()
      config.projectId = h.projectID
      config.autoCleanupEnabled = true
      try await h.updateConfig(config, mask: ["auto_cleanup_enabled"])
      u = try await usage()
      #expect(u.billableAccounts == 1)
    }
  }

  @Test("Backup writes a consistent copy under backups/ and refuses bad names")
  func backup() async throws {
    try await ServiceHarness.with { h in
      let user = try await h.signUp()
      let result = try await h.admin.backup(BackupRequest(name: "b1.db"), context: h.adminContext("Backup"))
      #expect(result.path.hasSuffix("/backups/b1.db"))
      #expect(result.bytes > 0)
      let copy = try Store.open(
        options: StoreOptions(path: result.path), migrations: AnonAuthSchema.migrations)
      let projectID = h.projectID
      let found = try await copy.read {
        try AccountsRepository.get($0, projectID: projectID, localID: user.localId)
      }
      await copy.close()
      #expect(found?.localID == user.localId)
      for bad in ["", "../x", "a/b", ".."] {
        await expectRPCError(.invalidArgument, "\(bad)") { () async throws(RPCError) in
          try await h.admin.backup(BackupRequest(name: bad), context: h.adminContext("Backup"))
        }
      }
      let again = await #expect(throws: RPCError.self) {
        try await h.admin.backup(BackupRequest(name: "b1.db"), context: h.adminContext("Backup"))
      }
      #expect(again?.code == .alreadyExists)
    }
  }

  @Test("authorization matrix: no key, an API key as bearer, a wrong key")
  func authorization() async throws {
    try await ServiceHarness.with { h in
      let path = ServiceHarness.path(AdminService.name, "ListAccounts")
      for metadata in [
        [:], ["authorization": "Bearer \(h.apiKey)"], ["authorization": "Bearer aak_wrong"],
        ["authorization": h.adminKey], ["x-api-key": h.apiKey],
      ] {
        expectRPCError(.adminKeyInvalid, "\(metadata.keys.sorted())") { () throws(RPCError) in
          try h.admin.authenticate(h.context(path, metadata: metadata))
        }
      }
      try h.admin.authenticate(h.adminContext("ListAccounts"))
    }
  }
}

@Suite("UpdateProjectConfig under concurrency")
struct ConcurrentConfigTests {
  @Test("concurrent updates of different fields all take effect")
  func noLostUpdate() async throws {
    try await ServiceHarness.with { h in
      let projectID = h.projectID
      await withTaskGroup(of: Void.self) { group in
        for quota in UInt32(1)...UInt32(8) {
          group.addTask {
            var config = ProjectConfig()
            config.projectId = projectID
            config.signUpQuotaPerHour = quota * 10
            _ = try? await h.updateConfig(config, mask: ["sign_up_quota_per_hour"])
          }
        }
        group.addTask {
          var config = ProjectConfig()
          config.projectId = projectID
          config.emailPasswordEnabled = true
          _ = try? await h.updateConfig(config, mask: ["email_password_enabled"])
        }
        group.addTask {
          var config = ProjectConfig()
          config.projectId = projectID
          config.idTokenTtlSeconds = 900
          _ = try? await h.updateConfig(config, mask: ["id_token_ttl_seconds"])
        }
      }
      let stored = try await h.store.read { try ProjectsRepository.get($0, projectID) }
      #expect(stored?.emailPasswordEnabled == true)
      #expect(stored?.idTokenTTLSeconds == 900)
      #expect(stored?.anonymousEnabled == true)
      #expect(try h.config().emailPasswordEnabled && h.config().idTokenTtlSeconds == 900)
    }
  }

  /// The store applies concurrent updates one after another, but their callers resume in
  /// any order: the in-memory project must end as the last committed one, not as the one
  /// whose caller happened to resume last.
  @Test("after concurrent updates the served config is the one the store kept")
  func cacheFollowsCommitOrder() async throws {
    try await ServiceHarness.with { h in
      let projectID = h.projectID
      for round in UInt32(0)..<40 {
        await withTaskGroup(of: Void.self) { group in
          for quota in UInt32(1)...UInt32(8) {
            group.addTask { await Self.setQuota(h, round * 100 + quota) }
          }
        }
        let stored = try await h.store.read { try ProjectsRepository.get($0, projectID) }
        let served = try h.config().signUpQuotaPerHour
        #expect(stored.map { UInt32($0.signUpQuotaPerHour) } == served, "round \(round)")
        if stored.map({ UInt32($0.signUpQuotaPerHour) }) != served { break }
      }
    }
  }

  /// A reload (another node changed projects) reads a snapshot while this node writes:
  /// what it caches must never be older than what the store kept, for the project and
  /// for the API keys alike.
  @Test("a reload beside concurrent changes leaves the cache equal to the store")
  func reloadKeepsNewerChanges() async throws {
    try await ServiceHarness.with { h in
      let projectID = h.projectID
      let directory = h.stack.directory
      for round in UInt32(0)..<40 {
        await withTaskGroup(of: Void.self) { group in
          for quota in UInt32(1)...UInt32(4) {
            group.addTask { await Self.setQuota(h, round * 100 + quota) }
            group.addTask { _ = try? await directory.createAPIKey(projectID: projectID) }
            group.addTask { try? await directory.reload() }
          }
        }
        let (stored, keys) = try await h.store.read { db in
          (
            try ProjectsRepository.get(db, projectID),
            try ProjectsRepository.apiKeys(db, projectID: projectID)
          )
        }
        let served = directory.project(projectID)
        let servedKeys = Set(directory.apiKeys(projectID: projectID))
        let missing = Set(keys).subtracting(servedKeys).count
        let extra = servedKeys.subtracting(keys).count
        #expect(served?.signUpQuotaPerHour == stored?.signUpQuotaPerHour, "round \(round)")
        #expect(
          missing == 0 && extra == 0,
          "round \(round): \(missing) stored keys not served, \(extra) served not stored")
        if served?.signUpQuotaPerHour != stored?.signUpQuotaPerHour || missing + extra > 0 { break }
      }
    }
  }

  /// One `UpdateProjectConfig` of the quota alone; a refusal does not matter here, only
  /// that the cache ends as the store does.
  static func setQuota(_ h: ServiceHarness, _ quota: UInt32) async {
    var config = ProjectConfig()
    config.projectId = h.projectID
    config.signUpQuotaPerHour = quota
    _ = try? await h.updateConfig(config, mask: ["sign_up_quota_per_hour"])
  }
}
