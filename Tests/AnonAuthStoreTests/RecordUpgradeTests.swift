import Testing

@testable import AnonAuthStore

/// A store made by the first release (migration 1 alone), holding one row of each kind
/// it knew, opened with today's code: every migration runs on it, and the rows read back
/// by name through today's declarations, the columns added since at their defaults.
@Suite("Records: a store of the first schema, upgraded")
struct RecordUpgradeTests {
  static let legacyKey = [UInt8](repeating: 7, count: 32)

  @Test("rows written at schema version 1 read correctly by name at the latest version")
  func fromVersionOne() async throws {
    try await withUpgradedStore(from: 1) { db in
      // The first schema's columns, named, as the first release wrote them.
      try db.execute(
        """
        INSERT INTO projects (project_id, anonymous_enabled, email_password_enabled, idps_json,
          auto_cleanup_enabled, auto_cleanup_enabled_at_ms, sign_up_quota_per_hour, id_token_ttl_seconds,
          password_min_length, created_at_ms)
        VALUES ('p', 1, 1, '[{"id":"google.com"}]', 1, 50, 30, 3600, 8, 10)
        """)
      try db.execute(
        """
        INSERT INTO accounts (project_id, local_id, is_anonymous, email, email_verified, display_name,
          password_hash, disabled, created_at_ms, last_sign_in_at_ms, last_refresh_at_ms, valid_since,
          custom_claims_json, scheduled_deletion_at_ms)
        VALUES ('p', 'u1', 0, 'a@example.com', 1, 'Ada', '$scrypt$x', 0, 100, 200, 300, 4, '{"r":1}', 0)
        """)
      try db.execute(
        """
        INSERT INTO provider_identities (project_id, provider_id, raw_id, local_id, email, display_name)
        VALUES ('p', 'google.com', 'g-1', 'u1', 'a@example.com', 'Ada G')
        """)
      try db.execute(
        """
        INSERT INTO refresh_tokens (token_hash, project_id, local_id, family_id, issued_at_ms, auth_time,
          sign_in_provider)
        VALUES (?, 'p', 'u1', 'f1', 400, 5, 'password')
        """, [.blob(Self.legacyKey)])
      try db.execute(
        """
        INSERT INTO signing_keys (kid, private_key_sealed, certificate_pem, created_at_ms, retired_at_ms,
          publish_until_ms)
        VALUES ('k1', X'0102', 'PEM', 1000, 0, 0)
        """)
    } _: { store in
      #expect(store.schemaVersion == AnonAuthSchema.migrations.last?.version)
      let (project, account, identities, session, keys) = try await store.read { db in
        (
          try ProjectsRepository.get(db, "p"),
          try AccountsRepository.get(db, projectID: "p", localID: "u1"),
          try AccountsRepository.identities(db, projectID: "p", localID: "u1"),
          try RefreshTokensRepository.find(db, key: Self.legacyKey),
          try SigningKeysRepository.published(db, nowMs: 2000)
        )
      }

      var expectedProject = ProjectRecord(projectID: "p", createdAtMs: 10)
      expectedProject.anonymousEnabled = true
      expectedProject.emailPasswordEnabled = true
      expectedProject.idpsJSON = #"[{"id":"google.com"}]"#
      expectedProject.autoCleanupEnabled = true
      expectedProject.autoCleanupEnabledAtMs = 50
      expectedProject.signUpQuotaPerHour = 30
      expectedProject.idTokenTTLSeconds = 3600
      expectedProject.passwordMinLength = 8
      // Added by migrations 4, 9 and 13: their defaults.
      #expect(
        expectedProject.authorizedDomains == ["localhost"] && expectedProject.emailTemplatesJSON == "[]")
      #expect(project == expectedProject)

      var expectedAccount = AccountRecord(projectID: "p", localID: "u1", isAnonymous: false, createdAtMs: 100)
      expectedAccount.email = "a@example.com"
      expectedAccount.emailVerified = true
      expectedAccount.displayName = "Ada"
      expectedAccount.passwordHash = "$scrypt$x"
      expectedAccount.lastSignInAtMs = 200
      expectedAccount.lastRefreshAtMs = 300
      expectedAccount.validSince = 4
      expectedAccount.customClaimsJSON = #"{"r":1}"#
      #expect(account == expectedAccount)
      #expect(
        identities == [
          IdentityRecord(providerID: "google.com", rawID: "g-1", email: "a@example.com", displayName: "Ada G")
        ])

      // Migration 8 carried the live token over as a session found by its old key.
      #expect(session?.presented == .current)
      #expect(
        session?.session
          == RefreshSessionRecord(
            familyID: Array(Self.legacyKey.prefix(16)), projectID: "p", localID: "u1",
            tokenHash: Self.legacyKey,
            generation: 0, issuedAtMs: 400, authTime: 5, signInProvider: "password", previousHash: nil,
            rotatedAtMs: 0, successorSealed: nil, reissues: 0, legacyKey: Self.legacyKey))

      var expectedKey = SigningKeyRecord(
        kid: "k1", privateKeySealed: [1, 2], certificatePEM: "PEM", createdAtMs: 1000)
      expectedKey.signsFromMs = 0
      #expect(keys == [expectedKey])

      // Today's writes go through the same declarations on the upgraded file.
      try await store.write { db in
        guard var changed = try AccountsRepository.get(db, projectID: "p", localID: "u1"),
          var settings = try ProjectsRepository.get(db, "p")
        else { throw JobFailed(name: "the upgraded rows are gone") }
        changed.photoURL = "https://example.com/a.png"
        changed.disabled = true
        try AccountsRepository.update(db, changed)
        settings.corsOrigins = ["https://app.example.com", "https://admin.example.com"]
        settings.emailSender = "noreply@example.com"
        try ProjectsRepository.update(db, settings)
      }
      let (updated, settings) = try await store.read { db in
        (try AccountsRepository.get(db, projectID: "p", localID: "u1"), try ProjectsRepository.get(db, "p"))
      }
      #expect(updated?.photoURL == "https://example.com/a.png" && updated?.disabled == true)
      #expect(updated?.email == "a@example.com" && updated?.createdAtMs == 100)
      #expect(settings?.corsOrigins == ["https://app.example.com", "https://admin.example.com"])
      #expect(settings?.emailSender == "noreply@example.com" && settings?.createdAtMs == 10)
    }
  }
}
