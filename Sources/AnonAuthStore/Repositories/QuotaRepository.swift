/// SQL for the per-IP sign-up quota: a sliding window of admitted sign-ups and the
/// temporary quota schedules.
public enum QuotaRepository {
  /// Sign-ups admitted for this IP key since `sinceMs` with the oldest of them, and the
  /// scheduled quota in force at `nowMs` (the latest started wins), if any: one statement,
  /// since on the replicated store each is a round trip to the leader.
  public static func standing(
    _ db: Database, projectID: String, ipKey: String, sinceMs: Int64, nowMs: Int64
  ) throws -> (count: Int64, oldestMs: Int64?, scheduled: Int64?) {
    let row = try db.queryOne(
      """
      SELECT count(*), min(at_ms),
        (SELECT quota FROM scheduled_quotas WHERE project_id = ?1 AND start_ms <= ?4 AND end_ms > ?4
         ORDER BY start_ms DESC, id DESC LIMIT 1)
      FROM sign_up_events WHERE project_id = ?1 AND ip_key = ?2 AND at_ms > ?3
      """, [.text(projectID), .text(ipKey), .integer(sinceMs), .integer(nowMs)])
    guard let row else { return (0, nil, nil) }
    return (try row.int64(0), try row.optionalInt64(1), try row.optionalInt64(2))
  }

  /// The time of the window's sign-up at `offset` (0: the oldest), if there is one.
  public static func eventTime(
    _ db: Database, projectID: String, ipKey: String, sinceMs: Int64, offset: Int64
  ) throws -> Int64? {
    try db.queryOne(
      """
      SELECT at_ms FROM sign_up_events WHERE project_id = ? AND ip_key = ? AND at_ms > ?
      ORDER BY at_ms LIMIT 1 OFFSET ?
      """, [.text(projectID), .text(ipKey), .integer(sinceMs), .integer(offset)]
    ).map { try $0.int64(0) }
  }

  /// Counts one sign-up at `atMs` unless the window since `sinceMs` already holds the
  /// quota: the scheduled quota in force at `atMs` (the latest started wins), or else
  /// `quota`. The leader decides, in one statement, so the job does not wait for a count;
  /// a refusal fails the job with `refusal()` once it has returned.
  public static func record(
    _ db: Database, projectID: String, ipKey: String, atMs: Int64, sinceMs: Int64, quota: Int64,
    else refusal: @escaping @Sendable () -> any Error
  ) throws {
    try db.executePipelined(
      """
      INSERT INTO sign_up_events (project_id, ip_key, at_ms) SELECT ?1, ?2, ?3
      WHERE (SELECT count(*) FROM sign_up_events WHERE project_id = ?1 AND ip_key = ?2 AND at_ms > ?4)
        < coalesce(
          (SELECT quota FROM scheduled_quotas WHERE project_id = ?1 AND start_ms <= ?3 AND end_ms > ?3
           ORDER BY start_ms DESC, id DESC LIMIT 1), ?5)
      """, [.text(projectID), .text(ipKey), .integer(atMs), .integer(sinceMs), .integer(quota)],
      expectingChanges: 1, else: refusal)
  }

  /// Gives back one place `record` took at `atMs` (a sign-up admitted but then not
  /// carried out through no doing of the caller's).
  public static func forget(_ db: Database, projectID: String, ipKey: String, atMs: Int64) throws {
    try db.execute(
      """
      DELETE FROM sign_up_events WHERE rowid = (SELECT rowid FROM sign_up_events
        WHERE project_id = ? AND ip_key = ? AND at_ms = ? LIMIT 1)
      """,
      [.text(projectID), .text(ipKey), .integer(atMs)])
  }

  /// Drops up to `limit` events that have left every window: the clean-up worker's, every
  /// pass, which keeps the table about an hour of sign-ups. Returns how many went.
  public static func prune(_ db: Database, beforeMs: Int64, limit: Int) throws -> Int {
    try db.execute(
      "DELETE FROM sign_up_events WHERE rowid IN (SELECT rowid FROM sign_up_events WHERE at_ms <= ? LIMIT ?)",
      [.integer(beforeMs), .integer(Int64(limit))])
    return db.changes
  }

  public static func schedule(_ db: Database, projectID: String, quota: Int64, startMs: Int64, endMs: Int64)
    throws
  {
    try db.execute(
      "INSERT INTO scheduled_quotas (project_id, quota, start_ms, end_ms) VALUES (?,?,?,?)",
      [.text(projectID), .integer(quota), .integer(startMs), .integer(endMs)])
  }
}
