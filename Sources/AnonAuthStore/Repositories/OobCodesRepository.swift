/// SQL for email actions' codes (`oob_codes`): stored hashed, spent on use.
public enum OobCodesRepository {
  static let table = OobCodeRecord.table

  static let insertStatement = table.insert()

  static func decode(_ row: Row) throws -> OobCodeRecord { try table.decode(row) }

  /// Stores a new code and spends the older codes of the same kind for the same account
  /// (for a sign-in link with no account: the same email), so only the newest mail works.
  public static func insertReplacing(_ db: Database, _ code: OobCodeRecord) throws {
    if code.localID.isEmpty {
      try db.execute(
        "DELETE FROM oob_codes WHERE project_id = ? AND local_id = '' AND kind = ? AND email = ?",
        [.text(code.projectID), .text(code.kind), .text(code.email)])
    } else {
      try db.execute(
        "DELETE FROM oob_codes WHERE project_id = ? AND local_id = ? AND kind = ?",
        [.text(code.projectID), .text(code.localID), .text(code.kind)])
    }
    try db.execute(insertStatement.sql, insertStatement.arguments(code))
  }

  /// The code with this hash in the project, spent or not yet.
  public static func find(_ db: Database, projectID: String, codeHash: [UInt8]) throws -> OobCodeRecord? {
    try db.queryOne(
      "SELECT \(table.selection) FROM oob_codes WHERE code_hash = ? AND project_id = ?",
      [.blob(codeHash), .text(projectID)]
    ).map(decode)
  }

  /// Spends one code; false when it was spent already (by a concurrent use).
  public static func spend(_ db: Database, codeHash: [UInt8]) throws -> Bool {
    try db.execute("DELETE FROM oob_codes WHERE code_hash = ?", [.blob(codeHash)])
    return db.changes == 1
  }

  /// Spends every code of an account of these kinds (a new password spends the
  /// password-reset codes; a new email every code sent to the old one).
  public static func spendAccount(_ db: Database, projectID: String, localID: String, kinds: [String]) throws
  {
    for kind in kinds {
      try db.execute(
        "DELETE FROM oob_codes WHERE project_id = ? AND local_id = ? AND kind = ?",
        [.text(projectID), .text(localID), .text(kind)])
    }
  }

  /// Drops up to `limit` expired codes; returns how many went.
  public static func prune(_ db: Database, nowMs: Int64, limit: Int) throws -> Int {
    try db.execute(
      "DELETE FROM oob_codes WHERE code_hash IN (SELECT code_hash FROM oob_codes WHERE expires_at_ms <= ? LIMIT ?)",
      [.integer(nowMs), .integer(Int64(limit))])
    return db.changes
  }
}

/// SQL for the durable mail outbox (`mail_outbox`).
public enum MailOutboxRepository {
  static let table = OutboxMail.table

  /// A new mail: its id from SQLite, no attempt yet; only while the outbox has room
  /// (the condition's `?` is the capacity; the size is the row migration 14's triggers
  /// keep, not a count of the outbox).
  static let enqueueStatement = table.insert(
    omitting: ["id", "attempts"], where: "(SELECT count FROM mail_outbox_size WHERE id = 1) < ?")

  static func decode(_ row: Row) throws -> OutboxMail { try table.decode(row) }

  /// Queues a mail unless the outbox already holds `capacity` mails; false then. The
  /// size is one row kept by triggers (migration 14), not a count of the outbox.
  public static func enqueue(_ db: Database, _ mail: OutboxMail, capacity: Int64) throws -> Bool {
    try db.execute(
      enqueueStatement.sql, enqueueStatement.arguments(mail, trailing: [.integer(capacity)]))
    return db.changes == 1
  }

  /// Up to `limit` mails due at `nowMs`, the longest waiting first.
  public static func due(_ db: Database, nowMs: Int64, limit: Int) throws -> [OutboxMail] {
    try db.query(
      "SELECT \(table.selection) FROM mail_outbox WHERE next_attempt_at_ms <= ? ORDER BY next_attempt_at_ms, id LIMIT ?",
      [.integer(nowMs), .integer(Int64(limit))]
    ).map(decode)
  }

  /// When the next mail is due, if any is waiting.
  public static func nextDueMs(_ db: Database) throws -> Int64? {
    try db.queryOne("SELECT min(next_attempt_at_ms) FROM mail_outbox").flatMap { try $0.optionalInt64(0) }
  }

  /// A mail sent, or given up: gone from the outbox.
  public static func remove(_ db: Database, id: Int64) throws {
    try db.execute("DELETE FROM mail_outbox WHERE id = ?", [.integer(id)])
  }

  /// A failed attempt: tried again at `nextAttemptAtMs`.
  public static func postpone(_ db: Database, id: Int64, nextAttemptAtMs: Int64, error: String) throws {
    try db.execute(
      "UPDATE mail_outbox SET attempts = attempts + 1, next_attempt_at_ms = ?, last_error = ? WHERE id = ?",
      [.integer(nextAttemptAtMs), .text(String(error.prefix(500))), .integer(id)])
  }

  /// Mails in the outbox (the size migration 14's triggers keep).
  public static func count(_ db: Database) throws -> Int64 {
    try db.queryOne("SELECT count FROM mail_outbox_size WHERE id = 1").map { try $0.int64(0) } ?? 0
  }
}
