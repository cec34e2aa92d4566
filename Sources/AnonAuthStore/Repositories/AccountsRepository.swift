/// SQL for accounts and their provider identities.
public enum AccountsRepository {
  static let table = AccountRecord.table

  static let insertStatement = table.insert()

  /// The INSERT whose clean-up date the project's switch decides (`insert(_:_:deletionAtMsIfCleanupOn:)`).
  static let insertDeciding = table.insert(expressions: [
    "scheduled_deletion_at_ms":
      "coalesce((SELECT ? FROM projects WHERE project_id = ? AND auto_cleanup_enabled = 1), 0)"
  ])

  /// Every column but the key. An UPDATE, never INSERT OR REPLACE: REPLACE deletes the old
  /// row first, and with foreign keys on, ON DELETE CASCADE would take the account's
  /// provider identities and refresh tokens with it.
  static let updateStatement = table.update()

  static let insertIdentity = IdentityRecord.table.insert()

  static func decode(_ row: Row) throws -> AccountRecord { try table.decode(row) }

  public static func insert(_ db: Database, _ account: AccountRecord) throws {
    try db.executePipelined(insertStatement.sql, insertStatement.arguments(account))
  }

  /// Inserts a new account whose clean-up date the project's switch decides in the same
  /// statement: `deletionAtMs` if automatic clean-up is on as the row is written, else 0.
  /// So a sign-up racing the switch is scheduled either here or by the switch's own pass,
  /// without the job waiting to read the switch first; `scheduledDeletion` reads the
  /// outcome back.
  public static func insert(
    _ db: Database, _ account: AccountRecord, deletionAtMsIfCleanupOn deletionAtMs: Int64
  )
    throws
  {
    try db.executePipelined(
      insertDeciding.sql,
      insertDeciding.arguments(account, expressions: [[.integer(deletionAtMs), .text(account.projectID)]]))
  }

  /// An account's clean-up date, read without waiting (0: none).
  public static func scheduledDeletion(_ db: Database, projectID: String, localID: String) throws
    -> PipelinedRows
  {
    try db.queryPipelined(
      "SELECT scheduled_deletion_at_ms FROM accounts WHERE project_id = ? AND local_id = ?",
      [.text(projectID), .text(localID)])
  }

  /// Rewrites every column of an existing account but its key.
  public static func update(_ db: Database, _ account: AccountRecord) throws {
    try db.execute(updateStatement.sql, updateStatement.arguments(account))
  }

  public static func get(_ db: Database, projectID: String, localID: String) throws -> AccountRecord? {
    try db.queryOne(
      "SELECT \(table.selection) FROM accounts WHERE project_id = ? AND local_id = ?",
      [.text(projectID), .text(localID)]
    ).map(decode)
  }

  /// Deletes the account; identities and refresh tokens go with it (foreign keys).
  /// Returns whether it existed.
  public static func delete(_ db: Database, projectID: String, localID: String) throws -> Bool {
    try db.execute(
      "DELETE FROM accounts WHERE project_id = ? AND local_id = ?", [.text(projectID), .text(localID)])
    return db.changes > 0
  }

  public static func setLastRefresh(_ db: Database, projectID: String, localID: String, atMs: Int64) throws {
    try db.execute(
      "UPDATE accounts SET last_refresh_at_ms = ? WHERE project_id = ? AND local_id = ?",
      [.integer(atMs), .text(projectID), .text(localID)])
  }

  public static func count(_ db: Database) throws -> Int64 {
    try db.queryOne("SELECT count(*) FROM accounts").map { try $0.int64(0) } ?? 0
  }

  public static func identities(_ db: Database, projectID: String, localID: String) throws -> [IdentityRecord]
  {
    // INDEXED BY: without it SQLite read the primary key by project alone, to skip a sort:
    // every identity of the project, for one account's (HotPathPlanTests). The account's
    // index holds the primary key after the account, so its rows come in provider order.
    try db.query(
      """
      SELECT \(IdentityRecord.table.selection) FROM provider_identities
      INDEXED BY identities_by_account
      WHERE project_id = ? AND local_id = ? ORDER BY provider_id
      """, [.text(projectID), .text(localID)]
    ).map(IdentityRecord.table.decode)
  }

  public static func insertIdentity(
    _ db: Database, projectID: String, localID: String, _ identity: IdentityRecord
  ) throws {
    try db.execute(
      insertIdentity.sql, insertIdentity.arguments(identity, owner: [.text(projectID), .text(localID)]))
  }

  /// The account that holds a provider identity, if any.
  public static func owner(_ db: Database, projectID: String, providerID: String, rawID: String) throws
    -> String?
  {
    try db.queryOne(
      "SELECT local_id FROM provider_identities WHERE project_id = ? AND provider_id = ? AND raw_id = ?",
      [.text(projectID), .text(providerID), .text(rawID)]
    ).map { try $0.string(0) }
  }

  public static func byEmail(_ db: Database, projectID: String, email: String) throws -> AccountRecord? {
    try db.queryOne(
      "SELECT \(table.selection) FROM accounts WHERE project_id = ? AND email = ?",
      [.text(projectID), .text(email)]
    )
    .map(decode)
  }
}
