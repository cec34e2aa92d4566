import Testing

@testable import AnonAuthStore

/// Migration 7: no index by refresh-token family; the account's index is keyed by the
/// family too. A replay revokes its family, and only that family of that account.
@Suite("Refresh token family index")
struct RefreshFamilyIndexTests {
  @Test("migration 7 re-keys the account index; a family revoked afterwards is exactly its own tokens")
  func upgrade() async throws {
    try await withUpgradedStore(from: 6) { db in
      for project in ["p", "q"] {
        try db.execute("INSERT INTO projects (project_id, created_at_ms) VALUES (?, 0)", [.text(project)])
      }
      let accounts = [("p", "a"), ("p", "b"), ("q", "a")]
      for (project, account) in accounts {
        try AccountCountTests.insert(db, project, account, anonymous: false)
      }
      for (n, token) in Self.tokens.enumerated() {
        try RefreshTokensRepository.insert(
          db, Self.token(n, project: token.project, account: token.account, family: token.family))
      }
    } _: { store in
      let indexes = try await store.read { db in
        try db.query("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'refresh_tokens'")
          .map { try $0.string(0) }
      }
      #expect(!indexes.contains("refresh_tokens_by_family"))
      #expect(!indexes.contains("refresh_tokens_by_account"))
      #expect(indexes.contains("refresh_tokens_by_account_family"))

      try await store.write { db in
        try RefreshTokensRepository.revokeFamily(db, projectID: "p", localID: "a", familyID: "f1")
      }
      let revoked = try await store.read { db in
        try Self.tokens.indices.map { n in
          try RefreshTokensRepository.get(db, tokenHash: Self.hash(n))?.revoked
        }
      }
      #expect(
        revoked == Self.tokens.map { $0.project == "p" && $0.account == "a" && $0.family == "f1" },
        "p/a's f1 only: not p/a's f2, not p/b's or q/a's family of the same name")
      let sealed = try await store.read { db in
        try db.queryOne("SELECT count(*) FROM refresh_tokens WHERE successor_sealed IS NOT NULL")?.int(0)
      }
      #expect(sealed == Self.tokens.count - 2, "a revoked token's sealed successor goes with it")
      let check = try await store.read { db in try db.queryOne("PRAGMA integrity_check")?.string(0) }
      #expect(check == "ok")
    }
  }

  /// A family's revocation reads its own tokens, however many the account has: a scan of
  /// the account's range would let one account with many rotated tokens stall the writer
  /// once per family it starts.
  @Test("revoking a family, an account, and an account's cascade each search the index by its full key")
  func plans() async throws {
    try await withStore(migrations: AnonAuthSchema.migrations) { store, _ in
      let plans = try await store.read { db in
        try [
          (RefreshTokensRepository.revokeFamilySQL, 3),
          ("UPDATE refresh_tokens SET revoked = 1 WHERE project_id = ? AND local_id = ?", 2),
          ("DELETE FROM refresh_tokens WHERE project_id = ? AND local_id = ?", 2),
        ].map { sql, count in
          try db.queryPlan(sql, Array(repeating: .text("x"), count: count))
        }
      }
      #expect(
        plans[0].contains(
          "INDEX refresh_tokens_by_account_family (project_id=? AND local_id=? AND family_id=?)"),
        "\(plans[0])")
      for plan in plans[1...] {
        #expect(
          plan.contains("INDEX refresh_tokens_by_account_family (project_id=? AND local_id=?)"),
          "\(plan)")
      }
    }
  }

  /// Account p/a: two families (two sign-ins), two generations each. p/b and q/a: a
  /// family whose id is the same string as one of p/a's.
  static let tokens: [(project: String, account: String, family: String)] = [
    ("p", "a", "f1"), ("p", "a", "f1"), ("p", "a", "f2"), ("p", "a", "f2"), ("p", "b", "f1"),
    ("q", "a", "f1"),
  ]

  static func hash(_ n: Int) -> [UInt8] { [UInt8](repeating: UInt8(n), count: 32) }

  static func token(_ n: Int, project: String, account: String, family: String) -> RefreshTokenRecord {
    var token = RefreshTokenRecord(
      tokenHash: hash(n), projectID: project, localID: account, familyID: family, issuedAtMs: Int64(n),
      authTime: 0, signInProvider: "password")
    token.successorSealed = [1, 2, 3]
    return token
  }
}
