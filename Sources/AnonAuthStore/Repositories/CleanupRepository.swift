import Dispatch

/// SQL for automatic clean-up (docs/protocol.md §5.5): scheduling anonymous accounts,
/// deleting due ones in small batches, and counting for previews and usage.
public enum CleanupRepository {
  /// Thirty days: an anonymous account's life once clean-up has seen it.
  public static let lifetimeMs: Int64 = 30 * 86_400_000

  /// Schedules the unscheduled anonymous accounts among the next `limit` accounts after
  /// `afterLocalID` (keyset order), at `max(created_at, enabledAt) + 30 days`.
  /// - Returns: the last local id looked at (nil when the project is done) and how many
  ///   were scheduled.
  public static func scheduleBatch(
    _ db: Database, projectID: String, enabledAtMs: Int64, afterLocalID: String, limit: Int
  ) throws -> (last: String?, scheduled: Int) {
    let keys = try db.query(
      "SELECT local_id FROM accounts WHERE project_id = ? AND local_id > ? ORDER BY local_id LIMIT ?",
      [.text(projectID), .text(afterLocalID), .integer(Int64(limit))]
    ).map { try $0.string(0) }
    guard let last = keys.last, let first = keys.first else { return (nil, 0) }
    try db.execute(
      """
      UPDATE accounts SET scheduled_deletion_at_ms = max(created_at_ms, ?) + ?
      WHERE project_id = ? AND local_id >= ? AND local_id <= ? AND is_anonymous = 1
        AND scheduled_deletion_at_ms = 0
      """,
      [.integer(enabledAtMs), .integer(lifetimeMs), .text(projectID), .text(first), .text(last)])
    return (keys.count < limit ? nil : last, db.changes)
  }

  /// Deletes up to `limit` anonymous accounts due at `nowMs` (of one project, or of all),
  /// with their identities and refresh tokens, and counts them in `cleanup_stats`; it
  /// stops early once `budgetNanoseconds` have gone (after one deletion at least), so a
  /// job holds the writer for about that long however slow deletions are on this store.
  /// - Returns: how many were deleted per project, and how many due accounts were found
  ///   (fewer than `limit`: nothing more is due).
  public static func deleteDueBatch(
    _ db: Database, projectID: String?, nowMs: Int64, limit: Int, budgetNanoseconds: UInt64 = .max
  ) throws -> (deleted: [String: Int], found: Int) {
    let started = DispatchTime.now().uptimeNanoseconds
    var args: [SQLValue] = [.integer(nowMs)]
    if let projectID { args.append(.text(projectID)) }
    args.append(.integer(Int64(limit)))
    let sql = dueQuery(projectScoped: projectID != nil)
    let due = try db.query(sql, args).map { (try $0.string(0), try $0.string(1)) }
    var counts: [String: Int] = [:]
    for (project, localID) in due {
      try db.execute(deleteQuery, [.text(project), .text(localID)])
      counts[project, default: 0] += db.changes
      if DispatchTime.now().uptimeNanoseconds &- started >= budgetNanoseconds { break }
    }
    for (project, count) in counts where count > 0 {
      try db.execute(
        """
        INSERT INTO cleanup_stats (project_id, cleaned_up_total) VALUES (?, ?)
        ON CONFLICT(project_id) DO UPDATE SET cleaned_up_total = cleaned_up_total + excluded.cleaned_up_total
        """, [.text(project), .integer(Int64(count))])
    }
    return (counts, due.count)
  }

  /// The due accounts, oldest deadline first: `?` now, [project], limit.
  ///
  /// The unary `+` keeps the planner off the primary key and accounts_by_kind for
  /// project_id and is_anonymous: with `project_id = ?` it scanned the project's accounts
  /// in uid order from the start, past every account not yet due, on every batch
  /// (quadratic: 60 deletions a second at 600,000 accounts). The partial index
  /// accounts_by_deletion goes straight to the due ones.
  static func dueQuery(projectScoped: Bool) -> String {
    """
    SELECT project_id, local_id FROM accounts
    WHERE scheduled_deletion_at_ms > 0 AND scheduled_deletion_at_ms <= ? AND +is_anonymous = 1\(
      projectScoped ? " AND +project_id = ?" : "")
    ORDER BY scheduled_deletion_at_ms LIMIT ?
    """
  }

  /// One due account, by primary key. Its sessions and identities go by the foreign keys'
  /// cascades, which search `refresh_sessions_by_account` and `identities_by_account`,
  /// and the trigger `account_counts_delete` updates one row: every step a search by key,
  /// so a deletion costs the same number of B-tree searches in a store of any size.
  static let deleteQuery = "DELETE FROM accounts WHERE project_id = ? AND local_id = ? AND is_anonymous = 1"

  /// Counts for `PreviewCleanup`.
  public static func preview(
    _ db: Database, projectID: String, nowMs: Int64
  ) throws -> (eligibleNow: Int64, scheduledTotal: Int64, scheduledNext30Days: Int64) {
    let row = try db.queryOne(
      """
      SELECT count(*),
        coalesce(sum(CASE WHEN scheduled_deletion_at_ms <= ? THEN 1 ELSE 0 END), 0),
        coalesce(sum(CASE WHEN scheduled_deletion_at_ms <= ? THEN 1 ELSE 0 END), 0)
      FROM accounts
      WHERE project_id = ? AND scheduled_deletion_at_ms > 0 AND is_anonymous = 1
      """, [.integer(nowMs), .integer(nowMs + lifetimeMs), .text(projectID)])
    guard let row else { return (0, 0, 0) }
    return (try row.int64(1), try row.int64(0), try row.int64(2))
  }

  public static func cleanedUpTotal(_ db: Database, projectID: String) throws -> Int64 {
    try db.queryOne("SELECT cleaned_up_total FROM cleanup_stats WHERE project_id = ?", [.text(projectID)])
      .map { try $0.int64(0) } ?? 0
  }
}
