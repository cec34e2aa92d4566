import Testing

@testable import AnonAuthStore

/// Migration 6: anonymous sign-ups write no kind index (accounts_by_kind is gone); the
/// partial index accounts_permanent serves ListAccounts' PERMANENT filter.
@Suite("Account kind index")
struct AccountKindIndexTests {
  @Test("migration 6 indexes the permanent accounts already there; pages of each kind stay exact")
  func upgrade() async throws {
    try await withUpgradedStore(from: 5) { db in
      try db.execute("INSERT INTO projects (project_id, created_at_ms) VALUES ('p', 0)")
      for n in 0..<30 { try AccountCountTests.insert(db, "p", "u\(n + 10)", anonymous: n % 3 != 0) }
    } _: { store in
      try await Self.upgraded(store)
    }
  }

  static func upgraded(_ store: Store) async throws {
    let indexes = try await store.read { db in
      try db.query("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'accounts'")
        .map { try $0.string(0) }
    }
    #expect(indexes.contains("accounts_permanent"))
    #expect(!indexes.contains("accounts_by_kind"))
    try await Self.expectPages(store)

    // A link moves an account into the index, a deletion takes one out, a sign-up adds
    // nothing to it.
    try await store.write { db in
      try db.execute("UPDATE accounts SET is_anonymous = 0 WHERE local_id = 'u11'")
      try db.execute("DELETE FROM accounts WHERE local_id = 'u13'")
      try AccountCountTests.insert(db, "p", "u99", anonymous: true)
    }
    try await Self.expectPages(store)
    let entries = try await store.read { db in
      try db.queryOne(
        "SELECT count(*) FROM accounts INDEXED BY accounts_permanent WHERE project_id = 'p' AND is_anonymous = 0"
      )?.int(0)
    }
    #expect(entries == 10, "10 permanent at first, u11 linked, u13 deleted")
    let check = try await store.read { db in try db.queryOne("PRAGMA integrity_check")?.string(0) }
    #expect(check == "ok")
  }

  @Test("a page of permanent accounts reads accounts_permanent; no filter sorts in a temporary B-tree")
  func plans() async throws {
    try await withStore(migrations: AnonAuthSchema.migrations) { store, _ in
      let plans = try await store.read { db in
        try [AccountListRepository.Filter.all, .anonymous, .permanent].map { filter in
          try db.queryPlan(
            AccountListRepository.pageQuery(filter: filter), [.text("p"), .text(""), .integer(100)])
        }
      }
      #expect(plans[2].contains("accounts_permanent"), "\(plans[2])")
      for plan in plans { #expect(!plan.contains("TEMP B-TREE"), "\(plan)") }
    }
  }

  /// Every filter's keyset pages (two at a time) give exactly the accounts a plain query
  /// of that kind gives.
  static func expectPages(_ store: Store, sourceLocation: SourceLocation = #_sourceLocation) async throws {
    for (filter, clause) in [
      (AccountListRepository.Filter.all, ""), (.anonymous, " AND is_anonymous = 1"),
      (.permanent, " AND is_anonymous = 0"),
    ] {
      let (paged, expected) = try await store.read { db in
        var paged: [String] = []
        while true {
          let page = try AccountListRepository.page(
            db, projectID: "p", filter: filter, afterLocalID: paged.last ?? "", limit: 2)
          paged += page.map(\.localID)
          if page.count < 2 { break }
        }
        let expected = try db.query(
          "SELECT local_id FROM accounts NOT INDEXED WHERE project_id = 'p'\(clause) ORDER BY local_id"
        ).map { try $0.string(0) }
        return (paged, expected)
      }
      #expect(!expected.isEmpty, sourceLocation: sourceLocation)
      #expect(paged == expected, "\(filter)", sourceLocation: sourceLocation)
    }
  }
}
