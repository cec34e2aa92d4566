import Testing

@testable import AnonAuthStore

@Suite("Clean-up batches")
struct CleanupQueryTests {
  @Test("the due accounts are found through accounts_by_deletion, with or without a project")
  func plan() async throws {
    try await withStore(migrations: AnonAuthSchema.migrations) { store, _ in
      let plans = try await store.read { db in
        try [true, false].map { scoped in
          var arguments: [SQLValue] = [.integer(0)]
          if scoped { arguments.append(.text("p")) }
          arguments.append(.integer(8))
          return try db.queryPlan(CleanupRepository.dueQuery(projectScoped: scoped), arguments)
        }
      }
      for plan in plans {
        #expect(plan.contains("USING INDEX accounts_by_deletion"), "\(plan)")
        #expect(!plan.contains("TEMP B-TREE"), "\(plan)")
      }
    }
  }

  /// A deletion's plan shows its foreign keys' cascades (the account's sessions and
  /// identities) and the count's trigger runs one update: every step a search by key,
  /// no scan and no range, so a deletion costs the same number of searches at any size.
  @Test("a due account's deletion and its cascades search by key")
  func deletionPlans() async throws {
    try await withStore(migrations: AnonAuthSchema.migrations) { store, _ in
      let (deletion, count) = try await store.read { db in
        (
          try db.queryPlan(CleanupRepository.deleteQuery, [.text("p"), .text("u")]),
          try db.queryPlan(
            "UPDATE account_counts SET count = count - 1 WHERE project_id = ? AND is_anonymous = 1",
            [.text("p")])
        )
      }
      let steps = deletion.split(separator: " | ").map(String.init)
      #expect(steps.first == "SEARCH accounts USING PRIMARY KEY (project_id=? AND local_id=?)", "\(deletion)")
      #expect(deletion.contains("refresh_sessions USING COVERING INDEX refresh_sessions_by_account"))
      #expect(deletion.contains("provider_identities USING COVERING INDEX identities_by_account"))
      #expect(
        steps.allSatisfy { $0.hasPrefix("SEARCH ") && !$0.contains(">") && !$0.contains("<") }, "\(deletion)")
      #expect(count == "SEARCH account_counts USING PRIMARY KEY (project_id=? AND is_anonymous=?)")
    }
  }

  @Test("a job stops once its time budget is spent, after one deletion at least")
  func budget() async throws {
    try await withStore(migrations: AnonAuthSchema.migrations) { store, _ in
      try await store.write { db in
        try db.execute("INSERT INTO projects (project_id, created_at_ms) VALUES ('p', 0)")
        for n in 0..<20 {
          try db.execute(
            """
            INSERT INTO accounts (project_id, local_id, is_anonymous, created_at_ms, last_sign_in_at_ms,
              scheduled_deletion_at_ms) VALUES ('p', ?, 1, 0, 0, ?)
            """, [.text("u\(n)"), .integer(Int64(100 + n))])
        }
      }
      let tight = try await store.write { db in
        try CleanupRepository.deleteDueBatch(
          db, projectID: "p", nowMs: 1_000, limit: 10, budgetNanoseconds: 1)
      }
      #expect(tight.deleted == ["p": 1])
      #expect(tight.found == 10, "more were due: the pass goes on")
      let rest = try await store.write { db in
        try CleanupRepository.deleteDueBatch(db, projectID: nil, nowMs: 1_000, limit: 50)
      }
      #expect(rest.deleted == ["p": 19])
      #expect(rest.found == 19, "fewer than the limit: nothing more is due")
      let (left, cleaned) = try await store.read { db in
        (
          try db.queryOne("SELECT count(*) FROM accounts")?.int(0),
          try CleanupRepository.cleanedUpTotal(db, projectID: "p")
        )
      }
      #expect(left == 0)
      #expect(cleaned == 20)
    }
  }
}
