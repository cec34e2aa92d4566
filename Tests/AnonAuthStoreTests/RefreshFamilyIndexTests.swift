import Testing

@testable import AnonAuthStore

/// Migration 7: no index by refresh-token family. A replay revokes its family through the
/// account's index, and only that family of that account.
@Suite("Refresh token family index")
struct RefreshFamilyIndexTests {
  @Test("migration 7 drops refresh_tokens_by_family; a family revoked afterwards is exactly its own tokens")
  func upgrade() async throws {
    try await withUpgradedStore(from: 6) { db in
      try db.execute("INSERT INTO projects (project_id, created_at_ms) VALUES ('p', 0)")
      for account in ["a", "b"] {
        try AccountCountTests.insert(db, "p", account, anonymous: false)
      }
      // Account a: two families (two sign-ins), two generations each. Account b: one
      // family whose id is the same string as one of a's.
      for (n, (account, family)) in [("a", "f1"), ("a", "f1"), ("a", "f2"), ("a", "f2"), ("b", "f1")]
        .enumerated()
      {
        try RefreshTokensRepository.insert(db, Self.token(n, account: account, family: family))
      }
    } _: { store in
      let indexes = try await store.read { db in
        try db.query("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'refresh_tokens'")
          .map { try $0.string(0) }
      }
      #expect(!indexes.contains("refresh_tokens_by_family"))
      #expect(indexes.contains("refresh_tokens_by_account"))

      try await store.write { db in
        try RefreshTokensRepository.revokeFamily(db, projectID: "p", localID: "a", familyID: "f1")
      }
      let revoked = try await store.read { db in
        try (0..<5).map { n in try RefreshTokensRepository.get(db, tokenHash: Self.hash(n))?.revoked }
      }
      #expect(revoked == [true, true, false, false, false], "a's f1 only; a's f2 and b's f1 stay")
      let sealed = try await store.read { db in
        try db.queryOne("SELECT count(*) FROM refresh_tokens WHERE successor_sealed IS NOT NULL")?.int(0)
      }
      #expect(sealed == 3, "a revoked token's sealed successor goes with it")
      let check = try await store.read { db in try db.queryOne("PRAGMA integrity_check")?.string(0) }
      #expect(check == "ok")
    }
  }

  @Test("revoking a family searches the account's index, not the table")
  func plan() async throws {
    try await withStore(migrations: AnonAuthSchema.migrations) { store, _ in
      let plan = try await store.read { db in
        try db.query(
          "EXPLAIN QUERY PLAN " + RefreshTokensRepository.revokeFamilySQL,
          [.text("p"), .text("a"), .text("f")]
        ).map { try $0.string(3) }.joined(separator: " | ")
      }
      #expect(plan.contains("USING INDEX refresh_tokens_by_account"), "\(plan)")
    }
  }

  static func hash(_ n: Int) -> [UInt8] { [UInt8](repeating: UInt8(n), count: 32) }

  static func token(_ n: Int, account: String, family: String) -> RefreshTokenRecord {
    var token = RefreshTokenRecord(
      tokenHash: hash(n), projectID: "p", localID: account, familyID: family, issuedAtMs: Int64(n),
      authTime: 0, signInProvider: "password")
    token.successorSealed = [1, 2, 3]
    return token
  }
}
