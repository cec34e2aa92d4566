import Testing

@testable import AnonAuthStore

/// Migration 8: one row per session. A store written by migration 7 (a row per token,
/// rotated ones kept) upgrades with every live session working, by the key its live
/// token had; rotated and revoked tokens are not carried over; an account keeps its
/// newest 100 sessions.
@Suite("Refresh sessions: migration 8")
struct RefreshSessionsMigrationTests {
  @Test("migration 8 keeps every live token working, drops rotated and revoked ones, caps sessions")
  func upgrade() async throws {
    try await withUpgradedStore(from: 7) { db in
      for project in ["p", "q"] {
        try db.execute("INSERT INTO projects (project_id, created_at_ms) VALUES (?, 0)", [.text(project)])
      }
      for (project, account) in [("p", "a"), ("p", "b"), ("q", "a")] {
        try AccountCountTests.insert(db, project, account, anonymous: false)
      }
      // p/a: f1 refreshed twice (two rotated tokens, one live), f2 never, f3 revoked.
      try Self.oldToken(db, Self.key(1), "p", "a", "f1", issuedAtMs: 1_000, rotatedAtMs: 2_000)
      try Self.oldToken(db, Self.key(2), "p", "a", "f1", issuedAtMs: 2_000, rotatedAtMs: 3_000)
      try Self.oldToken(db, Self.key(3), "p", "a", "f1", issuedAtMs: 3_000)
      try Self.oldToken(db, Self.legacyKey(4), "p", "a", "f2", issuedAtMs: 1_500)
      try Self.oldToken(db, Self.key(5), "p", "a", "f3", issuedAtMs: 1_000, rotatedAtMs: 1_100, revoked: true)
      try Self.oldToken(db, Self.key(6), "p", "a", "f3", issuedAtMs: 1_100, revoked: true)
      // p/b: 150 sign-ins, each a live family.
      for n in 0..<150 {
        try Self.oldToken(db, Self.key(100 + n), "p", "b", "b\(n)", issuedAtMs: Int64(10_000 + n))
      }
      try Self.oldToken(db, Self.key(7), "q", "a", "f1", issuedAtMs: 1_000)
    } _: { store in
      let (tables, indexes) = try await store.read { db in
        (
          try db.query("SELECT name FROM sqlite_master WHERE type = 'table'").map { try $0.string(0) },
          try db.query(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'refresh_sessions'"
          ).map { try $0.string(0) }
        )
      }
      #expect(!tables.contains("refresh_tokens"))
      #expect(
        Set(indexes).isSuperset(of: [
          "refresh_sessions_by_account", "refresh_sessions_sealed", "refresh_sessions_legacy",
        ]))

      let found = try await store.read { db in
        try [1, 2, 3, 5, 6, 7].map { try RefreshTokensRepository.find(db, key: Self.key($0)) }
          + [try RefreshTokensRepository.find(db, key: Self.legacyKey(4))]
      }
      #expect(found.map { $0?.presented } == [nil, nil, .current, nil, nil, .current, .current])
      #expect(found[2]?.session.localID == "a" && found[2]?.session.issuedAtMs == 3_000)
      #expect(found[2]?.session.familyID == Array(Self.key(3).prefix(16)))
      #expect(found[5]?.session.projectID == "q")
      #expect(found[6]?.session.familyID == Array(Self.legacyKey(4).prefix(16)))

      let counts = try await store.read { db in
        try [("p", "a"), ("p", "b"), ("q", "a")].map {
          try RefreshTokensRepository.sessionCount(db, projectID: $0.0, localID: $0.1)
        }
      }
      #expect(counts == [2, 100, 1])
      let keptOfB = try await store.read { db in
        try (100..<250).map { try RefreshTokensRepository.find(db, key: Self.key($0)) != nil }
      }
      #expect(
        keptOfB == Array(repeating: false, count: 50) + Array(repeating: true, count: 100), "the newest")

