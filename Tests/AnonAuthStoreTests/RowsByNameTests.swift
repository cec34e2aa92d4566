import Testing

@testable import AnonAuthStore

/// Records read by column name (`TableDefinition.decode`), on both engines, and the
/// statements made from the declarations.
@Suite("Rows by name")
struct RowsByNameTests {
  static func account() -> AccountRecord {
    var account = AccountRecord(projectID: "p", localID: "u1", isAnonymous: false, createdAtMs: 5)
    account.email = "a@example.com"
    account.passwordHash = "$scrypt$x"
    account.validSince = 9
    account.photoURL = "https://example.com/a.png"
    return account
  }

  @Test("a record reads by name whatever the order of the SELECT list", arguments: Engine.allCases)
  func anyOrder(_ engine: Engine) async throws {
    try await withStore(engine: engine, migrations: AnonAuthSchema.migrations) { store, _ in
      try await store.write { db in
        try ProjectsRepository.insert(db, ProjectRecord(projectID: "p", createdAtMs: 1))
        try AccountsRepository.insert(db, Self.account())
      }
      let reversed = AccountRecord.table.columns.map(\.name).reversed().joined(separator: ", ")
      let (inOrder, shuffled) = try await store.read { db in
        (
          try AccountsRepository.get(db, projectID: "p", localID: "u1"),
          try db.queryOne("SELECT 'x' AS extra, \(reversed) FROM accounts").map(AccountRecord.table.decode)
        )
      }
      #expect(inOrder == Self.account())
      #expect(shuffled == Self.account())
    }
  }

  @Test("a result without a declared column is refused, naming it", arguments: Engine.allCases)
  func missingColumn(_ engine: Engine) async throws {
    try await withStore(engine: engine, migrations: AnonAuthSchema.migrations) { store, _ in
      try await store.write { db in
        try ProjectsRepository.insert(db, ProjectRecord(projectID: "p", createdAtMs: 1))
        try AccountsRepository.insert(db, Self.account())
      }
      let partial = AccountRecord.table.columns.map(\.name).filter { $0 != "photo_url" }.joined(
        separator: ", ")
      let error = await #expect(throws: StoreError.self) {
        try await store.read { db in
          try db.queryOne("SELECT \(partial) FROM accounts").map(AccountRecord.table.decode)
        }
      }
      #expect(error?.kind == .conversion)
      #expect(error?.message.contains("photo_url") == true)
    }
  }

  @Test("rows of one statement share their column names, so names resolve once", arguments: Engine.allCases)
  func sharedNames(_ engine: Engine) async throws {
    try await withStore(engine: engine, migrations: AnonAuthSchema.migrations) { store, _ in
      try await store.write { db in
        try ProjectsRepository.insert(db, ProjectRecord(projectID: "p", createdAtMs: 1))
        try ProjectsRepository.insert(db, ProjectRecord(projectID: "q", createdAtMs: 2))
      }
      let shared = try await store.read { db in
        let first = try db.query("SELECT \(ProjectRecord.table.selection) FROM projects ORDER BY project_id")
        let again = try db.query("SELECT \(ProjectRecord.table.selection) FROM projects ORDER BY project_id")
        _ = try first.map(ProjectRecord.table.decode)
        return first.count == 2 && first[0].columns === first[1].columns
          && again[0].columns === first[0].columns
      }
      #expect(shared)
    }
  }

  @Test("a row made by hand has no names: reading it as a record is refused")
  func handMade() {
    let error = #expect(throws: StoreError.self) {
      try SigningKeyRecord.table.decode(Row([.text("k")]))
    }
    #expect(error?.kind == .conversion)
    #expect(throws: StoreError.self) { try Row([.null]).index(of: "kid") }
  }

  /// Each statement made from a declaration binds exactly as many values as it has `?`.
  @Test("statements made from the declarations bind one value per placeholder")
  func placeholders() throws {
    let session = RefreshSessionRecord.table.blank
    let cases: [(String, [SQLValue])] = [
      (AccountsRepository.insertStatement.sql, AccountsRepository.insertStatement.arguments(Self.account())),
      (
        AccountsRepository.insertDeciding.sql,
        AccountsRepository.insertDeciding.arguments(Self.account(), expressions: [[.integer(1), .text("p")]])
      ),
      (AccountsRepository.updateStatement.sql, AccountsRepository.updateStatement.arguments(Self.account())),
      (
        AccountsRepository.insertIdentity.sql,
        AccountsRepository.insertIdentity.arguments(
          IdentityRecord(providerID: "x", rawID: "y"), owner: [.text("p"), .text("u")])
      ),
      (
        RefreshTokensRepository.insertStatement.sql,
        RefreshTokensRepository.insertStatement.arguments(session)
      ),
      (
        ProjectsRepository.updateStatement.sql,
        ProjectsRepository.updateStatement.arguments(ProjectRecord(projectID: "p", createdAtMs: 0))
      ),
      (
        MailOutboxRepository.enqueueStatement.sql,
        MailOutboxRepository.enqueueStatement.arguments(OutboxMail.table.blank, trailing: [.integer(10)])
      ),
    ]
    for (sql, arguments) in cases {
      #expect(sql.filter { $0 == "?" }.count == arguments.count, "\(sql)")
    }
    #expect(!ProjectsRepository.updateStatement.sql.contains("created_at_ms"))
    #expect(AccountsRepository.updateStatement.sql.hasSuffix("WHERE project_id = ? AND local_id = ?"))
  }
}
