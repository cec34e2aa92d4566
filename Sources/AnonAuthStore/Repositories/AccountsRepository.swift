/// SQL for accounts and their provider identities.
public enum AccountsRepository {
  static let columns = """
    project_id, local_id, is_anonymous, email, email_verified, display_name, password_hash, disabled,
    created_at_ms, last_sign_in_at_ms, last_refresh_at_ms, valid_since, custom_claims_json,
    scheduled_deletion_at_ms, photo_url
    """

  static func decode(_ row: Row) throws -> AccountRecord {
    var a = AccountRecord(
      projectID: try row.string(0), localID: try row.string(1), isAnonymous: try row.bool(2),
      createdAtMs: try row.int64(8))
    a.email = try row.optionalString(3)
    a.emailVerified = try row.bool(4)
    a.displayName = try row.string(5)
    a.passwordHash = try row.optionalString(6)
    a.disabled = try row.bool(7)
    a.lastSignInAtMs = try row.int64(9)
    a.lastRefreshAtMs = try row.int64(10)
    a.validSince = try row.int64(11)
    a.customClaimsJSON = try row.string(12)
    a.scheduledDeletionAtMs = try row.int64(13)
    a.photoURL = try row.string(14)
    return a
  }

  static func values(_ a: AccountRecord) -> [SQLValue] {
    [
      .text(a.projectID), .text(a.localID), .integer(a.isAnonymous ? 1 : 0),
      a.email.map { .text($0) } ?? .null,
      .integer(a.emailVerified ? 1 : 0), .text(a.displayName), a.passwordHash.map { .text($0) } ?? .null,
      .integer(a.disabled ? 1 : 0), .integer(a.createdAtMs), .integer(a.lastSignInAtMs),
      .integer(a.lastRefreshAtMs), .integer(a.validSince), .text(a.customClaimsJSON),
      .integer(a.scheduledDeletionAtMs), .text(a.photoURL),
    ]
  }

  public static func insert(_ db: Database, _ account: AccountRecord) throws {
    try db.executePipelined(
      "INSERT INTO accounts (\(columns)) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", values(account))
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
    var arguments = values(account)
    arguments[13] = .integer(deletionAtMs)
    arguments.insert(.text(account.projectID), at: 14)
    try db.executePipelined(
      """
      INSERT INTO accounts (\(columns)) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,
        coalesce((SELECT ? FROM projects WHERE project_id = ? AND auto_cleanup_enabled = 1), 0), ?)
      """, arguments)
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
  ///
  /// An UPDATE, never INSERT OR REPLACE: REPLACE deletes the old row first, and with
  /// foreign keys on, ON DELETE CASCADE would take the account's provider identities and
  /// refresh tokens with it.
  public static func update(_ db: Database, _ account: AccountRecord) throws {
    let all = values(account)
    try db.execute(
      """
      UPDATE accounts SET is_anonymous = ?, email = ?, email_verified = ?, display_name = ?,
        password_hash = ?, disabled = ?, created_at_ms = ?, last_sign_in_at_ms = ?, last_refresh_at_ms = ?,
        valid_since = ?, custom_claims_json = ?, scheduled_deletion_at_ms = ?, photo_url = ?
      WHERE project_id = ? AND local_id = ?
      """, Array(all[2...]) + [all[0], all[1]])
  }

  public static func get(_ db: Database, projectID: String, localID: String) throws -> AccountRecord? {
    try db.queryOne(
      "SELECT \(columns) FROM accounts WHERE project_id = ? AND local_id = ?",
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
      SELECT provider_id, raw_id, email, display_name, photo_url FROM provider_identities
      INDEXED BY identities_by_account
      WHERE project_id = ? AND local_id = ? ORDER BY provider_id
      """, [.text(projectID), .text(localID)]
    ).map {
      IdentityRecord(
        providerID: try $0.string(0), rawID: try $0.string(1), email: try $0.string(2),
        displayName: try $0.string(3), photoURL: try $0.string(4))
    }
  }

  public static func insertIdentity(
    _ db: Database, projectID: String, localID: String, _ identity: IdentityRecord
  ) throws {
    try db.execute(
      """
      INSERT INTO provider_identities
        (project_id, provider_id, raw_id, local_id, email, display_name, photo_url)
      VALUES (?,?,?,?,?,?,?)
      """,
      [
        .text(projectID), .text(identity.providerID), .text(identity.rawID), .text(localID),
        .text(identity.email), .text(identity.displayName), .text(identity.photoURL),
      ])
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
      "SELECT \(columns) FROM accounts WHERE project_id = ? AND email = ?", [.text(projectID), .text(email)]
    )
    .map(decode)
  }
}
