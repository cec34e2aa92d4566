/// SQL for the per-IP sign-up quota: a sliding window of admitted sign-ups, kept as one
/// counter per project, IP key and minute (migration 11), and the temporary quota
/// schedules.
///
/// The window at `sinceMs` holds the sign-ups after `sinceMs`. A minute's row counts in
/// full while its oldest sign-up is in the window, not at all once its newest has left,
/// and in between (the hour's boundary runs through the minute) less the sign-ups at its
/// oldest time, which have left: never fewer than are really in the window, and exact
/// when the minute's sign-ups were at no more than two times. So a sign-up is never let
/// in over the quota; one may wait up to a minute longer than it would with every
/// sign-up's own time. Admission reads at most `maxBuckets` rows, whatever the window
/// holds.
public enum QuotaRepository {
  public static let bucketMs: Int64 = 60_000

  /// The window's rows a statement reads at most: the hour's 61 minutes (the one the
  /// boundary runs through, and now's) and, should the clock step back, the hour after.
  public static let maxBuckets: Int64 = 121

  /// The minute `ms` falls in (floor division: also for times before 1970).
  public static func minute(_ ms: Int64) -> Int64 {
    ms >= 0 ? ms / bucketMs : -((-ms + bucketMs - 1) / bucketMs)
  }

  /// One minute's sign-ups of an IP key.
  public struct Bucket: Sendable, Hashable {
    public var count: Int64
    public var oldestMs: Int64
    /// How many were at `oldestMs` (after a refund of one of them, perhaps fewer).
    public var atOldest: Int64
    /// No sign-up of the minute is later (after a refund, perhaps none is at it).
    public var newestMs: Int64

    public init(count: Int64, oldestMs: Int64, atOldest: Int64, newestMs: Int64) {
      self.count = count
      self.oldestMs = oldestMs
      self.atOldest = atOldest
      self.newestMs = newestMs
    }

    /// What the minute counts in the window after `sinceMs`: the rule `countedSQL`
    /// writes in SQL.
    public func counted(sinceMs: Int64) -> Int64 {
      if newestMs <= sinceMs { return 0 }
      if oldestMs <= sinceMs { return max(0, count - atOldest) }
      return count
    }
  }

  /// `Bucket.counted` over the rows of `sign_up_buckets`, `?4` being `sinceMs`.
  static let countedSQL =
    "CASE WHEN newest_ms <= ?4 THEN 0 WHEN oldest_ms <= ?4 THEN max(0, count - at_oldest) ELSE count END"

  /// `standing`'s statement: the scheduled quota in a row of its own, then the window's
  /// minutes.
  static let standingSQL =
    """
    SELECT (SELECT quota FROM scheduled_quotas WHERE project_id = ?1 AND start_ms <= ?3 AND end_ms > ?3
            ORDER BY start_ms DESC, id DESC LIMIT 1), NULL, NULL, NULL, NULL, NULL
    UNION ALL
    SELECT NULL, minute, count, oldest_ms, at_oldest, newest_ms FROM sign_up_buckets
    WHERE project_id = ?1 AND ip_key = ?2 AND minute BETWEEN ?4 AND ?5
    """

  /// `record`'s statement: an upsert of the minute's row whose SELECT yields a row only
  /// while the window's minutes (a bounded range of the primary key) count fewer than
  /// the quota in force.
  static let recordSQL =
    """
    INSERT INTO sign_up_buckets (project_id, ip_key, minute, count, oldest_ms, at_oldest, newest_ms)
    SELECT ?1, ?2, ?6, 1, ?3, 1, ?3
    WHERE (SELECT coalesce(sum(\(countedSQL)), 0) FROM sign_up_buckets
           WHERE project_id = ?1 AND ip_key = ?2 AND minute BETWEEN ?7 AND ?8)
      < coalesce(
        (SELECT quota FROM scheduled_quotas WHERE project_id = ?1 AND start_ms <= ?3 AND end_ms > ?3
         ORDER BY start_ms DESC, id DESC LIMIT 1), ?5)
    ON CONFLICT (project_id, ip_key, minute) DO UPDATE SET
      count = count + 1,
      at_oldest = CASE WHEN excluded.oldest_ms < oldest_ms THEN 1
                       WHEN excluded.oldest_ms = oldest_ms THEN at_oldest + 1 ELSE at_oldest END,
      oldest_ms = min(oldest_ms, excluded.oldest_ms),
      newest_ms = max(newest_ms, excluded.newest_ms)
    """

  /// An IP key's window: its minutes (oldest first) and the scheduled quota in force.
  public struct Window: Sendable {
    public var buckets: [Bucket]
    /// The scheduled quota in force at the time read (the latest started wins), if any.
    public var scheduled: Int64?

