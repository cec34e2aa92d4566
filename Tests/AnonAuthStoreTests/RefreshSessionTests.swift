import Testing

@testable import AnonAuthStore

/// Since migration 8 a session is one row, however often it refreshes; an account keeps
/// at most `maxSessionsPerAccount` of them, so deleting or revoking it is bounded work.
@Suite("Refresh sessions: bounded rows")
struct RefreshSessionTests {
  @Test("a session that rotates thousands of times stays one row, and the file does not grow")
  func rotationsKeepOneRow() async throws {
    try await withStore(migrations: AnonAuthSchema.migrations) { store, _ in
      try await store.write { db in try Self.seedAccount(db, "p", "a") }
      let family = Self.key(1, ms: 1_000).prefix(16)
      try await store.write { db in
        _ = try RefreshTokensRepository.insert(db, Self.token(Self.key(1, ms: 1_000)))
      }
      var pages: [Int64] = []
      for round in 0..<10 {
        try await store.write { db in
          for n in 0..<300 {
            let at = Int64(2_000 + round * 300 + n)
            try RefreshTokensRepository.rotate(
              db, familyID: Array(family), newHash: Self.hash(round * 300 + n), atMs: at,
              successorSealed: [UInt8](repeating: 7, count: 92))
          }
        }
        pages.append(try await store.read { db in try db.queryOne("PRAGMA page_count")?.int64(0) ?? -1 })
      }
      let (rows, session) = try await store.read { db in
        (
          try db.queryOne("SELECT count(*) FROM refresh_sessions")?.int(0),
          try RefreshTokensRepository.get(db, familyID: Array(family))
        )
      }
      #expect(rows == 1)
      #expect(session?.generation == 3_000)
      #expect(session?.tokenHash == Self.hash(2_999) && session?.previousHash == Self.hash(2_998))
      #expect(pages.first == pages.last, "pages after each 300 rotations: \(pages)")
    }
  }

  @Test("a sign-in beyond 100 sessions ends the one refreshed least recently")
  func capEndsTheOldest() async throws {
    try await withStore(migrations: AnonAuthSchema.migrations) { store, _ in
      let cap = RefreshTokensRepository.maxSessionsPerAccount
      let ended = try await store.write { db in
        try Self.seedAccount(db, "p", "a")
        try Self.seedAccount(db, "p", "other")
        try RefreshTokensRepository.insert(db, Self.token(Self.key(999, ms: 1), account: "other"))
        var ended = 0
        for n in 0..<cap {
          ended += try RefreshTokensRepository.insert(db, Self.token(Self.key(n, ms: 10 + n)))
        }
        // Session 0 refreshes: now session 1 is the least recently refreshed.
        try RefreshTokensRepository.rotate(
          db, familyID: Array(Self.key(0, ms: 10).prefix(16)), newHash: Self.hash(7_000), atMs: 5_000,
          successorSealed: [1])
        ended += try RefreshTokensRepository.insert(db, Self.token(Self.key(cap, ms: 6_000)))
        return ended
      }
      #expect(ended == 1)
      let (count, alive, others) = try await store.read { db in
        (
          try RefreshTokensRepository.sessionCount(db, projectID: "p", localID: "a"),
          try (0..<cap).map {
            try RefreshTokensRepository.get(db, familyID: Array(Self.key($0, ms: 10 + $0).prefix(16))) != nil
          } + [
            try RefreshTokensRepository.get(db, familyID: Array(Self.key(cap, ms: 6_000).prefix(16))) != nil
          ],
          try RefreshTokensRepository.sessionCount(db, projectID: "p", localID: "other")
        )
      }
      #expect(count == cap)
      #expect(alive[0] && !alive[1] && alive[2...].allSatisfy { $0 }, "session 1 ended, 0 (refreshed) kept")
      #expect(others == 1, "another account's session is not counted or ended")
    }
  }

  @Test("deleting an account takes all its sessions (at most 100 rows) and nothing else")
  func deleteTakesEverySession() async throws {
    try await withStore(migrations: AnonAuthSchema.migrations) { store, _ in
      let cap = RefreshTokensRepository.maxSessionsPerAccount
      try await store.write { db in
        try Self.seedAccount(db, "p", "a")
        try Self.seedAccount(db, "p", "b")
        for n in 0..<(cap + 20) {
          try RefreshTokensRepository.insert(db, Self.token(Self.key(n, ms: 10 + n)))
        }
        try RefreshTokensRepository.insert(db, Self.token(Self.key(500, ms: 1), account: "b"))
      }
      let before = try await store.read { db in
        try db.queryOne("SELECT count(*) FROM refresh_sessions")?.int(0)
      }
      #expect(before == cap + 1)
      let deleted = try await store.write { db in
        try AccountsRepository.delete(db, projectID: "p", localID: "a")
      }
      #expect(deleted)
      let left = try await store.read { db in
        try db.query("SELECT local_id FROM refresh_sessions").map { try $0.string(0) }
      }
      #expect(left == ["b"])
    }
  }

  @Test("migration 8 runs on the replicated store, and sessions rotate there")
  func replicated() async throws {
    try await withStore(engine: .cluster, migrations: AnonAuthSchema.migrations) { store, _ in
      let presented = try await store.write { db in
        try Self.seedAccount(db, "p", "a")
        let key = Self.key(1, ms: 1_000)
        try RefreshTokensRepository.insert(db, Self.token(key))
        try RefreshTokensRepository.rotate(
          db, familyID: Array(key.prefix(16)), newHash: Self.hash(2), atMs: 2_000, successorSealed: [1])
        return (
          try RefreshTokensRepository.find(db, key: key)?.presented,
          try RefreshTokensRepository.find(db, key: Array(key.prefix(16)) + Self.hash(2))?.presented
        )
      }
      #expect(presented.0 == .previous && presented.1 == .current)
    }
  }

  static func seedAccount(_ db: Database, _ project: String, _ account: String) throws {
    try db.execute(
      "INSERT OR IGNORE INTO projects (project_id, created_at_ms) VALUES (?, 0)", [.text(project)])
    try AccountCountTests.insert(db, project, account, anonymous: true)
  }

  /// A key of the current form: a 16-byte family id starting with `ms`, then a SHA-256.
  static func key(_ n: Int, ms: Int) -> [UInt8] {
    [0, 0, UInt8((ms >> 24) & 0xff), UInt8((ms >> 16) & 0xff), UInt8((ms >> 8) & 0xff), UInt8(ms & 0xff)]
      + [UInt8(n >> 8), UInt8(n & 0xff)] + [UInt8](repeating: 0x5A, count: 8) + hash(n)
  }

  static func hash(_ n: Int) -> [UInt8] {
    [UInt8(n >> 8), UInt8(n & 0xff)] + [UInt8](repeating: 0xC3, count: 30)
  }

  static func token(_ key: [UInt8], project: String = "p", account: String = "a") -> RefreshTokenRecord {
    RefreshTokenRecord(
      tokenHash: key, projectID: project, localID: account, familyID: "",
      issuedAtMs: Int64(key[5]) << 0
        | Int64(key[4]) << 8 | Int64(key[3]) << 16 | Int64(key[2]) << 24,
      authTime: 0, signInProvider: "anonymous")
  }
}
