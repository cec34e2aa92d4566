import AnonAuthStore
import Testing

/// `account_counts` (migration 5): what ListAccounts' total and GetUsage read instead of
/// counting the accounts. Every change of the accounts must keep it equal to a count.
@Suite("Account counts")
struct AccountCountTests {
  @Test("migration 5 counts the accounts already there; every later change keeps it exact")
  func keptExact() async throws {
    try await withUpgradedStore(from: 4) { db in
      for project in ["p1", "p2"] {
        try db.execute("INSERT INTO projects (project_id, created_at_ms) VALUES (?, 0)", [.text(project)])
      }
      for n in 0..<7 { try Self.insert(db, "p1", "a\(n)", anonymous: n < 5) }
      try Self.insert(db, "p2", "b0", anonymous: true)
    } _: { store in
      try await Self.keptExact(store)
    }
  }

  static func keptExact(_ store: Store) async throws {
    try await Self.expectCounts(store, "p1", all: 7, anonymous: 5, permanent: 2)
    try await Self.expectCounts(store, "p2", all: 1, anonymous: 1, permanent: 0)

    // Sign-up, link (anonymous to permanent), an update that keeps the kind, deletion.
    try await store.write { db in try Self.insert(db, "p1", "a7", anonymous: true) }
    try await store.write { db in
      try db.execute("UPDATE accounts SET is_anonymous = 0 WHERE local_id IN ('a0', 'a1')")
      try db.execute("UPDATE accounts SET is_anonymous = 0, display_name = 'x' WHERE local_id = 'a6'")
      try db.execute("UPDATE accounts SET last_sign_in_at_ms = 5 WHERE project_id = 'p1'")
    }
    try await store.write { db in try db.execute("DELETE FROM accounts WHERE local_id IN ('a2', 'a5')") }
    try await Self.expectCounts(store, "p1", all: 6, anonymous: 3, permanent: 3)

    // A write job that fails rolls its count back with its rows.
    await #expect(throws: (any Error).self) {
      try await store.write { db in
        try Self.insert(db, "p1", "a8", anonymous: true)
        try Self.insert(db, "p1", "a8", anonymous: true)
      }
    }
    try await Self.expectCounts(store, "p1", all: 6, anonymous: 3, permanent: 3)

    // A deleted project takes its accounts (cascade) and its counts; the other stays.
    try await store.write { db in try db.execute("DELETE FROM projects WHERE project_id = 'p1'") }
    try await Self.expectCounts(store, "p1", all: 0, anonymous: 0, permanent: 0)
    try await Self.expectCounts(store, "p2", all: 1, anonymous: 1, permanent: 0)
    let rows = try await store.read { db in
      try db.queryOne("SELECT count(*) FROM account_counts WHERE project_id = 'p1'")?.int(0)
    }
    #expect(rows == 0)

    // recount makes the same figures from the accounts themselves.
    try await store.write { db in
      try db.execute("UPDATE account_counts SET count = 99")
      try AccountListRepository.recount(db)
    }
    try await Self.expectCounts(store, "p2", all: 1, anonymous: 1, permanent: 0)
  }

  static func insert(_ db: Database, _ project: String, _ localID: String, anonymous: Bool) throws {
    try db.execute(
      """
      INSERT INTO accounts (project_id, local_id, is_anonymous, created_at_ms, last_sign_in_at_ms)
      VALUES (?, ?, ?, 0, 0)
      """, [.text(project), .text(localID), .integer(anonymous ? 1 : 0)])
  }

  static func expectCounts(
    _ store: Store, _ project: String, all: Int64, anonymous: Int64, permanent: Int64,
    sourceLocation: SourceLocation = #_sourceLocation
  ) async throws {
    let (counted, kept) = try await store.read { db in
      let counted = try [AccountListRepository.Filter.all, .anonymous, .permanent].map { filter in
        try AccountListRepository.count(db, projectID: project, filter: filter)
      }
      let truth = try [
        "", " AND is_anonymous = 1", " AND is_anonymous = 0",
      ].map { clause in
        try db.queryOne("SELECT count(*) FROM accounts WHERE project_id = ?\(clause)", [.text(project)])?
          .int64(0)
          ?? -1
      }
      return (counted, truth)
    }
    #expect(counted == [all, anonymous, permanent], sourceLocation: sourceLocation)
    #expect(kept == counted, "the counts agree with counting the rows", sourceLocation: sourceLocation)
  }
}