    public init(buckets: [Bucket], scheduled: Int64?) {
      self.buckets = buckets
      self.scheduled = scheduled
    }

    /// Sign-ups the window after `sinceMs` counts.
    public func count(sinceMs: Int64) -> Int64 {
      buckets.reduce(0) { $0 + $1.counted(sinceMs: sinceMs) }
    }

    /// The earliest boundary at or after `sinceMs` at which the window counts fewer than
    /// `quota`: a sign-up is let in once the hour's start has passed it. The count only
    /// falls when the boundary passes a minute's oldest or newest sign-up.
    public func roomSinceMs(quota: Int64, sinceMs: Int64) -> Int64 {
      if count(sinceMs: sinceMs) < quota { return sinceMs }
      let times = buckets.flatMap { [$0.oldestMs, $0.newestMs] }.filter { $0 > sinceMs }.sorted()
      for time in times where count(sinceMs: time) < quota { return time }
      return times.last ?? sinceMs
    }
  }

  /// The window of this IP key after `sinceMs` and the scheduled quota in force at
  /// `nowMs`: one statement, since on the replicated store each is a round trip to the
  /// leader. At most `maxBuckets` rows.
  public static func standing(
    _ db: Database, projectID: String, ipKey: String, sinceMs: Int64, nowMs: Int64
  ) throws -> Window {
    let first = minute(sinceMs)
    let rows = try db.query(
      standingSQL,
      [.text(projectID), .text(ipKey), .integer(nowMs), .integer(first), .integer(first + maxBuckets - 1)])
    var window = Window(buckets: [], scheduled: nil)
    var minutes: [(Int64, Bucket)] = []
    for row in rows {
      guard let minute = try row.optionalInt64(1) else {
        window.scheduled = try row.optionalInt64(0)
        continue
      }
      minutes.append(
        (
          minute,
          Bucket(
            count: try row.int64(2), oldestMs: try row.int64(3), atOldest: try row.int64(4),
            newestMs: try row.int64(5))
        ))
    }
    window.buckets = minutes.sorted { $0.0 < $1.0 }.map(\.1)
    return window
  }

  /// Counts one sign-up at `atMs` unless the window after `sinceMs` already holds the
  /// quota: the scheduled quota in force at `atMs` (the latest started wins), or else
  /// `quota`. The leader decides, in one statement (an upsert of the minute's row whose
  /// SELECT sums at most `maxBuckets` rows), so the job does not wait for a count; a
  /// refusal fails the job with `refusal()` once it has returned.
  public static func record(
    _ db: Database, projectID: String, ipKey: String, atMs: Int64, sinceMs: Int64, quota: Int64,
    else refusal: @escaping @Sendable () -> any Error
  ) throws {
    let first = minute(sinceMs)
    try db.executePipelined(
      recordSQL,
      [
        .text(projectID), .text(ipKey), .integer(atMs), .integer(sinceMs), .integer(quota),
        .integer(minute(atMs)), .integer(first), .integer(first + maxBuckets - 1),
      ],
      expectingChanges: 1, else: refusal)
  }

  /// Gives back one place `record` took at `atMs` (a sign-up admitted but then not
  /// carried out through no doing of the caller's). The minute's oldest and newest stay:
  /// one at the oldest time fewer is known to be there.
  public static func forget(_ db: Database, projectID: String, ipKey: String, atMs: Int64) throws {
    try db.execute(
      """
      UPDATE sign_up_buckets SET count = count - 1,
        at_oldest = CASE WHEN oldest_ms = ?3 AND at_oldest > 0 THEN at_oldest - 1 ELSE at_oldest END
      WHERE project_id = ?1 AND ip_key = ?2 AND minute = ?4 AND count > 0
      """,
      [.text(projectID), .text(ipKey), .integer(atMs), .integer(minute(atMs))])
  }

  /// Drops up to `limit` minutes whose every sign-up is at or before `beforeMs` (has left
  /// every window): the clean-up worker's, every pass, which keeps the table about an
  /// hour of minutes per address. Returns how many went.
  public static func prune(_ db: Database, beforeMs: Int64, limit: Int) throws -> Int {
    try db.execute(
      """
      DELETE FROM sign_up_buckets WHERE (project_id, ip_key, minute) IN
        (SELECT project_id, ip_key, minute FROM sign_up_buckets WHERE minute <= ?1 AND newest_ms <= ?2 LIMIT ?3)
      """,
      [.integer(minute(beforeMs)), .integer(beforeMs), .integer(Int64(limit))])
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