      // The carried-over session rotates onto a key of the new form; within the grace
      // window the old key is its previous token, and after a rotation more it is reuse.
      let rotated = try await store.write { db in
        let newKey = Array(Self.key(3).prefix(16)) + [UInt8](repeating: 0xA1, count: 32)
        try RefreshTokensRepository.rotate(
          db, familyID: Array(Self.key(3).prefix(16)), newHash: Array(newKey.suffix(32)), atMs: 4_000,
          successorSealed: [9])
        return (
          try RefreshTokensRepository.find(db, key: Self.key(3))?.presented,
          try RefreshTokensRepository.find(db, key: newKey)?.presented
        )
      }
      #expect(rotated.0 == .previous && rotated.1 == .current)

      let (check, foreign) = try await store.read { db in
        (try db.queryOne("PRAGMA integrity_check")?.string(0), try db.query("PRAGMA foreign_key_check").count)
      }
      #expect(check == "ok" && foreign == 0)
    }
  }

  /// Looking a session up, revoking it, ending an account's sessions and forgetting the
  /// grace window's seals each search an index by its key: none scans the table.
  @Test("every session statement searches an index")
  func plans() async throws {
    try await withStore(migrations: AnonAuthSchema.migrations) { store, _ in
      let plans = try await store.read { db in
        try [
          ("DELETE FROM refresh_sessions WHERE family_id = ?", 1),
          ("DELETE FROM refresh_sessions WHERE project_id = ? AND local_id = ?", 2),
          ("SELECT count(*) FROM refresh_sessions WHERE project_id = ? AND local_id = ?", 2),
          ("SELECT family_id FROM refresh_sessions WHERE legacy_key = ?", 1),
          (
            "SELECT family_id FROM refresh_sessions WHERE successor_sealed IS NOT NULL AND rotated_at_ms < ?",
            1
          ),
        ].map { sql, count in try db.queryPlan(sql, Array(repeating: .integer(1), count: count)) }
      }
      #expect(plans[0].contains("PRIMARY KEY (family_id=?)"), "\(plans[0])")
      #expect(
        plans[1].contains("INDEX refresh_sessions_by_account (project_id=? AND local_id=?)"), "\(plans[1])")
      #expect(
        plans[2].contains("INDEX refresh_sessions_by_account (project_id=? AND local_id=?)"), "\(plans[2])")
      #expect(plans[3].contains("INDEX refresh_sessions_legacy (legacy_key=?)"), "\(plans[3])")
      #expect(plans[4].contains("INDEX refresh_sessions_sealed (rotated_at_ms<?)"), "\(plans[4])")
    }
  }

  /// A key of the stamped form (40 bytes: a time stamp, then a SHA-256), distinct per n.
  static func key(_ n: Int) -> [UInt8] {
    [0, 0, 1, 0x90, UInt8(n >> 8), UInt8(n & 0xff), 7, 7] + [UInt8](repeating: UInt8(n & 0xff), count: 32)
  }

  /// A key of the oldest form: a SHA-256 alone.
  static func legacyKey(_ n: Int) -> [UInt8] { [UInt8](repeating: UInt8(200 + n), count: 32) }

  /// A token as migration 7's table held it.
  static func oldToken(
    _ db: Database, _ key: [UInt8], _ project: String, _ account: String, _ family: String,
    issuedAtMs: Int64, rotatedAtMs: Int64 = 0, revoked: Bool = false
  ) throws {
    try db.execute(
      """
      INSERT INTO refresh_tokens (token_hash, project_id, local_id, family_id, issued_at_ms, auth_time,
        sign_in_provider, rotated_at_ms, successor_sealed, revoked) VALUES (?,?,?,?,?,0,'password',?,?,?)
      """,
      [
        .blob(key), .text(project), .text(account), .text(family), .integer(issuedAtMs),
        .integer(rotatedAtMs),
        rotatedAtMs > 0 ? .blob([1, 2, 3]) : .null, .integer(revoked ? 1 : 0),
      ])
  }
}
